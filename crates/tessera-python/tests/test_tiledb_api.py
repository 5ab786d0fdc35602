"""What ``tessera.tiledb`` writes, read back by the real TileDB-Py
(libtiledb, from PyPI): dense and sparse arrays of many types, written
with TileDB-Py's own calls on tessera, give TileDB-Py the same cells,
schema and metadata; groups and their metadata too."""

import numpy as np
import pytest

import tessera
import tessera.tiledb as ttiledb
from conftest import TESTDATA, cases

import tiledb  # real libtiledb, from PyPI


def _dense(uri, lib):
    dom = lib.Domain(lib.Dim("r", domain=(0, 3), tile=2, dtype=np.int64),
                     lib.Dim("c", domain=(0, 4), tile=5, dtype=np.int64))
    attrs = [lib.Attr("f", dtype=np.float64, filters=lib.FilterList([lib.ZstdFilter(3)])),
             lib.Attr("i", dtype=np.int32), lib.Attr("s", dtype=str), lib.Attr("z", dtype=np.complex64)]
    lib.Array.create(uri, lib.ArraySchema(domain=dom, attrs=attrs))
    f = np.arange(20.0).reshape(4, 5)
    with lib.open(uri, "w") as A:
        A[:] = {"f": f, "i": f.astype(np.int32) * 2, "s": np.array([f"v{k}" for k in range(20)], dtype=object)
                .reshape(4, 5), "z": (f + 1j * f).astype(np.complex64)}
    with lib.open(uri, "w") as A:
        A[1:3, 0:2] = {"f": np.full((2, 2), -1.0), "i": np.full((2, 2), 7, dtype=np.int32),
                       "s": np.array([["a", "bb"], ["ccc", ""]], dtype=object),
                       "z": np.zeros((2, 2), dtype=np.complex64)}
        A.meta["unit"] = "m"
        A.meta["scale"] = 2.5


def _sparse(uri, lib):
    dom = lib.Domain(lib.Dim("x", domain=(0, 99), tile=10, dtype=np.int64),
                     lib.Dim("name", dtype="ascii"))
    attrs = [lib.Attr("v", dtype=np.float32), lib.Attr("n", dtype=np.int16, nullable=True)]
    lib.Array.create(uri, lib.ArraySchema(domain=dom, attrs=attrs, sparse=True, capacity=4))
    with lib.open(uri, "w") as A:
        A[[5, 1, 9, 1], ["b", "a", "c", "z"]] = {"v": np.array([1.5, 2.5, 3.5, 4.5], dtype=np.float32),
                                                 "n": np.array([1, 2, 3, 4], dtype=np.int16)}


@pytest.mark.parametrize("make", [_dense, _sparse])
def test_tiledb_py_reads_what_tessera_tiledb_writes(tmp_path, make):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    make(ours, ttiledb)
    make(theirs, tiledb)
    with tiledb.open(ours) as a, tiledb.open(theirs) as b:
        assert a.schema == b.schema
        got, want = a[:], b[:]
        assert list(got) == list(want)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=k)
        assert dict(a.meta) == dict(b.meta)
        assert a.nonempty_domain() == b.nonempty_domain()
    # And tessera.tiledb reads both as TileDB-Py does.
    for uri in (ours, theirs):
        with ttiledb.open(uri) as a, tiledb.open(theirs) as b:
            got, want = a[:], b[:]
            for k in want:
                np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def test_tiledb_py_reads_tessera_tiledb_groups(tmp_path):
    root, arr = str(tmp_path / "g"), str(tmp_path / "g" / "a")
    ttiledb.Group.create(root)
    ttiledb.from_numpy(arr, np.arange(6, dtype=np.int32))
    with ttiledb.Group(root, "w") as g:
        g.add(arr, name="a")
        g.meta["owner"] = "tessera"
    with tiledb.Group(root) as g:
        assert [m.name for m in g] == ["a"]
        assert g.meta["owner"] == "tessera"
        assert tiledb.object_type(g["a"].uri) == "array"
    with tiledb.open(arr) as A:
        np.testing.assert_array_equal(A[:], np.arange(6, dtype=np.int32))


