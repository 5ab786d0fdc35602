"""Writes from Python, read back by real libtiledb (TileDB-Py 0.36.1)."""

import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import tiledb

import tessera
from conftest import TESTDATA, canonical, contract_rows

SPARSE = tessera.Schema(
    sparse=True,
    dims=[tessera.Dimension("x", "INT64", (0, 999)), tessera.Dimension("name", "STRING_ASCII")],
    attrs=[
        tessera.Attribute("v", "FLOAT64", filters=[tessera.Filter("zstd", level=3)]),
        tessera.Attribute("s", "STRING_UTF8", var=True, nullable=True),
    ],
    capacity=100,
)


def test_sparse_write_read_by_tiledb_py(scratch):
    uri = str(scratch / "a")
    tessera.create(uri, SPARSE)
    n = 500
    rng = np.random.default_rng(7)
    x = rng.permutation(n)
    df = pd.DataFrame({
        "x": x.astype(np.int64),
        "name": [f"n{i % 7}" for i in x],
        "v": x * 0.5,
        "s": [None if i % 5 == 0 else f"s{i}" for i in x],
    })
    names = tessera.write(uri, df, timestamp=5)
    assert len(names) == 1 and names[0].startswith("__5_5_")
    with tiledb.open(uri) as T:
        got = T.df[:]
    got = got.sort_values(["x", "name"]).reset_index(drop=True)
    want = df.sort_values(["x", "name"]).reset_index(drop=True)
    np.testing.assert_array_equal(got["x"], want["x"])
    assert list(got["name"]) == list(want["name"])
    np.testing.assert_array_equal(got["v"], want["v"])
    assert [None if (isinstance(v, float) or v is None) else v for v in got["s"]] == list(want["s"])
    # And tessera reads what it wrote.
    assert tessera.open(uri).read().num_rows == n


def test_dense_write_read_by_tiledb_py(scratch):
    uri = str(scratch / "d")
    tessera.create(uri, tessera.Schema(
        dims=[tessera.Dimension("r", "INT32", (0, 9), 5), tessera.Dimension("c", "INT32", (0, 9), 5)],
        attrs=[tessera.Attribute("a", "INT32")],
    ))
    r, c = np.meshgrid(np.arange(2, 6, dtype=np.int32), np.arange(0, 10, dtype=np.int32), indexing="ij")
    tessera.open(uri).write(pa.table({"r": r.ravel(), "c": c.ravel(), "a": (r * 10 + c).ravel()}))
    with tiledb.open(uri) as T:
        np.testing.assert_array_equal(T[2:6, 0:10]["a"], r * 10 + c)


def test_copy_of_a_fixture_reads_the_same_in_tiledb_py(scratch):
    """tessera's read of a fixture, written by tessera into a new array with
    the same schema, is what TileDB-Py reads from the original."""
    src = str(TESTDATA / "tiledb-0.36.1" / "sparse_strings" / "array")
    A = tessera.open(src)
    dst = str(scratch / "copy")
    tessera.create(dst, A.schema)
    tessera.write(dst, A.read())
    with tiledb.open(src) as T1, tiledb.open(dst) as T2:
        a, b = T1.df[:], T2.df[:]
    key = list(a.columns)
    pd.testing.assert_frame_equal(a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True))


def test_write_refusals_leave_nothing_visible(scratch):
    uri = str(scratch / "a")
    tessera.create(uri, SPARSE)
    with pytest.raises(tessera.TesseraError, match="x"):
        tessera.write(uri, pa.table({"x": pa.array([5000], pa.int64()), "name": ["a"], "v": [1.0], "s": ["z"]}))
    with pytest.raises(tessera.TesseraError):
        tessera.write(uri, {"x": np.array([1], np.int64), "v": [1.0]})
    assert tessera.open(uri).fragments == []
    with tiledb.open(uri) as T:
        assert len(T.df[:]) == 0
    with pytest.raises(TypeError):
        tessera.write(uri, 42)


