"""Benchmark arrays for `cargo xtask bench` (TileDB-Py 0.36.1), deterministic.

Usage: generate.py OUT_DIR SCALE   (SCALE 1 = the sizes the benchmark issue
names; 0.25 quarters each side or count, for quick runs).
"""
import os
import sys

import numpy as np
import tiledb

out, scale = sys.argv[1], float(sys.argv[2])
rng = np.random.default_rng(20261121)
os.makedirs(out, exist_ok=True)


def side(n):
    return max(1024, int(n * scale) // 1024 * 1024)


def dense(name, n, tile, dtype, filters, data_fn, fragments=None):
    uri = os.path.join(out, name)
    if os.path.exists(uri):
        return
    dom = tiledb.Domain(
        tiledb.Dim("r", domain=(0, n - 1), tile=tile, dtype=np.int64),
        tiledb.Dim("c", domain=(0, n - 1), tile=tile, dtype=np.int64),
    )
    schema = tiledb.ArraySchema(
        domain=dom,
        sparse=False,
        attrs=[tiledb.Attr("a", dtype=dtype, filters=tiledb.FilterList(filters))],
    )
    tiledb.Array.create(uri, schema)
    for (r0, r1, c0, c1), ts in fragments or [((0, n, 0, n), 1)]:
        with tiledb.open(uri, "w", timestamp=ts) as A:
            A[r0:r1, c0:c1] = data_fn(r1 - r0, c1 - c0)


def smooth(rows, cols):
    y, x = np.mgrid[0:rows, 0:cols]
    return (np.sin(x / 500.0) * np.cos(y / 700.0) * 1000 + rng.normal(0, 1, (rows, cols))).astype(
        np.float64
    )


n = side(8192)
dense("dense_f64_zstd", n, 1024, np.float64, [tiledb.ZstdFilter(level=3)], smooth)
dense(
    "dense_i32_raw",
    n,
    1024,
    np.int32,
    [],
    lambda r, c: rng.integers(-(2**31), 2**31 - 1, (r, c), dtype=np.int32),
)
m = side(4096)
bands = [((i * m // 16, (i + 1) * m // 16, 0, m), i + 1) for i in range(16)]
updates = [((k * m // 5, k * m // 5 + m // 4, m // 8, m // 8 + m // 4), 17 + k) for k in range(4)]
dense(
    "dense_f32_fragments",
    m,
    256,
    np.float32,
    [tiledb.ZstdFilter(level=3)],
    lambda r, c: rng.normal(0, 1, (r, c)).astype(np.float32),
    bands + updates,
)

uri = os.path.join(out, "sparse_2d")
if not os.path.exists(uri):
    cells = int(10_000_000 * scale * scale)
    dom = tiledb.Domain(
        tiledb.Dim("x", domain=(0, 2**40), tile=2**34, dtype=np.int64),
        tiledb.Dim("y", domain=(0, 2**40), tile=2**34, dtype=np.int64),
    )
    schema = tiledb.ArraySchema(
        domain=dom,
        sparse=True,
        capacity=100_000,
        attrs=[
            tiledb.Attr("v", dtype=np.float64, filters=tiledb.FilterList([tiledb.ZstdFilter()])),
            tiledb.Attr(
                "k",
                dtype=np.int32,
                filters=tiledb.FilterList([tiledb.ByteShuffleFilter(), tiledb.LZ4Filter()]),
            ),
        ],
    )
    tiledb.Array.create(uri, schema)
    x = rng.integers(0, 2**40, cells, dtype=np.int64)
    y = rng.integers(0, 2**40, cells, dtype=np.int64)
    with tiledb.open(uri, "w") as A:
        A[x, y] = {"v": rng.normal(0, 1, cells), "k": rng.integers(0, 1000, cells, dtype=np.int32)}

uri = os.path.join(out, "sparse_strings")
if not os.path.exists(uri):
    cells = int(2_000_000 * scale * scale)
    dom = tiledb.Domain(tiledb.Dim("i", domain=(0, 2**62), tile=2**50, dtype=np.int64))
    schema = tiledb.ArraySchema(
        domain=dom,
        sparse=True,
        capacity=100_000,
        attrs=[
            tiledb.Attr(
                "s", dtype=str, var=True, filters=tiledb.FilterList([tiledb.ZstdFilter()])
            )
        ],
    )
    tiledb.Array.create(uri, schema)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyzé中 "))
    lens = rng.integers(5, 41, cells)
    chars = rng.choice(alphabet, int(lens.sum()))
    ends = np.cumsum(lens)
    strs = np.array(["".join(chars[e - l : e]) for e, l in zip(ends, lens)], dtype=object)
    with tiledb.open(uri, "w") as A:
        A[np.sort(rng.choice(2**62, cells, replace=False))] = {"s": strs}
uri = os.path.join(out, "sparse_fragments")
if not os.path.exists(uri):
    # Ten fragments of random cells over one small domain, duplicates not
    # allowed: a read keeps each coordinate's newest cell (deduplication).
    n = max(1000, int(2000 * scale))
    cells = int(1_000_000 * scale * scale)
    dom = tiledb.Domain(
        tiledb.Dim("x", domain=(0, n - 1), tile=n // 4, dtype=np.int64),
        tiledb.Dim("y", domain=(0, n - 1), tile=n // 4, dtype=np.int64),
    )
    schema = tiledb.ArraySchema(
        domain=dom,
        sparse=True,
        capacity=100_000,
        allows_duplicates=False,
        attrs=[tiledb.Attr("v", dtype=np.float64, filters=tiledb.FilterList([tiledb.ZstdFilter(level=1)]))],
    )
    tiledb.Array.create(uri, schema)
    for f in range(10):
        k = rng.choice(n * n, cells, replace=False)
        with tiledb.open(uri, "w", timestamp=f + 1) as A:
            A[k // n, k % n] = {"v": rng.random(cells)}
print("arrays ready in", out)
