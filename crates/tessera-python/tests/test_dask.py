"""tessera.dask on a dask.distributed cluster of two worker processes:
dense arrays and dataframes of every release's fixtures equal reads in
one process (and TileDB-Py's, for dense arrays), tasks reopen what they
read from what pickles (URI, timestamp, key, storage options), also on
an S3 server."""

import pickle

import numpy as np
import pytest
import tiledb

import tessera
import tessera.dask
from conftest import S3_BUCKET, TESTDATA, cases

distributed = pytest.importorskip("distributed", reason="dask[distributed] is CI's (.ci/run installs it)")


# Seconds a computation on the cluster may take before the test fails
# (rather than waiting on a task that will not end).
TIMEOUT = 120


def computed(client, collection):
    """``collection`` computed on the cluster, or a failure after TIMEOUT."""
    return client.compute(collection).result(timeout=TIMEOUT)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def arrays():
    """Each fixture array once (the first case naming it), every release."""
    seen, out = set(), []
    for release, name, folder, case in cases():
        if folder in seen:
            continue
        seen.add(folder)
        out.append(pytest.param(folder / "array", case.get("key"), id=f"{release}/{name}"))
    return out


def dense_attributes():
    out = []
    for p in arrays():
        uri, key = p.values
        A = tessera.open(uri, key=key)
        if A.schema.sparse:
            continue
        for a in A.schema.attrs:
            if not a.var and (a.ncells or 1) == 1:
                out.append(pytest.param(uri, key, a.name, id=f"{p.id}/{a.name}"))
    return out


@pytest.mark.parametrize("uri,key,attr", dense_attributes())
def test_dense_arrays_equal_tiledb_py(client, uri, key, attr):
    X = tessera.dask.array(uri, attr, key=key)
    got = computed(client, X)
    ctx = tiledb.Ctx({"sm.encryption_type": "AES_256_GCM", "sm.encryption_key": key} if key else None)
    with tiledb.open(str(uri), ctx=ctx) as A:
        want = A[:]
        want = want[attr] if isinstance(want, dict) else want
    assert got.shape == want.shape
    # Nulls where TileDB-Py has them (a masked array for a nullable attribute).
    assert np.ma.isMaskedArray(got) == np.ma.isMaskedArray(want)
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    got, want = np.ma.getdata(got)[~np.ma.getmaskarray(got)], np.ma.getdata(want)[~np.ma.getmaskarray(want)]
    if want.dtype.kind == "U":
        # Enumeration values: TileDB-Py's fixed-width strings, objects here.
        assert got.dtype == object
        got, want = got.astype(str), want
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def canonical(df):
    """A frame's rows as sorted text, and its dtypes."""
    rows = sorted(repr(tuple(map(repr, r))) for r in df.itertuples(index=False))
    return rows, [str(t) for t in df.dtypes]


@pytest.mark.parametrize("uri,key", arrays())
def test_dataframes_equal_one_process(client, uri, key):
    import dask

    A = tessera.open(uri, key=key)
    with dask.config.set({"dataframe.convert-string": False}):
        got = computed(client, tessera.dask.dataframe(uri, key=key, npartitions=3))
    want = tessera.dask.to_pandas(A.read())
    assert list(got.columns) == list(want.columns)
    assert [str(t) for t in got.dtypes] == [str(t) for t in want.dtypes]
    assert canonical(got.reset_index(drop=True)) == canonical(want)
    # What dask was told before any cell was read is what was read (with
    # dask's own string conversion; categories unknown until read).
    df = tessera.dask.dataframe(uri, key=key, npartitions=3)
    got = computed(client, df)
    assert [t.name for t in df._meta.dtypes] == [t.name for t in got.dtypes]


def test_a_sparse_dataframe_is_cut_into_partitions_that_each_read_their_own_cells(client):
    path = next(p.values[0] for p in arrays() if p.id == "tiledb-0.36.1/sparse_2d")
    df = tessera.dask.dataframe(path, npartitions=4)
    assert df.npartitions > 1
    parts = [computed(client, df.get_partition(i)) for i in range(df.npartitions)]
    # Side by side the partitions hold every cell once.
    assert sum(len(p) for p in parts) == len(tessera.open(path).read())
    firsts = [(p["x"].min(), p["x"].max()) for p in parts if len(p)]
    assert all(a[1] < b[0] for a, b in zip(firsts, firsts[1:]))


