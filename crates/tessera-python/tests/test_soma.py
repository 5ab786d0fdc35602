"""tessera.soma against tiledbsoma 2.3.0 (real libtiledb) on the SOMA
fixtures: the same calls, the same results (types, values, shapes)."""

import numpy as np
import pyarrow as pa
import pytest

from conftest import TESTDATA, same_anndata, walk

import tessera.soma as tsoma

import tiledbsoma as soma  # real libtiledb, from PyPI

EXPERIMENTS = sorted(p / "experiment" for p in (TESTDATA / "soma").iterdir() if (p / "experiment").is_dir())
IDS = [p.parent.name for p in EXPERIMENTS]

OBS_FILTERS = [
    None,
    "cell_type == 'B cell'",
    "cell_type in ['T cell', 'NK cell']",
    "cell_type != 'no such type'",
    "cell_type == 'no such type'",
    "n_genes > 1000 and is_doublet == True",
    "percent_mito < 0.5 or cell_type == 'NK cell'",
    "not (cell_type == 'T cell')",
]
VAR_FILTERS = [None, "chromosome == 'chrX'", "means > 0.5", "chromosome not in ['chr1']"]
COORDS = [(), (slice(2, 5),), ([0, 3, 4, 11],), (7,), (slice(None, 3),), ([],), (slice(3, 100),), (slice(50, 60),)]


def alike(ours, theirs, compare):
    """Runs both calls: equal results, or both fail (tiledbsoma refuses
    coordinates outside the domain in force); then gives tiledbsoma's
    error, so that a caller skips what only a result can be checked for."""
    try:
        want = theirs()
    except (soma.SOMAError, ValueError) as e:
        with pytest.raises(ValueError):
            ours()
        return str(e)
    # A comparison either asserts or answers whether the two are equal.
    assert compare(ours(), want) is not False


def sort_rows(table):
    keys = [n for n in ("soma_joinid", "soma_dim_0", "soma_dim_1") if n in table.column_names]
    return table.sort_by([(k, "ascending") for k in keys]) if keys else table


def same_table(ours, theirs):
    ours, theirs = sort_rows(ours), sort_rows(theirs)
    assert ours.schema == theirs.schema, f"\n{ours.schema}\n!=\n{theirs.schema}"
    assert ours.combine_chunks().to_pylist() == theirs.combine_chunks().to_pylist() or _same_nan(ours, theirs)


def _same_nan(a, b):
    return a.to_pandas().equals(b.to_pandas())


@pytest.fixture(params=EXPERIMENTS, ids=IDS)
def pair(request):
    with soma.open(str(request.param)) as theirs:
        yield tsoma.open(str(request.param)), theirs


def test_members_open_as_the_same_soma_types(pair):
    ours, theirs = pair
    a = [(p, o.soma_type) for p, o in walk(ours)]
    b = [(p, o.soma_type) for p, o in walk(theirs)]
    assert a == b


def test_dataframes_read_alike(pair):
    ours, theirs = pair
    frames = [(ours.obs, theirs.obs, OBS_FILTERS)]
    frames += [(ours.ms[m].var, theirs.ms[m].var, VAR_FILTERS) for m in theirs.ms.keys()]
    for o, t, filters in frames:
        assert o.schema == t.schema
        assert o.count == t.count
        assert o.index_column_names == t.index_column_names
        for coords in COORDS:
            for value_filter in filters:
                for columns in (None, ["soma_joinid", t.schema.names[-1]], list(reversed(t.schema.names[1:3]))):
                    alike(lambda: o.read(coords, column_names=columns, value_filter=value_filter).concat(),
                          lambda: t.read(coords, column_names=columns, value_filter=value_filter).concat(),
                          same_table)


def arrays_of(soma_type, ours, theirs):
    return [(o, t) for (_, o), (_, t) in zip(walk(ours), walk(theirs)) if t.soma_type == soma_type]