def test_object_type_says_what_tiledb_py_says(tmp_path):
    """An array, a group, a plain file and nothing: the same answers."""
    root = tmp_path / "g"
    ttiledb.Group.create(str(root))
    ttiledb.from_numpy(str(root / "a"), np.arange(3, dtype=np.int32))
    (tmp_path / "notes.txt").write_text("not TileDB")
    for p in (root, root / "a", tmp_path / "notes.txt", tmp_path / "missing", tmp_path):
        for uri in (str(p), f"file://{p}"):
            assert ttiledb.object_type(uri) == tiledb.object_type(uri), uri


def test_errors_are_tiledb_errors(tmp_path):
    with pytest.raises(ttiledb.TileDBError) as e:
        ttiledb.open(str(tmp_path / "missing"))
    assert isinstance(e.value, __import__("tessera").TesseraError)


def test_the_module_example_runs():
    import doctest

    assert doctest.testmod(ttiledb, raise_on_error=False).failed == 0


def test_tiledb_py_reads_tessera_tiledb_frames_and_consolidations(tmp_path):
    """A frame from_pandas wrote, and an array consolidated and vacuumed
    by tessera.tiledb, read by TileDB-Py as the same data."""
    import pandas as pd

    df = pd.DataFrame({"x": np.arange(6, dtype=np.int64), "name": list("abcdef"),
                       "n": pd.array([1, None, 3, 4, None, 6], dtype="Int32")})
    uri = str(tmp_path / "frame")
    ttiledb.from_pandas(uri, df, sparse=True, index_dims=["x"])
    theirs = tiledb.open_dataframe(uri).sort_index()
    pd.testing.assert_frame_equal(theirs, df.set_index("x"), check_dtype=False)
    pd.testing.assert_frame_equal(ttiledb.open_dataframe(uri).sort_index(), theirs)

    uri = str(tmp_path / "consolidated")
    ttiledb.from_numpy(uri, np.zeros(6, dtype=np.int32), timestamp=1)
    for i in range(3):
        with ttiledb.open(uri, "w", timestamp=10 + i) as A:
            A[i:i + 1] = np.array([i + 1], dtype=np.int32)
    ttiledb.consolidate(uri)
    ttiledb.vacuum(uri)
    assert len(tiledb.array_fragments(uri)) == 1
    with tiledb.open(uri) as A:
        np.testing.assert_array_equal(A[:], [1, 2, 3, 0, 0, 0])


def test_tiledb_py_reads_evolutions_deletes_and_metadata(tmp_path):
    """An evolved schema, cells deleted through Query.submit, metadata of
    TileDB-Py's numpy kinds and consolidated group metadata, all written
    by tessera.tiledb, as TileDB-Py reads them; and TileDB-Py's own
    numpy metadata as tessera.tiledb reads it."""
    uri = str(tmp_path / "evolved")
    dom = ttiledb.Domain(ttiledb.Dim("d", domain=(1, 4), tile=4, dtype=np.int64))
    ttiledb.Array.create(uri, ttiledb.ArraySchema(domain=dom, attrs=[ttiledb.Attr("a", dtype=np.int32)],
                                                  sparse=True))
    with ttiledb.open(uri, "w") as A:
        A[np.arange(1, 5)] = np.arange(10, 14, dtype=np.int32)
        A.meta["grid"] = np.arange(6.0).reshape(2, 3)
        A.meta["chars"] = np.array(["x", "é"], dtype="U1")
    se = ttiledb.ArraySchemaEvolution()
    se.add_enumeration(ttiledb.Enumeration("e", False, ["lo", "hi"]))
    se.add_attribute(ttiledb.Attr("k", dtype=np.int8, enum_label="e", fill=1))
    se.array_evolve(uri)
    with ttiledb.open(uri, "d") as A:
        A.query(cond="attr('a') < 12 or d == 4").submit()
    with tiledb.open(uri) as A:
        assert A.schema.attr("k").enum_label == "e"
        np.testing.assert_array_equal(A[:]["a"], [12])
        np.testing.assert_array_equal(A.meta["grid"], np.arange(6.0).reshape(2, 3))
        np.testing.assert_array_equal(A.meta["chars"], np.array(["x", "é"], dtype="U1"))

    group = str(tmp_path / "group")
    tiledb.Group.create(group)
    for i in range(3):
        with tiledb.Group(group, "w") as G:
            G.meta["n"] = i
            G.meta["u"] = np.array(["a", "", "b"], dtype="U1")
    ttiledb.Group.consolidate_metadata(group)
    ttiledb.Group.vacuum_metadata(group)
    with tiledb.Group(group) as G:
        assert G.meta["n"] == 2
    with ttiledb.Group(group) as G:
        np.testing.assert_array_equal(G.meta["u"], np.array(["a", "", "b"], dtype="U1"))
    assert len(list((tmp_path / "group" / "__meta").iterdir())) == 1


