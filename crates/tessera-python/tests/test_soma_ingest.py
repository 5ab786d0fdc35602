"""tessera.soma.io writes experiments as tiledbsoma 2.3.0 does: the same
AnnData ingested by both gives the same objects, metadata and schemas, and
tiledbsoma (real libtiledb) reads back from tessera's what it reads from
its own; tiledbsoma appends to what tessera wrote."""

import json
import zipfile
from pathlib import Path

import anndata as ad
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import scipy.sparse as sp

from conftest import REPO, same_anndata, walk

import tessera
import tessera.soma as tsoma

import tiledbsoma as soma  # real libtiledb, from PyPI
import tiledbsoma.io as sio


def rich_anndata(n=60, m=25, seed=0, dtype=np.float32):
    """An AnnData holding every element kind tiledbsoma stores."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, m, density=0.2, format="csr", dtype=dtype, random_state=seed)
    obs = pd.DataFrame(
        {
            "cell_type": pd.Categorical(rng.choice(["B", "T", None], n)),
            "stage": pd.Categorical(rng.choice(["early", "late"], n), categories=["early", "late"], ordered=True),
            "batch": pd.Categorical(rng.choice([1, 2, 3], n)),
            "empty_cat": pd.Categorical([None] * n, categories=[]),
            "n_genes": rng.integers(0, 100, n),
            "small": rng.integers(0, 5, n).astype(np.int8),
            "score": rng.random(n),
            "half": rng.random(n).astype(np.float16),
            "flag": rng.random(n) > 0.5,
            "name": [f"c{i}" if i % 7 else None for i in range(n)],
        },
        index=[f"cell{i}" for i in range(n)],
    )
    var = pd.DataFrame(
        {"gene_name": [f"g{j}" for j in range(m)], "hv": rng.random(m) > 0.5, "mean": rng.random(m)},
        index=pd.Index([f"gene{j}" for j in range(m)], name="gene_ids"),
    )
    a = ad.AnnData(
        X=X,
        obs=obs,
        var=var,
        layers={"counts": X.copy(), "dense_ints": rng.integers(0, 4, (n, m)).astype(np.int32)},
        obsm={"X_pca": rng.random((n, 3)), "X_sparse": sp.random(n, 4, density=0.5, format="csr")},
        varm={"PCs": rng.random((m, 2)).astype(np.float32)},
        obsp={"distances": sp.random(n, n, density=0.1, format="csr")},
        varp={"corr": sp.random(m, m, density=0.1, format="csc")},
        uns={
            "a": 1,
            "f": 2.5,
            "s": "str",
            "flag": True,
            "np_int": np.int64(7),
            "d": {"x": np.arange(3), "inner": {"y": np.array([[1.5, 2.5], [3.5, 4.5]])}},
            "strs": np.array(["u", "v", ""]),
            "strs2": np.array([["a", "b"], ["c", "d"]]),
            "df": pd.DataFrame({"q": [1, 2], "r": ["x", "y"]}),
            "colors": ["#ff0000", "#00ff00"],
        },
    )
    a.raw = a[:, : max(1, m - 5)].copy()
    return a


def _schema_doc(uri):
    """An array's schema as tessera prints it, less what names one write.
    Enumerations are sorted by name: libtiledb lists them in the order of
    a hash map of its own, which carries no meaning."""
    doc = json.loads(tessera.open(uri)._native.schema_json())
    for k in ("timestamp_range", "name", "format_version"):
        doc.pop(k, None)
    if "enumerations" in doc:
        doc["enumerations"] = sorted(doc["enumerations"], key=lambda e: e["name"])
    return doc


def tree(uri):
    """Every object of an experiment, as tiledbsoma opens it: its SOMA
    type, metadata, and (arrays) schema."""
    with soma.open(str(uri)) as e:
        out = {"": (e.soma_type, dict(e.metadata), None)}
        for path, obj in walk(e):
            doc = _schema_doc(obj.uri) if hasattr(obj, "read") else None
            out[path] = (obj.soma_type, dict(obj.metadata), doc)
        return out


def same_experiments(ours, theirs, X_layer_name="data"):
    """The experiments at ``ours`` and ``theirs`` hold the same objects,
    metadata, schemas, and (read by tiledbsoma) the same AnnData."""
    a, b = tree(ours), tree(theirs)
    assert sorted(a) == sorted(b)
    for path in a:
        for i, what in enumerate(("SOMA type", "metadata", "schema")):
            assert a[path][i] == b[path][i], f"{path}: {what}:\n{a[path][i]}\n!=\n{b[path][i]}"
    with soma.open(str(ours)) as e1, soma.open(str(theirs)) as e2:
        for ms in e2.ms.keys():
            layer = X_layer_name if ms != "raw" else "data"
            same_anndata(sio.to_anndata(e1, ms, X_layer_name=layer), sio.to_anndata(e2, ms, X_layer_name=layer))


def store_parts(tmp_path, prefix, seed):
    """Two parts for an experiment on an object store: the first as an
    ``.h5ad`` file (its path), the second an AnnData tiledbsoma appends
    (new cells named with ``prefix``; no obsp, varp or uns, which appends
    refuse)."""
    first, second = rich_anndata(n=40, m=12, seed=seed), rich_anndata(n=20, m=14, seed=seed + 1)
    second.obs.index = [f"{prefix}{i}" for i in range(second.n_obs)]
    del second.obsp["distances"], second.varp["corr"]
    second.uns = {}
    path = tmp_path / "first.h5ad"
    first.write_h5ad(path)
    return path, second


def append_with_tiledbsoma(targets, adata, context):
    """tiledbsoma registers ``adata`` and appends it to each experiment."""
    for target in targets:
        rd = sio.register_anndatas(target, [adata.copy()], measurement_name="RNA", obs_field_name="obs_id",
                                   var_field_name="gene_ids", append_obsm_varm=True, context=context)
        rd.prepare_experiment(target, context=context)
        sio.from_anndata(target, adata.copy(), "RNA", registration_mapping=rd, context=context)


def test_from_anndata_writes_what_tiledbsoma_writes(tmp_path):
    a = rich_anndata()
    tsoma.io.from_anndata(tmp_path / "ours", a.copy(), "RNA")
    sio.from_anndata(str(tmp_path / "theirs"), a.copy(), "RNA")
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


def test_from_h5ad_streams_a_backed_file(tmp_path):
    a = rich_anndata(n=300, m=40, seed=3)
    path = tmp_path / "in.h5ad"
    a.write_h5ad(path)
    tsoma.io.from_h5ad(tmp_path / "ours", path, "RNA")
    sio.from_h5ad(str(tmp_path / "theirs"), str(path), "RNA")
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


def test_csc_and_dense_x_in_small_chunks(tmp_path, monkeypatch):
    """Chunks smaller than the matrix: CSC by columns, dense by rows."""
    from tessera.soma import _matrices

    monkeypatch.setattr(_matrices, "GOAL_CHUNK_NNZ", 50)
    a = rich_anndata(n=80, m=30, seed=5)
    a.X = sp.csc_matrix(a.X)
    a.layers["dense"] = a.X.toarray()
    path = tmp_path / "in.h5ad"
    a.write_h5ad(path)
    tsoma.io.from_h5ad(tmp_path / "ours", path, "RNA")
    sio.from_h5ad(str(tmp_path / "theirs"), str(path), "RNA")
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


def test_h5ad_matrices_slice_as_scipy(tmp_path):
    """A sparse matrix left in the file gives what scipy gives: slices of
    its compressed axis read straight from the file, any other index
    through anndata; a CSC file ingested as dense X reads it by rows."""
    from tessera.soma._h5ad import H5ADSource

    a = rich_anndata(n=50, m=20, seed=8)
    a.X = sp.csc_matrix(a.X)
    a.layers["csr"] = sp.csr_matrix(a.X)
    path = tmp_path / "in.h5ad"
    a.write_h5ad(path)
    with H5ADSource(path) as source:
        for stored, want in ((source.X, a.X), (source.layers["csr"], a.layers["csr"])):
            assert stored.shape == want.shape and stored.nnz == want.nnz
            axis = 1 if stored.format == "csc" else 0
            for s in (slice(0, 7), slice(7, 7), slice(-5, None), slice(3, 100)):
                key = (slice(None), s) if axis else (s, slice(None))
                got = stored[key]
                assert got.format == stored.format
                assert (got != want[key]).nnz == 0
            other = (slice(2, 9), slice(None)) if axis else (slice(None), slice(2, 9))
            assert (sp.csr_matrix(stored[other]) != sp.csr_matrix(want[other])).nnz == 0
    tsoma.io.from_h5ad(tmp_path / "ours", path, "RNA", X_kind=tsoma.DenseNDArray)
    # tiledbsoma's from_h5ad fails on a CSC file as dense X (its chunked
    # write asks the backed matrix for `ndim`): the same data from memory.
    sio.from_anndata(str(tmp_path / "theirs"), ad.read_h5ad(path), "RNA", X_kind=soma.DenseNDArray)
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


def test_dense_x_kind(tmp_path):
    a = rich_anndata(n=40, m=12, seed=2)
    tsoma.io.from_anndata(tmp_path / "ours", a.copy(), "RNA", X_kind=tsoma.DenseNDArray)
    sio.from_anndata(str(tmp_path / "theirs"), a.copy(), "RNA", X_kind=soma.DenseNDArray)
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


def test_schema_only_then_tiledbsoma_writes_into_it(tmp_path):
    a = rich_anndata(n=30, m=10, seed=4)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    tsoma.io.from_anndata(ours, a.copy(), "RNA", ingest_mode="schema_only")
    sio.from_anndata(str(theirs), a.copy(), "RNA", ingest_mode="schema_only")
    assert {k: v[0] for k, v in tree(ours).items()} == {k: v[0] for k, v in tree(theirs).items()}
    with soma.open(str(ours)) as e:
        assert e.obs.count == 0 and e.ms["RNA"].X["data"].nnz == 0


def test_names_and_metadata_options(tmp_path):
    a = rich_anndata(n=20, m=8, seed=6)
    kwargs = dict(obs_id_name="barcode", var_id_name="symbol", X_layer_name="raw_counts",
                  additional_metadata={"origin": "test"}, uns_keys=["a", "d"])
    tsoma.io.from_anndata(tmp_path / "ours", a.copy(), "RNA", **kwargs)
    sio.from_anndata(str(tmp_path / "theirs"), a.copy(), "RNA", **kwargs)
    same_experiments(tmp_path / "ours", tmp_path / "theirs", X_layer_name="raw_counts")


def test_ingesting_twice_is_refused(tmp_path):
    a = rich_anndata(n=10, m=5)
    tsoma.io.from_anndata(tmp_path / "e", a.copy(), "RNA")
    with pytest.raises(tsoma.SOMAError, match="already exists"):
        tsoma.io.from_anndata(tmp_path / "e", a.copy(), "RNA")


def test_bad_input_is_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match="not an AnnData"):
        tsoma.io.from_anndata(tmp_path / "e", {"X": 1}, "RNA")
    with pytest.raises(ValueError, match="ingest_mode"):
        tsoma.io.from_anndata(tmp_path / "e", rich_anndata(n=5, m=3), "RNA", ingest_mode="sideways")


def _scanpy_dataset(tmp_path):
    """scanpy's bundled pbmc68k_reduced.h5ad, from the scanpy wheel
    (.ci/run downloads it: the wheel alone, no install)."""
    wheels = sorted((REPO / "target" / "datasets").glob("scanpy-*.whl"))
    if not wheels:
        pytest.fail("target/datasets holds no scanpy wheel: .ci/run downloads it (pip download --no-deps scanpy)")
    out = tmp_path / "pbmc68k_reduced.h5ad"
    with zipfile.ZipFile(wheels[-1]) as z:
        out.write_bytes(z.read("scanpy/datasets/10x_pbmc68k_reduced.h5ad"))
    return out


def test_real_dataset_scanpy_pbmc68k(tmp_path):
    path = _scanpy_dataset(tmp_path)
    tsoma.io.from_h5ad(tmp_path / "ours", path, "RNA")
    sio.from_h5ad(str(tmp_path / "theirs"), str(path), "RNA")
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


def test_tiledbsoma_appends_to_what_tessera_wrote(tmp_path):
    """tiledbsoma registers a second AnnData (new cells, some new genes,
    a new category) against tessera's experiment and appends it."""
    first = rich_anndata(n=50, m=20, seed=7)
    second = rich_anndata(n=30, m=22, seed=8)
    second.obs.index = [f"new{i}" for i in range(30)]
    second.obs["cell_type"] = pd.Categorical(np.where(np.arange(30) % 2, "NK", "B"))
    # tiledbsoma appends no obsp or varp.
    del second.obsp["distances"], second.varp["corr"]
    # Nor data frames into uns; its scalars and arrays it writes again.
    second.uns = {"a": 2, "d": {"x": np.arange(3) * 2}}
    for uri, ingest in ((tmp_path / "ours", tsoma.io.from_anndata), (tmp_path / "theirs", sio.from_anndata)):
        ingest(str(uri), first.copy(), "RNA")
        rd = sio.register_anndatas(str(uri), [second.copy()], measurement_name="RNA", obs_field_name="obs_id",
                                   var_field_name="gene_ids", append_obsm_varm=True)
        rd.prepare_experiment(str(uri))
        sio.from_anndata(str(uri), second.copy(), "RNA", registration_mapping=rd)
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