def test_sparse_arrays_read_alike(pair):
    ours, theirs = pair
    arrays = arrays_of("SOMASparseNDArray", *pair)
    assert arrays or "experiment_dense" in str(ours.uri)
    for o, t in arrays:
        assert o.shape == t.shape and o.nnz == t.nnz and o.ndim == t.ndim
        for coords in COORDS + [(slice(1, 6), [0, 2, 5]), (None, slice(3, None)), (slice(-4, 100),)]:
            if alike(lambda: o.read(coords).tables().concat(), lambda: t.read(coords).tables().concat(), same_table):
                continue
            ours_coo = sum(c.to_scipy().toarray() for c in o.read(coords).coos())
            if t.read(coords).tables().concat().num_rows:
                # (tiledbsoma's coos() fails on an empty read.)
                theirs_coo = sum(c.to_scipy().toarray() for c in t.read(coords).coos())
                assert ours_coo.tolist() == theirs_coo.tolist()
            else:
                assert ours_coo == 0
            if any((isinstance(c, list) and not c) or (isinstance(c, slice) and (c.start or 0) < 0) for c in coords):
                # tiledbsoma's blockwise reads fail on an empty list of
                # coordinates, and take a negative slice start as counting
                # from the end (then fail); its plain reads cut it to 0.
                continue
            for axis in (0, 1):
                for size in (None, 4):
                    ob = list(o.read(coords).blockwise(axis=axis, size=size).scipy())
                    tb = list(t.read(coords).blockwise(axis=axis, size=size).scipy())
                    assert len(ob) == len(tb)
                    for (om, (o0, o1)), (tm, (t0, t1)) in zip(ob, tb):
                        assert type(om) is type(tm) and om.shape == tm.shape
                        assert (om != tm).nnz == 0
                        assert o0.tolist() == np.asarray(t0).tolist() and o1.tolist() == np.asarray(t1).tolist()


def test_dense_arrays_read_alike(pair):
    for o, t in arrays_of("SOMADenseNDArray", *pair):
        assert o.shape == t.shape
        for coords in [(), (slice(1, 3),), (2,), (slice(0, 4), slice(1, 1))][:3 + (len(t.shape) > 1)]:
            ours, theirs = o.read(coords), t.read(coords)
            assert isinstance(ours, pa.Tensor)
            assert ours.to_numpy().dtype == theirs.to_numpy().dtype
            np.testing.assert_array_equal(ours.to_numpy(), theirs.to_numpy())


AXIS_QUERIES = [
    ({}, {}),
    ({"value_filter": "cell_type == 'B cell'"}, {}),
    ({"coords": (slice(1, 9),)}, {"value_filter": "chromosome != 'chr2'"}),
    ({"value_filter": "n_genes > 2000", "coords": ([0, 2, 4, 6, 8, 10, 12, 14],)}, {"coords": ([1, 3, 5],)}),
    ({"value_filter": "cell_type == 'no such type'"}, {}),
]


def test_axis_queries_read_alike(pair):
    ours, theirs = pair
    sparse_x = [k for k in theirs.ms["RNA"].X.keys() if theirs.ms["RNA"].X[k].soma_type == "SOMASparseNDArray"]
    for obs_q, var_q in AXIS_QUERIES:
        oq = ours.axis_query("RNA", obs_query=tsoma.AxisQuery(**obs_q), var_query=tsoma.AxisQuery(**var_q))
        tq = theirs.axis_query("RNA", obs_query=soma.AxisQuery(**obs_q), var_query=soma.AxisQuery(**var_q))
        if alike(oq.obs_joinids, tq.obs_joinids, lambda a, b: a.to_pylist() == b.to_pylist()):
            continue
        assert oq.obs_joinids().to_pylist() == tq.obs_joinids().to_pylist()
        assert oq.var_joinids().to_pylist() == tq.var_joinids().to_pylist()
        assert (oq.n_obs, oq.n_vars) == (tq.n_obs, tq.n_vars)
        same_table(oq.obs().concat(), tq.obs().concat())
        same_table(oq.var(column_names=["soma_joinid", "chromosome"]).concat(),
                   tq.var(column_names=["soma_joinid", "chromosome"]).concat())
        for layer in sparse_x:
            same_table(oq.X(layer).tables().concat(), tq.X(layer).tables().concat())
        if not sparse_x:
            continue
        x_name, *more = sparse_x
        kwargs = dict(X_layers=more, obsm_layers=list(theirs.ms["RNA"].obsm.keys()),
                      varm_layers=list(theirs.ms["RNA"].varm.keys()))
        same_anndata(oq.to_anndata(x_name, **kwargs), tq.to_anndata(x_name, **kwargs))


def test_io_to_anndata_alike(pair):
    ours, theirs = pair
    import tiledbsoma.io

    for ms in theirs.ms.keys():
        same_anndata(tsoma.io.to_anndata(ours, ms, "data"), tiledbsoma.io.to_anndata(theirs, ms, X_layer_name="data"))