def _labelled(uri, lib):
    """A dense array with labels on both dimensions (numbers, text,
    both orders), written cells and labels together."""
    rows = lib.Dim("r", domain=(0, 5), tile=3, dtype=np.int64)
    cols = lib.Dim("c", domain=(0, 3), tile=4, dtype=np.int64)
    labels = {0: {"depth": rows.create_label_schema("increasing", np.float64,
                                                    filters=[lib.ZstdFilter(5)]),
                  "code": rows.create_label_schema("decreasing", np.bytes_)},
              1: {"year": cols.create_label_schema("increasing", np.int32, tile=2)}}
    schema = lib.ArraySchema(domain=lib.Domain(rows, cols), attrs=[lib.Attr("v", dtype=np.int32)],
                             dim_labels=labels)
    lib.Array.create(uri, schema)
    with lib.open(uri, "w") as A:
        A[:] = {"v": np.arange(24, dtype=np.int32).reshape(6, 4), "depth": np.linspace(0.0, 2.5, 6),
                "code": np.array([b"f", b"e", b"d", b"c", b"b", b"a"]),
                "year": np.array([2020, 2021, 2022, 2023], dtype=np.int32)}


def test_tiledb_py_reads_and_writes_tessera_tiledb_labels(tmp_path):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _labelled(ours, ttiledb)
    _labelled(theirs, tiledb)
    for lib_a in (tiledb, ttiledb):
        for uri in (ours, theirs):
            with lib_a.open(uri) as A:
                got = A.label_index(["depth", "year"])[0.4:1.5, 2021:2022]
                np.testing.assert_array_equal(got["v"], np.array([[5, 6], [9, 10], [13, 14]], dtype=np.int32))
                np.testing.assert_array_equal(got["depth"], [0.5, 1.0, 1.5])
                np.testing.assert_array_equal(got["year"], [2021, 2022])
                got = A.label_index(["code"])[b"b":b"d"]
                np.testing.assert_array_equal(got["v"][:, 0], [8, 12, 16])
                assert [bytes(x) for x in got["code"]] == [b"d", b"c", b"b"]
                label = A.schema.dim_label("year")
                assert (label.dim_index, label.order, label.label_attr_name) == (1, "increasing", "label")
    with tiledb.open(ours) as a, tiledb.open(theirs) as b:
        assert a.schema == b.schema
        for name in ("depth", "code", "year"):
            with tiledb.open(a.schema.dim_label(name).uri) as la, tiledb.open(b.schema.dim_label(name).uri) as lb:
                assert la.schema == lb.schema
                np.testing.assert_array_equal(la[:]["label"], lb[:]["label"])
    # TileDB-Py writes new labels into tessera's array, and tessera reads them.
    with tiledb.open(ours, "w") as A:
        A[:, 0:2] = {"v": np.full((6, 2), -1, dtype=np.int32), "year": np.array([1990, 1991], dtype=np.int32)}
    with ttiledb.open(ours) as A:
        got = A.label_index(["year"])[:, 1990:2022]
        np.testing.assert_array_equal(got["year"], [1990, 1991, 2022])
        np.testing.assert_array_equal(got["v"][0], [-1, -1, 2])