def _append_both_ways(tmp_path, register, ingest_first, ingest_more, inputs):
    """Ingests ``inputs[0]`` with ``ingest_first``, then registers the rest
    with ``register`` and appends them with ``ingest_more``; returns the URI."""
    uri = str(tmp_path)
    ingest_first(uri, inputs[0].copy(), "RNA")
    rd = register(uri, [a.copy() for a in inputs[1:]], measurement_name="RNA", obs_field_name="obs_id",
                  var_field_name="gene_ids", append_obsm_varm=True)
    rd.prepare_experiment(uri)
    for a in inputs[1:]:
        ingest_more(uri, a.copy(), "RNA", registration_mapping=rd)
    return uri


def _appendable(n_inputs=3):
    out = []
    for k in range(n_inputs):
        a = rich_anndata(n=30 + 5 * k, m=18 + 2 * k, seed=20 + k)
        a.obs.index = [f"b{k}_{i}" for i in range(a.n_obs)]
        a.obs["cell_type"] = pd.Categorical(np.where(np.arange(a.n_obs) % 2, f"type{k}", "B"))
        if k:
            del a.obsp["distances"], a.varp["corr"]
            a.uns = {"a": k}
        out.append(a)
    return out


@pytest.mark.parametrize("who", ["tessera appends to tessera", "tessera appends to tiledbsoma"])
def test_tessera_registers_and_appends(tmp_path, who):
    """tessera.soma.io's registration and appends give the experiment
    tiledbsoma's give: new cells, new genes, new categories, grown shapes."""
    inputs = _appendable()
    first = tsoma.io.from_anndata if who == "tessera appends to tessera" else sio.from_anndata
    ours = _append_both_ways(tmp_path / "ours", tsoma.io.register_anndatas, first, tsoma.io.from_anndata, inputs)
    theirs = _append_both_ways(tmp_path / "theirs", sio.register_anndatas, sio.from_anndata, sio.from_anndata,
                               inputs)
    same_experiments(ours, theirs)
    assert tsoma.io.get_experiment_shapes(ours)["obs"]["domain"] == ((0, 30 + 35 + 40 - 1),)