def test_every_measurement_answers_axis_queries_alike(pair):
    """Measurements beside RNA (the same cells, other features) answer
    obs queries as tiledbsoma does."""
    ours, theirs = pair
    for ms in [m for m in theirs.ms.keys() if m != "RNA"]:
        for obs_q, _ in AXIS_QUERIES:
            oq = ours.axis_query(ms, obs_query=tsoma.AxisQuery(**obs_q))
            tq = theirs.axis_query(ms, obs_query=soma.AxisQuery(**obs_q))
            if alike(oq.obs_joinids, tq.obs_joinids, lambda a, b: a.to_pylist() == b.to_pylist()):
                continue  # both refused the coordinates
            assert oq.obs_joinids().to_pylist() == tq.obs_joinids().to_pylist()
            same_table(oq.var().concat(), tq.var().concat())
            same_table(oq.X("data").tables().concat(), tq.X("data").tables().concat())
            same_anndata(oq.to_anndata("data"), tq.to_anndata("data"))


@pytest.mark.parametrize("uns_keys", [[], ["title", "log1p", "table"], ["pairs", "no such key"]])
def test_io_to_anndata_picks_uns_keys_alike(pair, uns_keys):
    ours, theirs = pair
    import tiledbsoma.io

    a = tsoma.io.to_anndata(ours, "RNA", "data", uns_keys=uns_keys)
    b = tiledbsoma.io.to_anndata(theirs, "RNA", X_layer_name="data", uns_keys=uns_keys)
    same_anndata(a, b)
    assert "uns" not in ours.ms["RNA"] or len(b.uns) == len(set(uns_keys) - {"no such key"})


def test_errors_name_what_is_wrong():
    exp = tsoma.open(str(EXPERIMENTS[0]))
    with pytest.raises(ValueError, match="no column 'nope'"):
        exp.obs.read(column_names=["nope"])
    with pytest.raises(ValueError, match="compares only with"):
        exp.obs.read(value_filter="cell_type < 'B cell'").concat()
    with pytest.raises(KeyError, match="no member 'nope'"):
        exp["nope"]
    with pytest.raises(tsoma.SOMAError, match="SOMADataFrame, not a SOMAExperiment"):
        tsoma.open(exp.obs.uri, soma_type=tsoma.Experiment)
    with pytest.raises(ValueError, match="expected 'r', 'w' or 'd'"):
        tsoma.open(str(EXPERIMENTS[0]), "x")
    dense = tsoma.open(str(TESTDATA / "soma" / "experiment_dense" / "experiment")).ms["RNA"].X["data"]
    with pytest.raises(ValueError, match="not an empty list"):
        dense.read(([],))
    with pytest.raises(ValueError, match="outside the domain"):
        exp.ms["RNA"].X["data"].read(([99],)).blockwise(axis=0)


def test_csr_matrices_are_read_straight_into_their_arrays(pair, monkeypatch):
    """Row-wise blocks and AnnData's X come from the native CSR read (no
    COO pass in Python), sorted, writable, and equal to tiledbsoma's."""
    from tessera.soma import _matrix

    ours, theirs = pair
    arrays = arrays_of("SOMASparseNDArray", *pair)

    def no_coo(*args, **kwargs):
        raise AssertionError("the Python COO path ran")

    monkeypatch.setattr(_matrix, "coo", no_coo)
    for o, t in arrays:
        for coords in [(), (slice(1, 3),), ([0, 2], [0, 1])]:
            (om, _), = list(o.read(coords).blockwise(axis=0, size=1 << 20).scipy())
            (tm, _), = list(t.read(coords).blockwise(axis=0, size=1 << 20).scipy())
            assert (om != tm).nnz == 0 and om.shape == tm.shape
            assert om.has_sorted_indices and om.nnz == tm.nnz
            assert om.data.flags.writeable and om.indices.flags.writeable
            om.data *= 2
    query = ours.axis_query("RNA", obs_query=tsoma.AxisQuery(value_filter="cell_type == 'B cell'"))
    theirs_query = theirs.axis_query("RNA", obs_query=soma.AxisQuery(value_filter="cell_type == 'B cell'"))
    x = [k for k in theirs.ms["RNA"].X.keys() if theirs.ms["RNA"].X[k].soma_type == "SOMASparseNDArray"]
    if x:
        same_anndata(query.to_anndata(x[0]), theirs_query.to_anndata(x[0]))