def test_labels_keep_their_order(tmp_path):
    uri = str(tmp_path / "a")
    _labelled(uri, ttiledb)
    with ttiledb.open(uri, "w") as A:
        with pytest.raises(ttiledb.TileDBError, match="increasing"):
            A[:] = {"v": np.zeros((6, 4), dtype=np.int32), "depth": np.array([0.0, 2.0, 1.0, 3.0, 4.0, 5.0])}
    with ttiledb.open(uri) as A:
        with pytest.raises(ttiledb.TileDBError, match="no label"):
            A.label_index(["depth"])[0.1:0.2]


# Selections of a dense array as TileDB-Py indexes them: ``[...]`` (half-open)
# and ``.multi_index[...]`` (inclusive, lists of ranges kept in their order).
_DENSE_SELECTIONS = [
    ("getitem", slice(None)),
    ("getitem", (slice(2, 5), slice(1, 4))),
    ("multi_index", (slice(2, 4), slice(1, 3))),
    ("multi_index", ([slice(1, 2), slice(4, 5)], [1, slice(3, 4)])),
    ("multi_index", ([slice(4, 5), slice(1, 2)], slice(2, 3))),
    ("multi_index", (slice(1, 2), [6, 1])),
    ("multi_index", ([3, 3], slice(None))),
]
_DENSE_QUERIES = [dict(), dict(cond="a > 10"), dict(cond="a > 10", attrs=["b"]), dict(cond="b < 9", dims=True),
                  dict(cond="a > 10", coords=True), dict(attrs=["b"], dims=["y"])]


@pytest.mark.parametrize("query", _DENSE_QUERIES, ids=lambda q: ",".join(f"{k}={v}" for k, v in q.items()) or "all")
def test_dense_selections_are_shaped_as_tiledb_py_shapes_them(tmp_path, query):
    uri = str(tmp_path / "dense")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(1, 6), tile=3, dtype=np.int32),
                        tiledb.Dim("y", domain=(1, 6), tile=3, dtype=np.int32))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32),
                                                                    tiledb.Attr("b", dtype=np.float64)]))
    with tiledb.open(uri, "w") as A:
        A[:] = {"a": np.arange(36, dtype=np.int32).reshape(6, 6), "b": np.arange(36.0).reshape(6, 6) / 2}
    with ttiledb.open(uri) as ours, tiledb.open(uri) as theirs:
        for how, key in _DENSE_SELECTIONS:
            got = getattr(ours.query(**query), how) if how != "getitem" else ours.query(**query)
            want = getattr(theirs.query(**query), how) if how != "getitem" else theirs.query(**query)
            got, want = got[key], want[key]
            assert list(got) == list(want), (how, key)
            for k in want:
                assert got[k].shape == want[k].shape, (how, key, k)
                np.testing.assert_array_equal(got[k], want[k], err_msg=f"{how} {key} {k}")
            # A data frame: the query's columns, the cells in the same order.
            if how == "multi_index":
                got, want = ours.query(**query).df[key], theirs.query(**query).df[key]
                assert list(got.columns) == list(want.columns), key
                np.testing.assert_array_equal(got.to_numpy(), want.to_numpy(), err_msg=str(key))
        got, want = ours.df[2:3, :], theirs.df[2:3, :]
        assert list(got.columns) == list(want.columns)
        np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())


@pytest.mark.parametrize("query", [dict(), dict(coords=False), dict(coords=True), dict(dims=False), dict(dims=["y"]),
                                   dict(coords=False, dims=["x"]), dict(attrs=["a"], coords=False)],
                         ids=lambda q: ",".join(f"{k}={v}" for k, v in q.items()) or "default")