def test_register_h5ads_matches_tiledbsoma(tmp_path):
    inputs = _appendable(2)
    paths = []
    for i, a in enumerate(inputs):
        paths.append(tmp_path / f"in{i}.h5ad")
        a.write_h5ad(paths[-1])
    sio.from_h5ad(str(tmp_path / "exp"), str(paths[0]), "RNA")
    kwargs = dict(measurement_name="RNA", obs_field_name="obs_id", var_field_name="gene_ids", append_obsm_varm=True)
    ours = tsoma.io.register_h5ads(str(tmp_path / "exp"), [str(paths[1])], **kwargs)
    theirs = sio.register_h5ads(str(tmp_path / "exp"), [str(paths[1])], **kwargs)
    assert ours.get_obs_shape() == theirs.get_obs_shape()
    assert ours.get_var_shapes() == theirs.get_var_shapes()
    assert ours.obs_axis.joinid_map.equals(theirs.obs_axis.joinid_map)
    for name in theirs.var_axes:
        assert ours.var_axes[name].joinid_map.equals(theirs.var_axes[name].joinid_map), name
        assert ours.var_axes[name].enum_values == theirs.var_axes[name].enum_values, name
    assert ours.obs_axis.enum_values == theirs.obs_axis.enum_values


def test_appends_need_prepare_and_room(tmp_path):
    inputs = _appendable(2)
    uri = str(tmp_path / "e")
    tsoma.io.from_anndata(uri, inputs[0].copy(), "RNA")
    rd = tsoma.io.register_anndatas(uri, [inputs[1].copy()], measurement_name="RNA", obs_field_name="obs_id",
                                    var_field_name="gene_ids", append_obsm_varm=True)
    with pytest.raises(tsoma.SOMAError, match="must be prepared"):
        tsoma.io.from_anndata(uri, inputs[1].copy(), "RNA", registration_mapping=rd)
    with pytest.raises(ValueError, match="obsp and varp"):
        tsoma.io.register_anndatas(uri, [inputs[0]], measurement_name="RNA", obs_field_name="obs_id",
                                   var_field_name="gene_ids", append_obsm_varm=True)
    with pytest.raises(tsoma.SOMAError, match="Duplicate obs IDs"):
        again = inputs[1].copy()
        again.obs.index = inputs[0].obs.index[:5].append(again.obs.index[5:])
        tsoma.io.register_anndatas(uri, [again], measurement_name="RNA", obs_field_name="obs_id",
                                   var_field_name="gene_ids", append_obsm_varm=True)