def test_result_orders_read_alike(pair):
    """Row- and column-major reads come in tiledbsoma's order, cell for cell."""
    ours, theirs = pair
    frames = arrays_of("SOMADataFrame", *pair)
    arrays = arrays_of("SOMASparseNDArray", *pair)
    for order in ("row-major", "column-major", soma.ResultOrder.ROW_MAJOR):
        for o, t in arrays:
            same = o.read(result_order=order).tables().concat().equals(
                t.read(result_order=order).tables().concat())
            assert same, (o.uri, order)
        for o, t in frames:
            ot = o.read(result_order=order).concat()
            tt = t.read(result_order=order).concat()
            assert ot.column("soma_joinid").to_pylist() == tt.column("soma_joinid").to_pylist()
    # The orders differ where there are rows and columns to order.
    x = ours.ms["RNA"].X["data"]
    if x.soma_type == "SOMASparseNDArray" and x.nnz > 1:
        rows = x.read(result_order="row-major").tables().concat()
        assert not rows.equals(x.read(result_order="column-major").tables().concat())
    with pytest.raises(ValueError, match="result_order"):
        ours.obs.read(result_order="sideways")


def test_axis_query_reads_take_result_order_and_partitions(pair):
    """An axis query's obs, var and X reads come in the order asked for,
    and refuse partitions but the one of one, as tiledbsoma's do."""
    import somacore

    ours, theirs = pair
    q = dict(obs_query={"value_filter": "n_genes > 1000"}, var_query={"coords": (slice(1, 4),)})
    oq = ours.axis_query("RNA", obs_query=tsoma.AxisQuery(**q["obs_query"]),
                         var_query=tsoma.AxisQuery(**q["var_query"]))
    tq = theirs.axis_query("RNA", obs_query=soma.AxisQuery(**q["obs_query"]),
                           var_query=soma.AxisQuery(**q["var_query"]))
    sparse = theirs.ms["RNA"].X["data"].soma_type == "SOMASparseNDArray"
    for order in ("row-major", "column-major"):
        for kw in (dict(result_order=order), dict(result_order=order, partitions=somacore.IOfN(0, 1))):
            assert oq.obs(**kw).concat().equals(tq.obs(**kw).concat()), kw
            assert oq.var(**kw).concat().equals(tq.var(**kw).concat()), kw
            if sparse:
                assert oq.X("data", **kw).tables().concat().equals(tq.X("data", **kw).tables().concat()), kw
    two = somacore.IOfN(1, 2)
    calls = [(lambda q: q.obs(partitions=two)), (lambda q: q.var(partitions=two))]
    calls += [(lambda q: q.X("data", partitions=two))] if sparse else []
    for call in calls:
        with pytest.raises(ValueError):
            call(tq)
        with pytest.raises(ValueError, match="partitioned reads are not supported"):
            call(oq)
    with pytest.raises(ValueError, match="partitioned"):
        ours.obs.read(partitions=two)


def test_context_gives_libtiledb_storage_keys_as_storage_options():
    ctx = tsoma.SOMATileDBContext(tiledb_config={
        "vfs.s3.endpoint_override": "localhost:9000", "vfs.s3.scheme": "http", "vfs.s3.region": "r1",
        "vfs.s3.use_virtual_addressing": False, "vfs.s3.aws_access_key_id": "id", "sm.memory_budget": 5,
    })
    assert ctx.storage_options() == {
        "aws_endpoint": "http://localhost:9000", "aws_allow_http": "true", "aws_region": "r1",
        "aws_virtual_hosted_style_request": "false", "aws_access_key_id": "id",
    }
    azure = ctx.replace(tiledb_config={"vfs.s3.endpoint_override": None, "vfs.s3.region": None,
                                       "vfs.s3.use_virtual_addressing": None, "vfs.s3.aws_access_key_id": None,
                                       "vfs.azure.blob_endpoint": "https://acct.blob.example",
                                       "vfs.azure.storage_account_name": "acct"})
    assert azure.storage_options() == {"azure_endpoint": "https://acct.blob.example", "azure_allow_http": "false",
                                       "azure_storage_account_name": "acct"}
    assert ctx.tiledb_config["vfs.s3.region"] == "r1"  # replace made a copy
    with pytest.raises(TypeError, match="SOMATileDBContext"):
        tsoma.open(str(EXPERIMENTS[0]), context="s3")
    # A local experiment needs no storage options: the context's are left out.
    assert tsoma.open(str(EXPERIMENTS[0]), context=ctx).obs.count == tsoma.open(str(EXPERIMENTS[0])).obs.count


def test_classes_open_objects_of_their_kind():
    exp = tsoma.Experiment.open(str(EXPERIMENTS[0]))
    assert isinstance(exp, tsoma.Experiment)
    assert isinstance(tsoma.DataFrame.open(exp.obs.uri), tsoma.DataFrame)
    with pytest.raises(tsoma.SOMAError, match="not a SOMASparseNDArray"):
        tsoma.SparseNDArray.open(exp.obs.uri)