def test_sparse_queries_return_the_fields_tiledb_py_returns(tmp_path, query):
    uri = str(tmp_path / "sparse")
    dom = tiledb.Domain(tiledb.Dim("x", domain=(1, 10), tile=5, dtype=np.int64),
                        tiledb.Dim("y", domain=(1, 10), tile=5, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("a", dtype=np.int32)], sparse=True))
    with tiledb.open(uri, "w") as A:
        A[[1, 2, 5], [3, 4, 6]] = np.array([10, 20, 30], dtype=np.int32)
    with ttiledb.open(uri) as ours, tiledb.open(uri) as theirs:
        # The fields, in TileDB-Py's order (attributes first from [...]).
        for pick in (lambda A: A.query(**query)[1:6], lambda A: A.query(**query).multi_index[1:5]):
            got, want = pick(ours), pick(theirs)
            assert list(got) == list(want)
            for k in want:
                np.testing.assert_array_equal(got[k], want[k], err_msg=k)
        got, want = ours.query(**query).df[1:5], theirs.query(**query).df[1:5]
        assert list(got.columns) == list(want.columns)
        assert list(ours[1:6]) == list(theirs[1:6])


def test_nullable_and_text_fields_read_as_tiledb_py_reads_them(tmp_path):
    uri = str(tmp_path / "dense")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 7), tile=4, dtype=np.int64),
                        tiledb.Dim("c", domain=(0, 7), tile=3, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[
        tiledb.Attr("n", dtype=np.int16, nullable=True), tiledb.Attr("s", dtype=str)]))
    n = np.ma.masked_array(np.arange(36, dtype=np.int16).reshape(6, 6), mask=np.arange(36).reshape(6, 6) % 5 == 0)
    with tiledb.open(uri, "w") as A:
        A[0:6, 1:7] = {"n": n, "s": np.array([f"s{i}" for i in range(36)], dtype=object).reshape(6, 6)}
    with ttiledb.open(uri) as ours, tiledb.open(uri) as theirs:
        # [...]: nullable attributes as masked arrays, nulls or not, the
        # values stored under the mask (the fill value where unwritten).
        for pick in (lambda A: A[:], lambda A: A[1:4, 2:5], lambda A: A[1:2, 1:4], lambda A: A.query(attrs=["n"])[2]):
            got, want = pick(ours)["n"], pick(theirs)["n"]
            assert type(got) is type(want) is np.ma.MaskedArray
            np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
            np.testing.assert_array_equal(np.ma.getdata(got), np.ma.getdata(want))
        # A data frame of a dense array with text: one row a cell.
        got, want = ours.df[1:2, 0:1], theirs.df[1:2, 0:1]
        assert list(got.columns) == list(want.columns)
        for k in ("r", "c", "n"):
            np.testing.assert_array_equal(got[k].to_numpy(), want[k].to_numpy(), err_msg=k)


def test_dense_reads_cover_what_tiledb_py_covers(tmp_path):
    """A dimension the key names is read over its non-empty domain, one it
    leaves out over its whole domain; cells in global order come flat;
    ``return_arrow`` asks for ``.df``."""
    uri = str(tmp_path / "dense")
    dom = tiledb.Domain(tiledb.Dim("r", domain=(0, 7), tile=4, dtype=np.int64),
                        tiledb.Dim("c", domain=(0, 7), tile=3, dtype=np.int64))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("f", dtype=np.float32)]))
    with tiledb.open(uri, "w") as A:
        A[0:6, 1:7] = np.arange(36, dtype=np.float32).reshape(6, 6)
    with ttiledb.open(uri) as ours, tiledb.open(uri) as theirs:
        for pick in (lambda A: A.multi_index[1:2], lambda A: A.multi_index[1:2, :], lambda A: A.multi_index[:],
                     lambda A: A.query(order="G").multi_index[0:3, 0:4], lambda A: A.query(order="G")[0:4, 0:3]):
            got, want = pick(ours)["f"], pick(theirs)["f"]
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)
        got, want = ours.df[1:2], theirs.df[1:2]
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())
        for A, error in ((ours, ttiledb.TileDBError), (theirs, tiledb.TileDBError)):
            q = A.query(return_arrow=True)
            for read in (lambda: q[:], lambda: q.multi_index[:]):
                with pytest.raises(error, match="requires .df indexer"):
                    read()
            # Rows over the non-empty domain, columns over the domain.
            assert q.df[:].num_rows == 48
            assert q.df[:].column("f").to_pylist()[1:7] == list(range(6))
            with pytest.raises(error, match="return_arrow with use_arrow=False"):
                A.query(return_arrow=True, use_arrow=False)