def test_registration_labels_are_kept_natively(tmp_path):
    """The registry behind register_*: labels of any dtype by their text,
    joinids as tiledbsoma assigns them, missing labels named, and a
    mapping that pickles (as Dask and multiprocessing send it) and
    subsets with the joinids and shape it had."""
    import pickle

    inputs = _appendable(2)
    uri = str(tmp_path / "e")
    sio.from_anndata(uri, inputs[0].copy(), "RNA")
    kwargs = dict(measurement_name="RNA", obs_field_name="obs_id", var_field_name="gene_ids", append_obsm_varm=True)
    rd = tsoma.io.register_anndatas(uri, [inputs[1].copy()], **kwargs)
    theirs = sio.register_anndatas(uri, [inputs[1].copy()], **kwargs)
    back = pickle.loads(pickle.dumps(rd))
    assert back.obs_axis == rd.obs_axis and back.var_axes == rd.var_axes
    assert back.get_obs_shape() == theirs.get_obs_shape() == len(inputs[0]) + len(inputs[1])
    labels = list(inputs[1].obs.index[:3])
    assert list(back.obs_axis.id_mapping_from_values(labels).data) == list(
        theirs.obs_axis.id_mapping_from_values(labels).data)
    with pytest.raises(ValueError, match=r"obs_id: 1 value\(s\) were not found.*'nope'"):
        rd.obs_axis.id_mapping_from_values(labels + ["nope"])
    part = rd.subset_for_anndata(inputs[1][:4].copy())
    assert len(part.obs_axis) == 4 and part.get_obs_shape() == rd.get_obs_shape()
    numbers = tsoma.io.register_anndatas(None, [ad.AnnData(obs=pd.DataFrame(index=[10, 20, 30]),
                                                           var=pd.DataFrame(index=["g"]))], **kwargs)
    assert list(numbers.obs_axis.id_mapping_from_values([30, 10]).data) == [2, 0]