def test_a_condition_and_attributes_narrow_every_partition(client):
    path = next(p.values[0] for p in arrays() if p.id == "tiledb-0.36.1/sparse_2d")
    A = tessera.open(path)
    attr = A.schema.attrs[0].name
    where = f"{attr} > 0"
    got = computed(client, tessera.dask.dataframe(path, attrs=[attr], where=where, npartitions=3))
    want = tessera.dask.to_pandas(A.read(attrs=[attr], where=where))
    assert list(got.columns) == ["x", "y", attr]
    assert canonical(got.reset_index(drop=True)) == canonical(want)


def test_an_array_pickles_as_what_reopens_it_as_it_was(tmp_path):
    uri = str(tmp_path / "a")
    schema = tessera.Schema([tessera.Dimension("x", "INT64", (0, 99), 10)],
                            [tessera.Attribute("v", "INT32")], sparse=True)
    tessera.create(uri, schema)
    tessera.write(uri, {"x": np.arange(5, dtype=np.int64), "v": np.arange(5, dtype=np.int32)})
    A = tessera.open(uri)
    B = pickle.loads(pickle.dumps(A))
    assert B.uri == A.uri and B.read().equals(A.read())
    # Written after the open: the reopened array does not see it.
    tessera.write(uri, {"x": np.arange(5, 10, dtype=np.int64), "v": np.arange(5, dtype=np.int32)})
    assert len(pickle.loads(pickle.dumps(A)).read()) == 5
    assert len(tessera.open(uri).read()) == 10


def test_tasks_read_only_what_the_collection_saw(client, tmp_path):
    uri = str(tmp_path / "d")
    schema = tessera.Schema([tessera.Dimension("r", "INT64", (0, 63), 16),
                             tessera.Dimension("c", "INT64", (0, 63), 16)],
                            [tessera.Attribute("v", "FLOAT64")])
    tessera.create(uri, schema)
    values = np.arange(64 * 64, dtype=np.float64).reshape(64, 64)
    tessera.write(uri, {"v": values.ravel()}, subarray={"r": (0, 63), "c": (0, 63)})
    X = tessera.dask.array(uri)
    assert X.chunks == ((16,) * 4, (16,) * 4)
    tessera.write(uri, {"v": np.zeros(64 * 64)}, subarray={"r": (0, 63), "c": (0, 63)})
    np.testing.assert_array_equal(computed(client, X), values)
    np.testing.assert_array_equal(computed(client, tessera.dask.array(uri)), 0)


def test_on_s3_workers_open_the_array_from_storage_options(client, moto, monkeypatch):
    for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ALLOW_HTTP"):
        monkeypatch.delenv(name)
    local = next(p.values[0] for p in arrays() if p.id == "tiledb-0.36.1/sparse_2d")
    uri = f"s3://{S3_BUCKET}/dask_sparse"
    A = tessera.open(local)
    options = {"aws_endpoint": moto, "aws_access_key_id": "test", "aws_secret_access_key": "test",
               "aws_region": "us-east-1", "aws_allow_http": True}
    tessera.create(uri, A.schema, storage_options=options)
    tessera.write(uri, A.read(), storage_options=options)
    # Neither this process's environment nor the workers' reaches the
    # store: the options do, carried by every task.
    df = tessera.dask.dataframe(uri, npartitions=3, storage_options=options)
    got = computed(client, df)
    assert canonical(got.reset_index(drop=True)) == canonical(tessera.dask.to_pandas(A.read()))