def test_frame_and_array_reads_load_only_what_their_results_need():
    """Opening an experiment and reading obs (strings, enumerations, a
    value filter) and X as tables loads neither pandas, anndata, scipy nor
    pyarrow.compute: a process that asks for tables pays for none of them."""
    import subprocess
    import sys

    code = f"""
import sys
import tessera.soma as soma
exp = soma.open({str(EXPERIMENTS[0])!r})
t = exp.obs.read(value_filter="cell_type == 'B cell' and n_genes > 100").concat()
assert t.num_rows and t.schema.field("obs_id").type == "large_string", t.schema
x = exp.ms["RNA"].X["data"].read().tables().concat()
q = exp.axis_query("RNA", obs_query=soma.AxisQuery(value_filter="n_genes > 1000"))
q.X("data").tables().concat()
print(sorted(m for m in ("pandas", "anndata", "scipy", "pyarrow.compute") if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_errors_are_tessera_errors_naming_the_object_and_the_problem(tmp_path):
    """Each error is a tessera.TesseraError whose message names the object
    and the problem, and the exception type tiledbsoma raises for it."""
    import tessera

    exp = tsoma.open(str(EXPERIMENTS[0]))
    plain = str(TESTDATA / "tiledb-0.36.1" / "random_sparse" / "array")
    cases = [
        (lambda: tsoma.open(str(tmp_path)), tsoma.SOMAError, str(tmp_path), "not a SOMA object"),
        (lambda: tsoma.open(plain), tsoma.SOMAError, plain, "not a SOMA array"),
        (lambda: exp.axis_query("nope").obs_joinids(), ValueError, exp.uri, "no measurement 'nope'"),
        (lambda: exp.ms["nope"], KeyError, exp.uri, "no member 'nope'"),
        (lambda: exp.axis_query("RNA").X("nope"), KeyError, exp.uri, "no X layer 'nope'"),
        (lambda: tsoma.io.to_anndata(exp, "RNA", "nope"), ValueError, exp.uri, "no X layer 'nope'"),
        (lambda: exp.obs.read(value_filter="n_genes >"), ValueError, exp.obs.uri, "unexpected end"),
        (lambda: exp.obs.read(value_filter="nope > 1"), ValueError, exp.obs.uri, "nope"),
        (lambda: exp.obs.read(value_filter="cell_type < 'B cell'"), ValueError, exp.obs.uri, "compares only with"),
        (lambda: exp.obs.read(value_filter="cell_type == "), ValueError, exp.obs.uri, "value_filter"),
    ]
    for call, kind, where, problem in cases:
        with pytest.raises(tessera.TesseraError) as e:
            call()
        assert isinstance(e.value, kind), (type(e.value), problem)
        assert where in str(e.value) and problem in str(e.value), str(e.value)


@pytest.mark.parametrize("writer", ["tiledbsoma", "tessera"])
def test_a_frame_of_two_index_columns_reads_any_of_its_columns_alike(tmp_path, writer):
    """A DataFrame indexed by ``soma_joinid`` and ``plate``: a read naming
    some of its columns (one index column, the other, neither) gives what
    tiledbsoma gives, whichever of the two wrote it."""
    schema = pa.schema([("soma_joinid", pa.int64()), ("plate", pa.int64()), ("value", pa.float64())])
    rows = pa.table({"soma_joinid": pa.array(range(40), pa.int64()),
                     "plate": pa.array([i % 7 for i in range(40)], pa.int64()),
                     "value": pa.array([i / 4 for i in range(40)], pa.float64())})
    uri = str(tmp_path / "frame")
    make = soma.DataFrame if writer == "tiledbsoma" else tsoma.DataFrame
    with make.create(uri, schema=schema, index_column_names=["soma_joinid", "plate"],
                     domain=[(0, 99), (0, 9)]) as frame:
        frame.write(rows)
    ours, theirs = tsoma.DataFrame.open(uri), soma.DataFrame.open(uri)
    assert ours.index_column_names == theirs.index_column_names == ("soma_joinid", "plate")
    for coords in [(), (slice(5, 30),), (slice(None), [2, 3]), ([1, 8, 15], 1)]:
        for columns in [None, ["plate"], ["value"], ["value", "soma_joinid"], ["plate", "value"]]:
            for value_filter in [None, "plate > 2", "value < 3"]:
                alike(lambda: ours.read(coords, column_names=columns, value_filter=value_filter).concat(),
                      lambda: theirs.read(coords, column_names=columns, value_filter=value_filter).concat(),
                      same_table)