def _edit(io, uri):
    """Every edit function of ``io`` (tessera.soma.io or tiledbsoma.io),
    applied to the experiment at ``uri`` as a user would after clustering
    and normalising."""
    mod = tsoma if io is tsoma.io else soma

    def frame(df):
        return df.read().concat().to_pandas().drop(columns=["soma_joinid"])

    with mod.Experiment.open(uri) as exp:
        obs = frame(exp.obs).set_index("obs_id")
        var = frame(exp.ms["RNA"].var).set_index("gene_ids")
        n_obs, n_var = len(obs), len(var)
        counts = exp.ms["RNA"].X["counts"].read().tables().concat()
    obs = obs.drop(columns=["score", "batch"])
    obs["leiden"] = pd.Categorical([str(i % 4) for i in range(n_obs)])
    obs["n_genes"] = obs["n_genes"] * 2
    var["dispersion"] = np.linspace(0, 1, n_var)
    rng = np.random.default_rng(11)
    tripled = sp.csr_matrix((counts["soma_data"].to_numpy() * 3,
                             (counts["soma_dim_0"].to_numpy(), counts["soma_dim_1"].to_numpy())), shape=(n_obs, n_var))
    with mod.Experiment.open(uri, "w") as exp:
        io.update_obs(exp, obs)
    with mod.Experiment.open(uri, "w") as exp:
        io.update_var(exp, var, "RNA")
    with mod.Experiment.open(uri, "w") as exp:
        normalised = sp.random(n_obs, n_var, density=0.3, format="csr", dtype=np.float64, random_state=11)
        io.add_X_layer(exp, "RNA", "normalised", normalised)
        io.add_matrix_to_collection(exp, "RNA", "obsm", "X_umap", rng.random((n_obs, 2)))
        io.add_matrix_to_collection(exp, "RNA", "varp", "links", sp.random(n_var, n_var, density=0.2,
                                                                              format="csr", random_state=3))
    with mod.Experiment.open(uri, "w") as exp:
        io.update_matrix(exp.ms["RNA"].X["counts"], tripled.astype(np.float32))


