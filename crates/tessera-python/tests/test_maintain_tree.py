"""Group-wide maintenance: ``tessera.consolidate_tree`` / ``vacuum_tree``
on a SOMA experiment
appended to (several fragments per array), locally and on S3 through the
fault proxy. tiledbsoma (libtiledb) reads the experiment back as before,
TileDB-Py opens every array, and after a second pass of commits
consolidation and vacuum (the first's leaves ignore files, as
libtiledb's does) nothing is left to do."""

import shutil

import tiledb
import tiledbsoma
import tiledbsoma.io

import tessera
from conftest import TESTDATA, faults_survived, maintain_tree, same_anndata
from test_s3 import BUCKET, fault_proxy, libtiledb_ctx, upload

EXPERIMENT = TESTDATA / "soma" / "experiment_appended" / "experiment"


def _anndata(uri, context=None):
    with tiledbsoma.open(str(uri), context=context) as exp:
        return tiledbsoma.io.to_anndata(exp, "RNA", X_layer_name="data")


def _fragments(uri, ctx=None):
    return len(tiledb.array_fragments(uri, ctx=ctx))


def _check_tree(uri, arrays, ctx=None):
    """Every array of the tree opens in TileDB-Py and has one fragment."""
    for a in arrays:
        assert a.error is None, a
        with tiledb.open(a.uri, ctx=ctx) as A:
            A.schema
        assert _fragments(a.uri, ctx) <= 1, a


def test_consolidate_and_vacuum_a_soma_experiment(tmp_path):
    exp = tmp_path / "experiment"
    shutil.copytree(EXPERIMENT, exp)
    before = _anndata(exp)
    seen = []
    done = tessera.consolidate_tree(exp, jobs=3, memory_budget=64 << 20,
                                    progress=lambda i, n, a: seen.append((i, n, a.member)))
    assert sorted(i for i, _, _ in seen) == list(range(len(done)))
    assert {n for _, n, _ in seen} == {len(done)}
    assert {a.member for a in done} >= {"obs", "ms/RNA/var", "ms/RNA/X/data"}, done
    assert [m for m, _ in done[0].steps] == ["fragments", "commits", "fragment_meta", "array_meta"]
    assert any("fragments into" in did for a in done for _, did in a.steps), done
    vacuumed = tessera.vacuum_tree(exp)
    assert any("removed" in did for a in vacuumed for _, did in a.steps), vacuumed
    _check_tree(exp, vacuumed)
    same_anndata(_anndata(exp), before)
    # A second pass consolidates the commits again without those of the
    # fragments vacuumed (ignored till then) and vacuums the rest; after
    # it, nothing is left to do.
    tessera.consolidate_tree(exp, modes=["commits"])
    assert any("removed" in did for a in tessera.vacuum_tree(exp, modes=["commits"]) for _, did in a.steps)
    again = tessera.consolidate_tree(exp)
    assert all(did.startswith("nothing") for a in again for _, did in a.steps), again
    # tiledbsoma appends to what tessera consolidated.
    with tiledbsoma.open(str(exp), "w") as e:
        e.obs.metadata["touched"] = "yes"


def test_a_tree_on_s3_through_faults(moto, tmp_path):
    uri = f"s3://{BUCKET}/tree"
    upload(str(EXPERIMENT), uri, moto)
    before = _anndata(EXPERIMENT)
    report = tmp_path / "faults.json"
    with fault_proxy(moto, report, 0.05, seed=5) as endpoint:
        vacuumed = maintain_tree(uri, {"aws_endpoint": endpoint, "aws_allow_http": "true"})
    faults_survived(report, "on S3")
    ctx = libtiledb_ctx(moto)
    _check_tree(uri, vacuumed, ctx)
    context = tiledbsoma.SOMATileDBContext(tiledb_config=dict(ctx.config().items()))
    same_anndata(_anndata(uri, context), before)