def test_errors_name_the_array():
    path = next(p.values[0] for p in arrays() if p.id == "tiledb-0.36.1/sparse_2d")
    with pytest.raises(tessera.TesseraError, match="sparse array"):
        tessera.dask.array(path)
    with pytest.raises(tessera.TesseraError, match="no_such_field"):
        tessera.dask.dataframe(path, where="no_such_field > 1")
    with pytest.raises(tessera.TesseraError, match="v_missing"):
        tessera.dask.array(next(p.values[0] for p in arrays() if p.id == "tiledb-0.36.1/dense_large"), "v_missing")


EXPERIMENTS = sorted(p / "experiment" for p in (TESTDATA / "soma").iterdir() if (p / "experiment").is_dir())


def same_matrix(ours, theirs):
    """Equal sparse (or dense) matrices: shape, dtype and every cell."""
    ours = ours.toarray() if hasattr(ours, "toarray") else np.asarray(ours)
    theirs = theirs.toarray() if hasattr(theirs, "toarray") else np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=[p.parent.name for p in EXPERIMENTS])
def test_soma_to_anndata_with_dask_equals_tiledbsoma(client, experiment):
    import dask.array as da
    import tiledbsoma
    import tiledbsoma.io

    import tessera.soma as tsoma

    ours = tsoma.open(str(experiment))
    with tiledbsoma.open(str(experiment)) as theirs:
        for ms in theirs.ms.keys():
            if theirs.ms[ms].X["data"].soma_type != "SOMASparseNDArray":
                continue
            eager = tiledbsoma.io.to_anndata(theirs, ms, X_layer_name="data")
            lazy = tiledbsoma.io.to_anndata(theirs, ms, X_layer_name="data", dask={"chunk_size": 7})
            # tiledb_config is taken (storage keys apply to object stores only).
            got = tsoma.io.to_anndata(ours, ms, "data",
                                      dask={"chunk_size": 7, "tiledb_config": {"vfs.s3.region": "us-east-1"}})
            assert isinstance(got.X, da.Array) and got.X.chunks == lazy.X.chunks
            X = computed(client, got.X)
            same_matrix(X, lazy.X.compute(scheduler="sync"))
            if X.shape == eager.X.shape:
                same_matrix(X, eager.X)
            assert got.obs.equals(eager.obs) and got.var.equals(eager.var)
        query = {"value_filter": "cell_type != 'no such type'"}
        tq = theirs.axis_query("RNA", obs_query=tiledbsoma.AxisQuery(**query),
                               var_query=tiledbsoma.AxisQuery(coords=(slice(2, 9),)))
        oq = ours.axis_query("RNA", obs_query=tsoma.AxisQuery(**query),
                             var_query=tsoma.AxisQuery(coords=(slice(2, 9),)))
        if theirs.ms["RNA"].X["data"].soma_type == "SOMASparseNDArray":
            got = oq.to_anndata("data", dask={"chunk_size": (5, 3)})
            assert got.X.chunks == tq.to_anndata("data", dask={"chunk_size": (5, 3)}).X.chunks
            same_matrix(computed(client, got.X), tq.to_anndata("data").X)


def test_soma_objects_pickle_as_what_reopens_them():
    import tessera.soma as tsoma

    exp = tsoma.open(str(EXPERIMENTS[0]))
    again = pickle.loads(pickle.dumps(exp))
    assert type(again) is type(exp) and again.uri == exp.uri
    X = exp.ms["RNA"].X["data"]
    X2 = pickle.loads(pickle.dumps(X))
    assert type(X2) is type(X) and X2.read().tables().concat().equals(X.read().tables().concat())
    assert pickle.loads(pickle.dumps(exp.obs)).read().concat().equals(exp.obs.read().concat())
    # An axis query pickles with its experiment and selection.
    query = exp.axis_query("RNA", obs_query=tsoma.AxisQuery(value_filter="cell_type != 'no such type'"))
    again = pickle.loads(pickle.dumps(query))
    a, b = query.to_anndata("data"), again.to_anndata("data")
    same_matrix(a.X, b.X)
    assert a.obs.equals(b.obs) and a.var.equals(b.var)