@pytest.mark.parametrize("writer", ["tessera", "tiledbsoma"])
def test_edits_match_tiledbsoma(tmp_path, writer):
    """tessera.soma.io's edits of an experiment (written by either) give the
    experiment tiledbsoma's edits give."""
    a = rich_anndata(n=40, m=15, seed=30)
    ingest = tsoma.io.from_anndata if writer == "tessera" else sio.from_anndata
    ingest(str(tmp_path / "ours"), a.copy(), "RNA")
    sio.from_anndata(str(tmp_path / "theirs"), a.copy(), "RNA")
    _edit(tsoma.io, str(tmp_path / "ours"))
    _edit(sio, str(tmp_path / "theirs"))
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


def test_tiledbsoma_edits_what_tessera_wrote(tmp_path):
    a = rich_anndata(n=40, m=15, seed=31)
    tsoma.io.from_anndata(str(tmp_path / "ours"), a.copy(), "RNA")
    sio.from_anndata(str(tmp_path / "theirs"), a.copy(), "RNA")
    _edit(sio, str(tmp_path / "ours"))
    _edit(sio, str(tmp_path / "theirs"))
    same_experiments(tmp_path / "ours", tmp_path / "theirs")


def test_edits_refuse_what_tiledbsoma_refuses(tmp_path):
    a = rich_anndata(n=20, m=6, seed=32)
    uri = str(tmp_path / "e")
    tsoma.io.from_anndata(uri, a.copy(), "RNA")
    with tsoma.Experiment.open(uri, "w") as exp:
        with pytest.raises(ValueError, match="same row count"):
            tsoma.io.update_obs(exp, a.obs.iloc[:5])
        changed = a.obs.copy()
        changed["n_genes"] = changed["n_genes"].astype(str)
        with pytest.raises(ValueError, match="unsupported type updates:.*n_genes type int64 != string"):
            tsoma.io.update_obs(exp, changed)
        with pytest.raises(tsoma.SOMAError, match="incompatible with target shape"):
            tsoma.io.add_X_layer(exp, "RNA", "bad", sp.random(3, 3, format="csr"))
        with pytest.raises(tsoma.SOMAError, match="already exists"):
            tsoma.io.add_X_layer(exp, "RNA", "counts", sp.random(20, 6, format="csr"))


