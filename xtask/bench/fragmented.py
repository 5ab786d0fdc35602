"""The bench's 100-fragment sparse array, written once by libtiledb
(TileDB-Py 0.36.1): 100 writes of 20,000 random cells of a 2-D int64
domain, float64 (ZSTD) and int32 (LZ4) attributes, some cells rewritten
by later writes. The consolidation benchmarks share it."""
import os

import numpy as np
import tiledb


def sparse_100_fragments(bench):
    """The array's path under BENCH_DIR, written there if it is not yet."""
    path = os.path.join(bench, "sparse_100_fragments")
    if os.path.exists(path):
        return path
    rng = np.random.default_rng(20261124)
    dom = tiledb.Domain(
        tiledb.Dim("x", domain=(0, 99_999), tile=1000, dtype=np.int64),
        tiledb.Dim("y", domain=(0, 99_999), tile=1000, dtype=np.int64),
    )
    schema = tiledb.ArraySchema(
        domain=dom,
        sparse=True,
        capacity=10_000,
        attrs=[
            tiledb.Attr("v", dtype=np.float64, filters=tiledb.FilterList([tiledb.ZstdFilter()])),
            tiledb.Attr("k", dtype=np.int32, filters=tiledb.FilterList([tiledb.LZ4Filter()])),
        ],
    )
    tiledb.Array.create(path, schema)
    for t in range(1, 101):
        n = 20_000
        x = rng.integers(0, 100_000, n)
        y = rng.integers(0, 100_000, n)
        # Unique coordinates within a write; later writes rewrite some.
        xy = np.unique(np.stack([x, y], 1), axis=0)
        with tiledb.open(path, "w", timestamp=t) as A:
            A[xy[:, 0], xy[:, 1]] = {"v": rng.normal(0, 1, len(xy)), "k": rng.integers(0, 1000, len(xy), dtype=np.int32)}
    return path