def test_duplicates_are_refused_kept_or_dropped_as_asked(scratch):
    """Cells twice at one coordinate: refused (nothing visible, the
    coordinates named), all kept, or the first kept; TileDB-Py reads the
    cells written."""
    cells = {"x": np.array([3, 1, 3], np.int64), "name": ["a", "b", "a"], "v": [1.0, 2.0, 3.0], "s": ["p", "q", "r"]}
    for duplicates, want in [("keep", [(1, 2.0), (3, 1.0), (3, 3.0)]), ("drop", [(1, 2.0), (3, 1.0)])]:
        uri = str(scratch / duplicates)
        tessera.create(uri, SPARSE)
        with pytest.raises(tessera.TesseraError, match='two cells at x = 3, name = "a"'):
            tessera.write(uri, cells)
        assert tessera.open(uri).fragments == []
        tessera.write(uri, cells, duplicates=duplicates)
        with tiledb.open(uri) as T:
            got = T[:]
        assert sorted(zip(got["x"].tolist(), got["v"].tolist())) == want
    with pytest.raises(tessera.TesseraError, match="refuse, keep or drop"):
        tessera.write(uri, cells, duplicates="ignore")


def test_dense_box_write_read_by_tiledb_py(scratch):
    """A dense write given as a box and attributes only (no coordinates),
    as TileDB-Py's ``A[2:6, 0:10] = data`` takes it."""
    uri = str(scratch / "box")
    tessera.create(uri, tessera.Schema(
        dims=[tessera.Dimension("r", "INT32", (0, 9), 5), tessera.Dimension("c", "INT32", (0, 9), 5)],
        attrs=[
            tessera.Attribute("a", "FLOAT64", filters=[tessera.Filter("zstd", level=3)]),
            tessera.Attribute("n", "INT32", nullable=True),
        ],
    ))
    a = np.arange(40, dtype=np.float64).reshape(4, 10) / 4
    n = pa.array([None if i % 3 == 0 else i for i in range(40)], pa.int32())
    names = tessera.open(uri).write({"a": a, "n": n}, subarray={"c": (0, 9), "r": (2, 5)})
    assert len(names) == 1
    with tiledb.open(uri) as T:
        got = T[2:6, 0:10]
        np.testing.assert_array_equal(got["a"], a)
    # The same box by position, in two record batches, into a second array.
    uri2 = str(scratch / "box2")
    tessera.create(uri2, tessera.open(uri).schema)
    t = pa.table({"a": a.ravel(), "n": n})
    tessera.write(uri2, pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=15)), subarray=[(2, 5), (0, 9)])
    np.testing.assert_array_equal(tessera.open(uri2)[2:6, 0:10]["a"], a)
    with tiledb.open(uri2) as T:
        np.testing.assert_array_equal(T[2:6, 0:10]["a"], a)
        np.testing.assert_array_equal(T.query(attrs=["n"])[2:6, 0:10]["n"].ravel(), n.to_numpy(zero_copy_only=False))
    with pytest.raises(ValueError, match="lacks dimensions"):
        tessera.write(uri2, {"a": a}, subarray={"r": (2, 5)})
    with pytest.raises(tessera.TesseraError, match="does not hold"):
        tessera.write(uri2, {"a": a}, subarray=[(2, 4), (0, 9)])
    assert len(tessera.open(uri2).fragments) == 1
    # A budget too small for the box: written a row of tiles at a time,
    # straight from the batch's rows, one fragment all the same.
    uri3 = str(scratch / "box3")
    tessera.create(uri3, tessera.open(uri).schema)
    assert len(tessera.write(uri3, {"a": a, "n": n}, subarray=[(2, 5), (0, 9)], budget=1200)) == 1
    with tiledb.open(uri3) as T:
        np.testing.assert_array_equal(T[2:6, 0:10]["a"], a)
        np.testing.assert_array_equal(T.query(attrs=["n"])[2:6, 0:10]["n"].ravel(), n.to_numpy(zero_copy_only=False))
    # The same files as the box written whole: data files byte for byte,
    # the metadata (naming each array's own schema) as long.
    whole, banded = (os.path.join(u, "__fragments", os.listdir(os.path.join(u, "__fragments"))[0]) for u in (uri2, uri3))
    assert sorted(os.listdir(whole)) == sorted(os.listdir(banded))
    for name in os.listdir(whole):
        with open(os.path.join(whole, name), "rb") as w, open(os.path.join(banded, name), "rb") as b:
            w, b = w.read(), b.read()
            assert (len(w), w if name.startswith("a") else 0) == (len(b), b if name.startswith("a") else 0), name
