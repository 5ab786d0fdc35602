"""The API's shapes against TileDB-Py's own on the same arrays: schema,
fragments, metadata, non-empty domain, the indexers, batches, groups,
errors."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import tiledb

import tessera
import tessera.tiledb as ttiledb
from conftest import TESTDATA, canonical, contract_rows

NEW = TESTDATA / "tiledb-0.36.1"


def uri(case):
    return str(NEW / case / "array")


def test_schema_matches_tiledb_py():
    A = tessera.open(uri("sparse_2d"))
    with tiledb.open(uri("sparse_2d")) as T:
        s = T.schema
        assert A.schema.sparse == s.sparse
        assert [d.name for d in A.schema.dims] == [s.domain.dim(i).name for i in range(s.domain.ndim)]
        assert [a.name for a in A.schema.attrs] == [s.attr(i).name for i in range(s.nattr)]
        for i in range(s.domain.ndim):
            assert A.schema.dim(i).domain == tuple(int(x) for x in s.domain.dim(i).domain)
            assert A.schema.dim(i).dtype == s.domain.dim(i).dtype
        for i in range(s.nattr):
            assert A.schema.attr(i).dtype == s.attr(i).dtype
        assert A.schema.capacity == s.capacity


def test_schema_round_trips_through_create(scratch):
    A = tessera.open(uri("enumerations"))
    tessera.create(scratch / "copy", A.schema)
    assert tessera.open(scratch / "copy").schema.to_json()["attributes"] == A.schema.to_json()["attributes"]


def test_fragments_and_nonempty_domain_match_tiledb_py():
    for case in ("sparse_2d", "dense_1d_fragments", "sparse_strings", "sparse_datetime_dim"):
        A = tessera.open(uri(case))
        frags = tiledb.FragmentInfoList(uri(case))
        assert [f.name for f in A.fragments] == [f.uri.rsplit("/", 1)[-1] for f in frags]
        assert [f.cell_num for f in A.fragments] == [f.cell_num for f in frags]
        assert [f.timestamp_range for f in A.fragments] == [tuple(f.timestamp_range) for f in frags]
        with tiledb.open(uri(case)) as T:
            want = T.nonempty_domain()
        got = A.nonempty_domain()
        norm = lambda v: int(v.astype(np.int64)) if isinstance(v, np.datetime64) else (v.decode() if isinstance(v, bytes) else v)
        assert got == tuple(tuple(norm(x) for x in r) for r in want), case


def test_meta_matches_tiledb_py():
    A = tessera.open(uri("array_metadata"))
    with tiledb.open(uri("array_metadata")) as T:
        want = {k: T.meta[k] for k in T.meta.keys()}
    assert A.meta == want
    assert isinstance(A.meta["ints"], tuple)


def test_empty_array_has_no_domain_and_reads_nothing():
    A = tessera.open(uri("empty_sparse"))
    assert A.nonempty_domain() is None
    t = A.read()
    assert t.num_rows == 0
    assert t.column_names == [d.name for d in A.schema.dims] + [a.name for a in A.schema.attrs]


@pytest.mark.parametrize("case, where", [("sparse_2d", "i > 1000000"), ("sparse_2d", "f < -1e300 and i > 0"),
                                          ("random_sparse", "a > 1000000")])
def test_a_read_of_no_cell_has_its_schema(case, where):
    """A condition no cell meets: no rows, the fields of the read (as a
    read of every cell has them), through read, df and the Arrow stream."""
    A = tessera.open(uri(case))
    whole = A.read()
    none = A.read(where=where)
    assert none.num_rows == 0
    assert none.schema == whole.schema
    assert A.reader(where=where, budget=1 << 16).read_all().schema == whole.schema
    assert list(A.query(cond=where).df[:].columns) == whole.column_names
    with tiledb.open(uri(case)) as T:
        assert len(T.query(cond=where).df[:]) == 0


def test_a_read_of_some_dimensions_matches_tiledb_py():
    """``dims=["y"]`` returns that dimension alone, as TileDB-Py's query
    does, through ``read`` and ``tessera.tiledb``; a dimension the array
    lacks is refused by name."""
    A = tessera.open(uri("sparse_2d"))
    t = A.read(dims=["y"], attrs=["i"], layout="row-major")
    assert t.column_names == ["y", "i"]
    with tiledb.open(uri("sparse_2d")) as T:
        want = T.query(dims=["y"], attrs=["i"], order="C")[:]
    np.testing.assert_array_equal(t.column("y").to_numpy(), want["y"])
    with ttiledb.open(uri("sparse_2d")) as T:
        got = T.query(dims=["y"], attrs=["i"], order="C")[:]
    assert sorted(got) == sorted(want) == ["i", "y"]
    np.testing.assert_array_equal(got["y"], want["y"])
    np.testing.assert_array_equal(got["i"], want["i"])
    with pytest.raises(Exception, match="no dimension `z`"):
        A.read(dims=["z"])


def test_multi_index_and_df_match_tiledb_py():
    with tiledb.open(uri("sparse_2d")) as T:
        want = T.multi_index[1:10, [2, slice(5, 20)]]
        want_df = T.df[1:10, :]
    A = tessera.open(uri("sparse_2d"))
    got = A.multi_index[1:10, [2, slice(5, 20)]]
    order = lambda d: np.lexsort((d["y"], d["x"]))
    for k in ("x", "y", "f", "i"):
        np.testing.assert_array_equal(got[k][order(got)], want[k][order(want)])
    got_df = A.df[1:10, :].sort_values(["x", "y"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got_df, want_df.sort_values(["x", "y"]).reset_index(drop=True), check_dtype=True)


def test_dense_getitem_is_shaped_like_tiledb_py():
    with tiledb.open(uri("dense_2d_types")) as T:
        want = T[1:3, 0:2]
    A = tessera.open(uri("dense_2d_types"))
    got = A[1:3, 0:2]
    for k, v in want.items():
        assert got[k].shape == v.shape, k
        np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(v), err_msg=k)


def test_query_with_condition_matches_tiledb_py():
    with tiledb.open(uri("sparse_2d")) as T:
        want = T.query(attrs=["i"], cond="i > 50").df[:]
    got = tessera.open(uri("sparse_2d")).query(attrs=["i"], cond="i > 50").df[:]
    key = ["x", "y"]
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True), want.sort_values(key).reset_index(drop=True))


def test_enumerations_are_dictionary_columns_and_categoricals():
    A = tessera.open(uri("enumerations"))
    t = A.read()
    enumerated = [a.name for a in A.schema.attrs if a.enum_label]
    assert enumerated
    for name in enumerated:
        assert pa.types.is_dictionary(t.schema.field(name).type)
    with tiledb.open(uri("enumerations")) as T:
        # TileDB-Py's Arrow path refuses uint8 enumeration keys with pyarrow 22.
        want = T.query(use_arrow=False).df[:]
    got = A.df[:]
    for name in enumerated:
        assert isinstance(got[name].dtype, pd.CategoricalDtype)
        assert sorted(map(str, got[name].astype(object))) == sorted(map(str, want[name].astype(object)))
    values = A.read(enum_values=True)
    assert not any(pa.types.is_dictionary(f.type) for f in values.schema)


def test_batches_concatenate_to_the_whole_read():
    A = tessera.open(uri("sparse_large"))
    whole = A.read(layout="global-order")
    batches = list(A.iter_batches(layout="global-order", budget=64 << 10))
    assert len(batches) > 1
    assert pa.Table.from_batches(batches).equals(whole)


def test_arrow_c_stream_is_taken_by_pyarrow():
    A = tessera.open(uri("sparse_2d"))
    t = pa.table(A)
    assert canonical(contract_rows(t)) == canonical(contract_rows(A.read()))


def test_encrypted_array_needs_its_key():
    import json

    with open(NEW / "encrypted" / "expected.json") as fh:
        key = json.load(fh)["case"]["key"]
    with pytest.raises(tessera.TesseraError):
        tessera.open(uri("encrypted")).read()
    assert tessera.open(uri("encrypted"), key=key).read().num_rows > 0


def test_time_travel():
    frags = tessera.open(uri("dense_1d_fragments")).fragments
    first = frags[0].timestamp_range[1]
    early = tessera.open(uri("dense_1d_fragments"), timestamp=first)
    assert len(early.fragments) == 1
    with tiledb.open(uri("dense_1d_fragments"), timestamp=first) as T:
        want = T[:]
    got = early[:]
    for k in want:
        np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want[k]))


def test_errors_name_the_problem():
    with pytest.raises(tessera.TesseraError, match="no_such"):
        tessera.open(uri("sparse_2d")).read(attrs=["no_such"])
    with pytest.raises(tessera.TesseraError, match="dimension `z`"):
        tessera.open(uri("sparse_2d")).read(subarray={"z": (1, 2)})
    with pytest.raises(tessera.TesseraError):
        tessera.open(uri("sparse_2d")).read(where="f >")
    with pytest.raises(tessera.TesseraError):
        tessera.open(str(TESTDATA / "no_such_array"))
    with pytest.raises(tessera.TesseraError, match="layout"):
        tessera.open(uri("sparse_2d")).read(layout="sideways")


def test_group_members_and_arrays():
    path = TESTDATA / "groups" / "tiledb-0.36.1" / "group_nested" / "group"
    G = tessera.open_group(path)
    with tiledb.Group(str(path)) as T:
        want = sorted(m.name or m.uri.rstrip("/").rsplit("/", 1)[-1] for m in T)
    assert sorted(G) == want
    data = G["ms/RNA/X/data"]
    assert isinstance(data, tessera.Array)
    assert data.read().num_rows > 0
    assert any(m.type == "group" for m in G.members())
    with tiledb.Group(str(path)) as T:
        assert G.meta == {k: T.meta[k] for k in T.meta.keys()}


@pytest.mark.parametrize("case", ["experiment_appended", "experiment_dense"])
def test_soma_experiment_arrays_read_as_tiledbsoma_reads_them(case):
    """Each array of a TileDB-SOMA experiment, found through the group's
    members, reads the rows tiledbsoma 2.3.0 read (recorded in expected.json)."""
    import json

    with open(TESTDATA / "soma" / case / "expected.json") as fh:
        expected = json.load(fh)
    G = tessera.open_group(TESTDATA / "soma" / case / "experiment")
    members = {m.path: m for m in G.members(recursive=True)}
    assert [{"path": m.path, "type": m.type} for m in members.values()] == expected["members"]
    for path, want in expected["arrays"].items():
        rows = contract_rows(tessera.open(members[path].uri).read())
        assert canonical(rows) == canonical(want["rows"]), path


def test_numpy_reads_and_writes_do_not_import_pandas(tmp_path):
    """numpy in, numpy out: pandas stays unimported (importing it costs a
    process 0.2-0.5 s, which pyarrow's own numpy conversions pay)."""
    import subprocess
    import sys

    code = f"""
import sys, numpy as np, tessera
A = tessera.open({uri("dense_large")!r})
x = A[:]
assert all(isinstance(v, np.ndarray) for v in x.values()), x
dst = {str(tmp_path / "copy")!r}
tessera.create(dst, A.schema)
lo, hi = A.schema.dim(0).domain, A.schema.dim(1).domain
attrs = {{k: v for k, v in x.items() if k in [a.name for a in A.schema.attrs]}}
tessera.write(dst, attrs, subarray=[lo, hi])
assert np.array_equal(tessera.open(dst)[:][A.schema.attr(0).name], x[A.schema.attr(0).name])
print("pandas" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_the_group_module_examples_run(monkeypatch):
    """The examples in tessera._group's docstrings (object_type's among
    them), from the repository's root as they are written."""
    import doctest

    import tessera._group

    monkeypatch.chdir(TESTDATA.parent)
    result = doctest.testmod(tessera._group, raise_on_error=False)
    assert result.attempted >= 3 and result.failed == 0, result