def _same_fields(got, want, what):
    """Two reads' fields alike: names in order, types (masked or not),
    shapes, dtypes, masks, and the values (those under masks too)."""
    if not isinstance(want, dict):
        got, want = {"": got}, {"": want}
    assert list(got) == list(want), what
    for k in want:
        g, w = got[k], want[k]
        assert (type(g), g.shape, g.dtype) == (type(w), w.shape, w.dtype), f"{what} {k}"
        np.testing.assert_array_equal(np.ma.getmaskarray(g), np.ma.getmaskarray(w), err_msg=f"{what} {k}")
        _same_values(g, w, f"{what} {k}")


def _same_values(got, want, what):
    """The values of two arrays (those under masks too) alike, NaN as NaN."""
    got, want = np.ma.getdata(got), np.ma.getdata(want)
    if want.dtype == object:
        # Variable-length cells: each an array (numbers) or a str or bytes.
        assert len(got) == len(want), what
        for g, w in zip(got.ravel(), want.ravel()):
            np.testing.assert_array_equal(g, w, err_msg=what)
    elif want.dtype.kind in "fc":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        assert got.tolist() == want.tolist(), what


@pytest.mark.parametrize("folder", [c[2] for c in cases() if "key" not in c[3]], ids=lambda f: f"{f.parent.name}/{f.name}")
def test_fixtures_read_through_tessera_tiledb_as_through_tiledb_py(folder):
    """Every fixture (five libtiledb releases; encrypted ones are read with
    their keys by test_fixtures.py) read whole with [...] and .multi_index
    as TileDB-Py reads it: the same fields, types, masks and values (its
    .multi_index gives values without masks: those are compared)."""
    uri = str(folder / "array")
    with ttiledb.open(uri) as ours, tiledb.open(uri) as theirs:
        assert ours.nonempty_domain() == theirs.nonempty_domain()
        for how, read in (("[:]", lambda A: A[:]), ("multi_index[:]", lambda A: A.multi_index[:])):
            try:
                want = read(theirs)
            except Exception as e:  # libtiledb's error class, not always tiledb.TileDBError
                # An empty dense array: libtiledb reads no subarray of it.
                assert "subarray set" in str(e)
                continue
            got = read(ours)
            if how == "[:]":
                _same_fields(got, want, how)
                continue
            assert list(got) == list(want)
            for k in want:
                assert got[k].shape == want[k].shape, k
                _same_values(got[k], want[k], f"{how} {k}")


@pytest.mark.parametrize("case, columns", [("filter_strings", None), ("sparse_strings", ["name", "t", "u"]),
                                           ("strings_nul", ["x"])])
def test_frames_give_ascii_as_text_and_bytes_whole(case, columns):
    """TileDB-Py's data frames give ASCII fields as ``str`` and fixed-size
    bytes with their trailing zero bytes."""
    uri = str(TESTDATA / "tiledb-0.36.1" / case / "array")
    with ttiledb.open(uri) as ours, tiledb.open(uri) as theirs:
        got, want = ours.df[:], theirs.df[:]
        columns = columns or list(want.columns)
        assert got[columns].to_dict("list") == want[columns].to_dict("list")