def h5ad_parts(tmp_path, n=3):
    """scanpy's pbmc68k_reduced.h5ad cut into ``n`` files of cells, each
    with some genes of its own; the files after the first without obsp,
    varp and uns (which tiledbsoma's appends refuse)."""
    import anndata

    from test_soma_ingest import _scanpy_dataset

    whole = anndata.read_h5ad(_scanpy_dataset(tmp_path))
    paths = []
    for k, rows in enumerate(np.array_split(np.arange(whole.n_obs), n)):
        genes = np.arange(whole.n_vars)[(np.arange(whole.n_vars) + k) % 5 != 0]
        part = whole[rows, genes].copy()
        if k:
            part.obsp, part.varp, part.uns = {}, {}, {}
        paths.append(str(tmp_path / f"part{k}.h5ad"))
        part.write_h5ad(paths[-1])
    return paths


def register_and_append_with_tiledbsoma(uri, paths):
    import tiledbsoma.io as sio

    sio.from_h5ad(uri, paths[0], "RNA")
    rd = sio.register_h5ads(uri, paths[1:], measurement_name="RNA", obs_field_name="obs_id",
                            var_field_name="var_id", append_obsm_varm=True)
    rd.prepare_experiment(uri)
    for path in paths[1:]:
        sio.from_h5ad(uri, path, "RNA", registration_mapping=rd)


def test_from_h5ads_on_a_cluster_equals_tiledbsoma_appending_one_by_one(client, tmp_path):
    import tessera.soma as tsoma
    from test_soma_ingest import same_experiments

    *paths, later = h5ad_parts(tmp_path, 5)
    done = []
    tsoma.io.from_h5ads(str(tmp_path / "ours"), paths, "RNA", client=client, append_obsm_varm=True,
                        progress=done.append)
    register_and_append_with_tiledbsoma(str(tmp_path / "theirs"), paths)
    assert sorted(done) == sorted(paths)
    same_experiments(tmp_path / "ours", tmp_path / "theirs")
    # Nothing of the plan is left in the experiment's metadata.
    assert not [k for k in tsoma.open(str(tmp_path / "ours")).metadata if k.startswith("tessera_from_h5ads")]
    # tiledbsoma appends a fifth file to both alike.
    import tiledbsoma.io as sio

    for uri in (str(tmp_path / "ours"), str(tmp_path / "theirs")):
        rd = sio.register_h5ads(uri, [later], measurement_name="RNA", obs_field_name="obs_id",
                                var_field_name="var_id", append_obsm_varm=True)
        rd.prepare_experiment(uri)
        sio.from_h5ad(uri, later, "RNA", registration_mapping=rd)
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


class KillOnce(distributed.WorkerPlugin):
    """Ends a worker's process as it starts writing a file of from_h5ads
    (once: the file ``sentinel`` records it)."""

    def __init__(self, sentinel):
        self.sentinel = sentinel

    def transition(self, key, start, finish, **kwargs):
        import os

        if finish == "executing" and str(key).startswith("tessera-from-h5ads-") and not os.path.exists(self.sentinel):
            open(self.sentinel, "w").close()
            os._exit(1)


def test_from_h5ads_finishes_when_run_again_after_a_worker_died(tmp_path):
    import dask

    import tessera.soma as tsoma
    from test_soma_ingest import same_experiments

    paths = h5ad_parts(tmp_path, 4)
    uri = str(tmp_path / "ours")
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=50)
    with cluster, distributed.Client(cluster) as c:
        c.register_plugin(KillOnce(str(tmp_path / "killed")))
        with pytest.raises(tsoma.SOMAError, match="run the same call again"):
            tsoma.io.from_h5ads(uri, paths, "RNA", client=c, append_obsm_varm=True)
        assert (tmp_path / "killed").exists()
        # Written before the failure: the first file and marks of those done.
        exp = tsoma.open(uri)
        assert "tessera_from_h5ads" in exp.metadata
        tsoma.io.from_h5ads(uri, paths, "RNA", client=c, append_obsm_varm=True)
    register_and_append_with_tiledbsoma(str(tmp_path / "theirs"), paths)
    same_experiments(uri, tmp_path / "theirs")