def test_a_failed_ingestion_leaves_nothing(tmp_path, monkeypatch):
    """A local ingestion is written in a hidden folder and renamed whole:
    one that fails half way leaves neither the experiment nor the folder."""
    from tessera.soma import _matrices

    calls = []
    real = _matrices.write_sparse

    def failing(array, *args, **kwargs):
        calls.append(array.uri)
        if len(calls) == 2:
            raise OSError("disk full (injected)")
        return real(array, *args, **kwargs)

    monkeypatch.setattr(_matrices, "write_sparse", failing)
    with pytest.raises(OSError, match="injected"):
        tsoma.io.from_anndata(tmp_path / "e", rich_anndata(n=10, m=5), "RNA")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(tsoma.DoesNotExistError):
        tsoma.open(str(tmp_path / "e"))
    monkeypatch.setattr(_matrices, "write_sparse", real)
    tsoma.io.from_anndata(tmp_path / "e", rich_anndata(n=10, m=5), "RNA")
    assert [p.name for p in tmp_path.iterdir()] == ["e"]


def test_to_h5ad_writes_what_tiledbsoma_writes(tmp_path):
    a = rich_anndata(n=30, m=10, seed=40)
    sio.from_anndata(str(tmp_path / "e"), a, "RNA")
    with tsoma.open(str(tmp_path / "e")) as ours, soma.open(str(tmp_path / "e")) as theirs:
        tsoma.io.to_h5ad(ours, tmp_path / "ours.h5ad", "RNA")
        sio.to_h5ad(theirs, str(tmp_path / "theirs.h5ad"), "RNA")
    same_anndata(ad.read_h5ad(tmp_path / "ours.h5ad"), ad.read_h5ad(tmp_path / "theirs.h5ad"))


def test_delete_cells_as_tiledbsoma_deletes(tmp_path):
    """delete_cells by coordinates and by value filter (enumerated columns
    too) leave what tiledbsoma's leave; tiledbsoma reads tessera's deletes."""
    a = rich_anndata(n=50, m=12, seed=60)
    for name in ("ours", "theirs"):
        sio.from_anndata(str(tmp_path / name), a.copy(), "RNA")
    edits = [
        ("obs", lambda df: df.delete_cells((slice(0, 9),), value_filter="n_genes > 50")),
        ("obs", lambda df: df.delete_cells(value_filter="cell_type == 'T' and flag == True")),
        ("obs", lambda df: df.delete_cells(([20, 22, 30],))),
        ("ms/RNA/X/data", lambda X: X.delete_cells((slice(40, 49), [1, 3]))),
        ("ms/RNA/X/counts", lambda X: X.delete_cells((slice(None), slice(5, 7)))),
    ]
    for mod, name in ((tsoma, "ours"), (soma, "theirs")):
        for path, edit in edits:
            with mod.open(str(tmp_path / name / path), "d") as obj:
                edit(obj)
    with soma.open(str(tmp_path / "ours")) as ours, soma.open(str(tmp_path / "theirs")) as theirs:
        for path in ("obs", "ms/RNA/X/data", "ms/RNA/X/counts"):
            o, t = ours, theirs
            for part in path.split("/"):
                o, t = o[part], t[part]
            got = o.read().concat() if path == "obs" else o.read().tables().concat()
            want = t.read().concat() if path == "obs" else t.read().tables().concat()
            assert got.to_pylist() == want.to_pylist(), path
    assert theirs_count(tmp_path / "ours") < 50


def theirs_count(uri):
    with soma.open(str(uri)) as exp:
        return exp.obs.count