def test_ascii_fields_hold_any_byte_as_in_tiledb_py(tmp_path):
    """libtiledb keeps any byte in a STRING_ASCII dimension or attribute,
    UTF-8 or not: TileDB-Py writes such bytes and tessera.tiledb reads them
    as TileDB-Py does, through ``[...]``, ``multi_index`` and data frames
    made without Arrow."""
    uri = str(tmp_path / "sparse")
    dom = tiledb.Domain(tiledb.Dim("d", domain=(None, None), tile=None, dtype=np.bytes_))
    tiledb.Array.create(uri, tiledb.ArraySchema(domain=dom, sparse=True, attrs=[
        tiledb.Attr("a", dtype="ascii", var=True), tiledb.Attr("v", dtype=np.int32)]))
    keys = np.array([b"\x81", b"a\xff", b"b", b"\xc3\xa9"], dtype=object)
    with tiledb.open(uri, "w") as A:
        A[keys] = {"a": np.array([b"\xfe", b"x", b"\x80y", b"z"], dtype=object), "v": np.arange(4, dtype=np.int32)}
    with ttiledb.open(uri) as ours, tiledb.open(uri) as theirs:
        for pick in (lambda A: A[:], lambda A: A[b"a":b"\xff"], lambda A: A.multi_index[[b"\x81", (b"a", b"b")]],
                     lambda A: A.query(attrs=["a"])[:]):
            got, want = pick(ours), pick(theirs)
            assert list(got) == list(want)
            for k in want:
                assert list(got[k]) == list(want[k]), k
        # TileDB-Py's Arrow frames cannot hold such bytes; without Arrow
        # its frames give them as bytes.
        got, want = ours.query(use_arrow=False).df[:], theirs.query(use_arrow=False).df[:]
        assert got.to_dict("list") == want.to_dict("list")
        assert ours.nonempty_domain() == theirs.nonempty_domain()
        # Arrow text must be UTF-8: such a column is binary there, the
        # others text as in TileDB-Py.
        table = ours.query(return_arrow=True).df[:]
        assert sorted(table.column("d").to_pylist()) == sorted(keys)
        assert table.schema.field("d").type == "binary"
        table = ours.query(return_arrow=True).df[b"b":b"b"]
        assert table.column("d").to_pylist() == ["b"] and table.schema.field("d").type == "string"
        assert table.column("a").to_pylist() == [b"\x80y"]
    # tessera's own API reads ASCII as text unless asked for binary, and
    # says so when the bytes are not UTF-8.
    with pytest.raises(tessera.TesseraError, match="`d` \\(STRING_ASCII\\).*ascii_as_binary"):
        tessera.open(uri).read()
    table = tessera.open(uri).read(ascii_as_binary=True)
    assert sorted(table.column("d").to_pylist()) == sorted(keys)
    assert sorted(table.column("a").to_pylist()) == [b"x", b"z", b"\x80y", b"\xfe"]


@pytest.mark.parametrize("config, want", [
    ({"sm.check_coord_dups": False}, [(1, 20), (3, 10), (3, 30), (3, 40)]),
    # As text: TileDB-Py sets True as "True", which libtiledb takes for false.
    ({"sm.dedup_coords": "true"}, [(1, 20), (3, 10)]),
])
def test_duplicate_coordinates_follow_the_config_as_in_tiledb_py(tmp_path, config, want):
    """Cells written twice at one coordinate of an array that does not
    allow duplicates: refused by default; all kept with
    ``sm.check_coord_dups`` off; the first kept with ``sm.dedup_coords``.
    TileDB-Py reads back what tessera.tiledb wrote, and what it writes
    itself with the same config."""
    def write(lib, uri, config=config):
        dom = lib.Domain(lib.Dim("x", domain=(1, 100), tile=10, dtype=np.int32))
        lib.Array.create(uri, lib.ArraySchema(domain=dom, sparse=True, attrs=[lib.Attr("v", dtype=np.int32)]))
        with lib.scope_ctx(config):
            with lib.open(uri, "w") as A:
                A[np.array([3, 1, 3, 3], dtype=np.int32)] = np.array([10, 20, 30, 40], dtype=np.int32)

    def cells(uri):
        with tiledb.open(uri) as A:
            got = A[:]
        return sorted(zip(got["x"].tolist(), got["v"].tolist()))

    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    write(ttiledb, ours)
    write(tiledb, theirs)
    assert cells(ours) == want
    # libtiledb keeps one of the cells at a coordinate, which one its
    # unstable sort decides; tessera the first given.
    assert [x for x, _ in cells(theirs)] == [x for x, _ in want]
    assert set(cells(theirs)) <= {(1, 20), (3, 10), (3, 30), (3, 40)}
    refused = str(tmp_path / "refused")
    with pytest.raises(ttiledb.TileDBError, match="two cells at x = 3"):
        write(ttiledb, refused, {})
