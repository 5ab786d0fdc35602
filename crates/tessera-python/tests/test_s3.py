"""Arrays on S3: moto's S3 server on a free loopback port (the program
TESSERA_MOTO_SERVER names; .ci/run installs moto[server] from PyPI).
tessera creates and writes through s3:// and TileDB-Py (libtiledb's own
S3 client) reads back what was written; fixtures uploaded unchanged read
through s3:// as locally."""

import json
import os
import re
import time

import numpy as np
import pytest
import tiledb

import tessera
from conftest import S3_BUCKET as BUCKET
from conftest import TESTDATA, canonical, contract_rows, faulty, same_anndata


def libtiledb_ctx(endpoint):
    return tiledb.Ctx({
        "vfs.s3.endpoint_override": endpoint.removeprefix("http://"), "vfs.s3.scheme": "http",
        "vfs.s3.use_virtual_addressing": "false", "vfs.s3.region": "us-east-1",
        "vfs.s3.aws_access_key_id": "test", "vfs.s3.aws_secret_access_key": "test",
    })


def test_written_through_s3_read_back_by_libtiledb(moto):
    uri = f"s3://{BUCKET}/written"
    tessera.create(uri, tessera.Schema(
        sparse=True,
        dims=[tessera.Dimension("x", "INT64", (0, 1000))],
        attrs=[tessera.Attribute("v", "FLOAT64"), tessera.Attribute("s", "STRING_UTF8", var=True, nullable=True)],
    ))
    x = np.arange(0, 1000, 7, dtype=np.int64)
    s = [None if i % 3 == 0 else f"s{i}" for i in x]
    names = tessera.write(uri, {"x": x, "v": x / 4, "s": s}, timestamp=3)
    assert len(names) == 1
    with tiledb.open(uri, ctx=libtiledb_ctx(moto)) as T:
        got = T.df[:]
    np.testing.assert_array_equal(got["x"].to_numpy(), x)
    np.testing.assert_array_equal(got["v"].to_numpy(), x / 4)
    assert [None if not isinstance(v, str) else v for v in got["s"]] == s
    A = tessera.open(uri)
    assert [f.name for f in A.fragments] == names
    assert A.read().num_rows == len(x)


def test_fixture_through_s3_reads_as_locally(moto):
    local = TESTDATA / "tiledb-0.36.1" / "sparse_strings" / "array"
    uri = f"s3://{BUCKET}/copy"
    # Create and write through s3:// what tessera reads locally.
    A = tessera.open(local)
    tessera.create(uri, A.schema)
    tessera.write(uri, A.read())
    remote = tessera.open(uri)
    assert canonical(contract_rows(remote.read())) == canonical(contract_rows(A.read()))
    assert remote.schema == A.schema


def upload(local, uri, endpoint):
    """Copies the folder ``local`` to ``uri`` with libtiledb's own S3 client."""
    vfs = tiledb.VFS(ctx=libtiledb_ctx(endpoint))
    for folder, _, files in os.walk(local):
        for name in files:
            path = os.path.join(folder, name)
            target = f"{uri}/{os.path.relpath(path, local)}"
            with open(path, "rb") as src:
                data = src.read()
            if not data:
                vfs.touch(target)
                continue
            with vfs.open(target, "wb") as dst:
                dst.write(data)


def test_soma_experiment_through_s3_reads_as_locally(moto):
    import tessera.soma as tsoma
    import tiledbsoma
    import tiledbsoma.io

    local = TESTDATA / "soma" / "experiment_appended" / "experiment"
    uri = f"s3://{BUCKET}/soma_experiment"
    upload(str(local), uri, moto)
    # Members open through the experiment's storage; results as tiledbsoma's.
    with tsoma.open(uri) as ours, tiledbsoma.open(str(local)) as theirs:
        assert ours.ms["RNA"].X["data"].shape == theirs.ms["RNA"].X["data"].shape
        query = dict(value_filter="cell_type == 'B cell'")
        oq = ours.axis_query("RNA", obs_query=tsoma.AxisQuery(**query))
        tq = theirs.axis_query("RNA", obs_query=tiledbsoma.AxisQuery(**query))
        assert oq.obs_joinids().to_pylist() == tq.obs_joinids().to_pylist()
        same_anndata(oq.to_anndata("data"), tq.to_anndata("data"))
        same_anndata(tsoma.io.to_anndata(ours, "RNA", "data"),
                     tiledbsoma.io.to_anndata(theirs, "RNA", X_layer_name="data"))


def test_what_is_at_a_uri_is_seen_not_guessed(moto, tmp_path):
    """tessera.object_type, tessera.tiledb's and tessera.soma's
    DoesNotExistError tell an array, a group and nothing apart by what the
    store lists; a store that does not answer raises, and is never taken
    for nothing there (where a create would then go ahead)."""
    import tessera.soma as tsoma
    import tessera.tiledb as ttiledb

    uri = f"s3://{BUCKET}/object_type"
    upload(str(TESTDATA / "soma" / "experiment_dense" / "experiment"), uri, moto)
    assert tessera.object_type(uri) == "group"
    assert tessera.object_type(f"{uri}/obs") == "array"
    assert tessera.object_type(f"{uri}/nothing") is None
    assert ttiledb.object_type(f"{uri}/obs") == "array"
    assert ttiledb.object_type(f"{uri}/nothing") is None
    with pytest.raises(tsoma.DoesNotExistError):
        tsoma.open(f"{uri}/nothing")
    with fault_proxy(moto, tmp_path / "none.json", 1.0, seed=3) as endpoint:
        ctx = proxied_ctx(endpoint, **{"vfs.s3.connect_max_tries": 0})
        with pytest.raises(ttiledb.TileDBError, match="nothing"):
            ttiledb.object_type(f"{uri}/nothing", ctx=ctx)
        context = tsoma.SOMATileDBContext(tiledb_config=ctx.config().dict("vfs.s3."))
        with pytest.raises(tsoma.SOMAError) as e:
            tsoma.open(f"{uri}/nothing", context=context)
        assert not isinstance(e.value, tsoma.DoesNotExistError), e.value


def test_soma_context_reaches_the_store_without_the_environment(moto, monkeypatch):
    """A SOMATileDBContext's libtiledb keys (tessera.soma's or tiledbsoma's
    own) configure the storage: with no AWS_ variables set, the experiment
    on moto reads as the local copy does."""
    import tessera.soma as tsoma
    import tiledbsoma

    local = TESTDATA / "soma" / "experiment_uns" / "experiment"
    uri = f"s3://{BUCKET}/soma_context"
    upload(str(local), uri, moto)
    for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ALLOW_HTTP"):
        monkeypatch.delenv(name)
    config = {
        "vfs.s3.endpoint_override": moto.removeprefix("http://"), "vfs.s3.scheme": "http",
        "vfs.s3.region": "us-east-1", "vfs.s3.aws_access_key_id": "test",
        "vfs.s3.aws_secret_access_key": "test", "vfs.s3.use_virtual_addressing": "false",
        "sm.memory_budget": "1000000",  # not a storage key: kept, not applied
    }
    want = tsoma.io.to_anndata(tsoma.open(str(local)), "RNA", "data")
    for context in (tsoma.SOMATileDBContext(tiledb_config=config),
                    tiledbsoma.SOMATileDBContext(tiledb_config=config)):
        with tsoma.Experiment.open(uri, context=context) as exp:
            same_anndata(tsoma.io.to_anndata(exp, "RNA", "data"), want)
    with pytest.raises(tessera.TesseraError, match="aws_colour"):
        tessera.open(f"{uri}/obs", storage_options={"aws_colour": "blue"})


def test_view_through_s3_draws_as_locally(moto):
    local = TESTDATA / "tiledb-0.36.1" / "random_sparse" / "array"
    uri = f"s3://{BUCKET}/view_random_sparse"
    upload(str(local), uri, moto)
    image = re.compile(r'<img class="cell-image"[^>]*>')
    ours, theirs = tessera.open(uri).view().html, tessera.open(local).view().html
    assert image.search(ours).group(0) == image.search(theirs).group(0)
    tiles = re.compile(r'<rect class="tile"[^>]*>')
    assert tiles.findall(ours) == tiles.findall(theirs)
    experiment = TESTDATA / "soma" / "experiment_dense" / "experiment"
    upload(str(experiment), f"s3://{BUCKET}/view_experiment", moto)
    page = tessera.open_group(f"s3://{BUCKET}/view_experiment").view().html
    assert page.count('<section class="cells"') == len(
        [m for m in tessera.open_group(experiment).members(recursive=True) if m.type == "array"])


def test_storage_options_write_without_the_environment(moto, monkeypatch):
    """create and write (a dense box too) with storage_options alone reach
    the store; libtiledb reads back what was written, and tessera reads it
    with the same options."""
    for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ALLOW_HTTP"):
        monkeypatch.delenv(name)
    options = {"aws_endpoint": moto, "aws_access_key_id": "test", "aws_secret_access_key": "test",
               "aws_region": "us-east-1", "aws_allow_http": True}
    sparse, dense = f"s3://{BUCKET}/options_sparse", f"s3://{BUCKET}/options_dense"
    tessera.create(sparse, tessera.Schema(sparse=True, dims=[tessera.Dimension("x", "INT64", (0, 99))],
                                          attrs=[tessera.Attribute("v", "FLOAT64")]), storage_options=options)
    tessera.write(sparse, {"x": np.array([3, 1, 7]), "v": np.array([0.5, 1.5, 2.5])}, storage_options=options)
    tessera.create(dense, tessera.Schema(dims=[tessera.Dimension("r", "INT32", (0, 3), tile=2)],
                                         attrs=[tessera.Attribute("a", "INT32")]), storage_options=options)
    tessera.write(dense, {"a": np.arange(4, dtype=np.int32)}, subarray={"r": (0, 3)}, storage_options=options)
    with tiledb.open(sparse, ctx=libtiledb_ctx(moto)) as A:
        got = A[:]
        assert sorted(zip(got["x"].tolist(), got["v"].tolist())) == [(1, 1.5), (3, 0.5), (7, 2.5)]
    with tiledb.open(dense, ctx=libtiledb_ctx(moto)) as A:
        assert A[:]["a"].tolist() == [0, 1, 2, 3]
    assert tessera.open(dense, storage_options=options)[:]["a"].tolist() == [0, 1, 2, 3]
    with pytest.raises(tessera.TesseraError, match="aws_colour"):
        tessera.create(f"s3://{BUCKET}/options_bad", tessera.Schema(
            sparse=True, dims=[tessera.Dimension("x", "INT64", (0, 9))], attrs=[tessera.Attribute("v", "INT8")]),
            storage_options={"aws_colour": "blue"})


def test_soma_ingestion_through_s3(moto, tmp_path):
    """tessera.soma.io writes an experiment straight to S3; tiledbsoma
    (libtiledb's S3 client) reads it as it reads its own local ingestion of
    the same file, then registers and appends a second file to it."""
    import tessera.soma as tsoma
    import tiledbsoma
    import tiledbsoma.io
    from test_soma_ingest import append_with_tiledbsoma, store_parts

    path, second = store_parts(tmp_path, "s3_", 50)
    uri = f"s3://{BUCKET}/ingested"
    tsoma.io.from_h5ad(uri, path, "RNA")
    with pytest.raises(tsoma.SOMAError, match="already exists"):
        tsoma.io.from_h5ad(uri, path, "RNA")
    tiledbsoma.io.from_h5ad(str(tmp_path / "local"), str(path), "RNA")
    context = tiledbsoma.SOMATileDBContext(tiledb_config={
        "vfs.s3.endpoint_override": moto.removeprefix("http://"), "vfs.s3.scheme": "http",
        "vfs.s3.region": "us-east-1", "vfs.s3.aws_access_key_id": "test",
        "vfs.s3.aws_secret_access_key": "test", "vfs.s3.use_virtual_addressing": "false",
    })
    append_with_tiledbsoma((uri, str(tmp_path / "local")), second, context)
    with tiledbsoma.open(uri, context=context) as ours, tiledbsoma.open(str(tmp_path / "local")) as theirs:
        same_anndata(tiledbsoma.io.to_anndata(ours, "RNA"), tiledbsoma.io.to_anndata(theirs, "RNA"))
    # tessera.soma reads the S3 experiment as tiledbsoma reads the local one.
    with tsoma.open(uri) as ours, tiledbsoma.open(str(tmp_path / "local")) as theirs:
        same_anndata(tsoma.io.to_anndata(ours, "RNA"), tiledbsoma.io.to_anndata(theirs, "RNA"))


def test_tiledb_vfs_on_s3(moto):
    """tessera.tiledb's VFS on S3 (TileDB-Py's calls): objects written
    whole, read by range, listed as folders, copied, moved and removed;
    libtiledb's own VFS sees the same objects."""
    import tessera.tiledb as ttiledb

    ctx = ttiledb.Ctx({"vfs.s3.endpoint_override": moto.removeprefix("http://"), "vfs.s3.scheme": "http",
                       "vfs.s3.region": "us-east-1", "vfs.s3.aws_access_key_id": "test",
                       "vfs.s3.aws_secret_access_key": "test", "vfs.s3.use_virtual_addressing": "false"})
    vfs = ttiledb.VFS(ctx=ctx)
    base = f"s3://{BUCKET}/vfs"
    assert vfs.supports("s3") and not vfs.supports("hdfs")
    with vfs.open(f"{base}/a/one.bin", "wb") as f:
        f.write(b"0123")
        f.write(b"456789")
    vfs.touch(f"{base}/a/b/empty")
    assert vfs.is_file(f"{base}/a/one.bin") and not vfs.is_file(f"{base}/a")
    assert vfs.is_dir(f"{base}/a") and vfs.is_dir(f"{base}/a/b") and not vfs.is_dir(f"{base}/none")
    assert vfs.file_size(f"{base}/a/one.bin") == 10
    assert vfs.ls(f"{base}/a") == [f"{base}/a/b", f"{base}/a/one.bin"]
    assert vfs.ls(f"{base}/a", recursive=True) == [f"{base}/a/b", f"{base}/a/b/empty", f"{base}/a/one.bin"]
    with vfs.open(f"{base}/a/one.bin") as f:
        f.seek(3)
        assert f.read(4) == b"3456"
        f.seek(-2, 2)
        assert f.read() == b"89"
    vfs.copy_dir(f"{base}/a", f"{base}/c")
    vfs.move_file(f"{base}/c/one.bin", f"{base}/c/two.bin")
    assert vfs.ls(f"{base}/c", recursive=True) == [f"{base}/c/b", f"{base}/c/b/empty", f"{base}/c/two.bin"]
    assert vfs.dir_size(f"{base}/c") == 10
    # libtiledb's VFS reads what tessera's wrote.
    theirs = tiledb.VFS(ctx=libtiledb_ctx(moto))
    assert theirs.file_size(f"{base}/c/two.bin") == 10
    with theirs.open(f"{base}/c/two.bin") as f:
        assert f.read(10) == b"0123456789"
    vfs.remove_file(f"{base}/c/two.bin")
    with pytest.raises(ttiledb.TileDBError):
        vfs.remove_file(f"{base}/c/two.bin")
    vfs.remove_dir(f"{base}/c")
    assert not vfs.is_dir(f"{base}/c")
    # Appending rewrites the object whole.
    with vfs.open(f"{base}/a/one.bin", "ab") as f:
        f.write(b"x")
    with vfs.open(f"{base}/a/one.bin") as f:
        assert f.read() == b"0123456789x"


def fault_proxy(moto, report, rate, seed=7, only=None):
    """The fault proxy in front of moto (conftest.fault_proxy)."""
    return faulty(int(moto.rsplit(":", 1)[1]), report, rate, seed, only)


def proxied_ctx(endpoint, **more):
    import tessera.tiledb as ttiledb

    return ttiledb.Ctx({"vfs.s3.endpoint_override": endpoint.removeprefix("http://"), "vfs.s3.scheme": "http",
                        "vfs.s3.region": "us-east-1", "vfs.s3.aws_access_key_id": "test",
                        "vfs.s3.aws_secret_access_key": "test", "vfs.s3.use_virtual_addressing": "false",
                        **more})


def _maintained(uri, lib, ctx, done=lambda step: None):
    """A dense and a sparse array written in three fragments each, with
    metadata, then consolidated and vacuumed (fragments and commits);
    ``done(step)`` is called as each kind of step ends."""
    dense, sparse = f"{uri}/dense", f"{uri}/sparse"
    dom = lib.Domain(lib.Dim("r", domain=(0, 59), tile=20, dtype=np.int64))
    lib.Array.create(dense, lib.ArraySchema(domain=dom, attrs=[lib.Attr("v", dtype=np.float64)]), ctx=ctx)
    sdom = lib.Domain(lib.Dim("x", domain=(0, 999), tile=100, dtype=np.int64))
    lib.Array.create(sparse, lib.ArraySchema(domain=sdom, attrs=[lib.Attr("s", dtype=str)], sparse=True,
                                             capacity=16), ctx=ctx)
    done("create")
    for k in range(3):
        with lib.open(dense, "w", ctx=ctx, timestamp=k + 1) as A:
            A[k * 20:(k + 1) * 20] = np.arange(20.0) + 100 * k
            A.meta[f"m{k}"] = k
        with lib.open(sparse, "w", ctx=ctx, timestamp=k + 1) as A:
            x = np.arange(k, 900, 7)
            A[x] = np.array([f"{k}-{v}" for v in x], dtype=object)
    done("write")
    for mode in ("fragments", "commits"):
        cfg = lib.Config({"sm.consolidation.mode": mode, "sm.vacuum.mode": mode})
        for a in (dense, sparse):
            lib.consolidate(a, config=cfg, ctx=ctx)
        done(f"consolidate {mode}")
        for a in (dense, sparse):
            lib.vacuum(a, config=cfg, ctx=ctx)
        done(f"vacuum {mode}")
    return dense, sparse


class PerStep:
    """The fault proxy's counts (its ``report`` file) split by step: what
    each step's requests met since the step before."""

    def __init__(self, report):
        self.report, self.seen, self.steps = report, {}, {}

    def __call__(self, step):
        counts = json.loads(self.report.read_text()) if self.report.exists() else {}
        now = {}
        for c in counts.values():
            for fault, n in c.items():
                now[fault] = now.get(fault, 0) + n
        self.steps[step] = {f: n - self.seen.get(f, 0) for f, n in now.items() if n != self.seen.get(f, 0)}
        self.seen = now

    def table(self):
        faults = ("503", "500", "drop", "cut", "lost")
        rows = ["| step | requests | " + " | ".join(faults) + " |", "|---" * (len(faults) + 2) + "|"]
        for step, c in self.steps.items():
            cells = [str(c.get(f, 0)) for f in faults]
            rows.append(f"| {step} | {sum(c.values())} | " + " | ".join(cells) + " |")
        return "\n".join(rows)


def test_faults_injected_are_survived(moto, tmp_path):
    """Writes, consolidations, vacuums and reads through a proxy that
    fails 8 % of requests (503 SlowDown, 500, dropped connections, GET
    bodies cut halfway) all complete; the arrays read as the same work
    done locally, and libtiledb (straight to moto) reads them equal."""
    import tessera.tiledb as ttiledb

    report = tmp_path / "faults.json"
    per_step = PerStep(report)
    with fault_proxy(moto, report, 0.08) as endpoint:
        ctx = proxied_ctx(endpoint)
        remote = _maintained(f"s3://{BUCKET}/faults", ttiledb, ctx, per_step)
        _check_maintained(remote, ctx, moto, tmp_path)
        per_step("read (tessera)")
    counts = json.loads(report.read_text())
    print("faults injected and survived, per request method:", json.dumps(counts, sort_keys=True))
    print("per step:\n" + per_step.table())
    assert sum(n for c in per_step.steps.values() for f, n in c.items() if f != "passed") >= 5
    injected = {m: sum(n for f, n in c.items() if f != "passed") for m, c in counts.items()}
    assert injected.get("GET", 0) >= 5 and injected.get("PUT", 0) >= 2, counts
    assert counts.get("GET", {}).get("cut", 0) >= 1, counts


def test_puts_whose_answers_were_lost_are_not_taken_for_another_writers(moto, tmp_path):
    """A conditional PUT (``If-None-Match: *``, every commit, schema and
    metadata file) whose answer is lost after moto wrote it is sent again
    and refused (412): the object holds its own bytes, so the write
    completes. A quarter of PUTs lose their answer here; everything
    completes and reads as locally."""
    import tessera.tiledb as ttiledb

    report = tmp_path / "lost.json"
    with fault_proxy(moto, report, 0.25, seed=11, only="lost") as endpoint:
        ctx = proxied_ctx(endpoint)
        remote = _maintained(f"s3://{BUCKET}/lost", ttiledb, ctx)
        _check_maintained(remote, ctx, moto, tmp_path)
    counts = json.loads(report.read_text())
    print("PUT answers lost:", json.dumps(counts, sort_keys=True))
    assert counts["PUT"].get("lost", 0) >= 5, counts


def test_a_name_written_twice_keeps_the_first_writers_bytes(moto):
    """Two writers of one name on S3 (a group's marker, created twice):
    moto's conditional put keeps the first and the second is refused."""
    import tessera.tiledb as ttiledb

    uri = f"s3://{BUCKET}/twice"
    ttiledb.Group.create(uri)
    with pytest.raises(ttiledb.TileDBError):
        ttiledb.Group.create(uri)
    assert ttiledb.object_type(uri) == "group"


def _check_maintained(remote, ctx, moto, tmp_path):
    """``remote`` reads as the same work done locally, through tessera and
    through libtiledb (straight to moto)."""
    import tessera.tiledb as ttiledb

    (tmp_path / "local").mkdir()
    local = _maintained(str(tmp_path / "local"), ttiledb, None)
    theirs = libtiledb_ctx(moto)
    for r, l in zip(remote, local):
        with ttiledb.open(r, ctx=ctx) as a, ttiledb.open(l) as b:
            got, want = a[:], b[:]
            for k in want:
                np.testing.assert_array_equal(got[k], want[k], err_msg=f"{r} {k}")
            assert dict(a.meta) == dict(b.meta)
            assert len(ttiledb.array_fragments(r, ctx=ctx)) == len(ttiledb.array_fragments(l))
        with tiledb.open(r, ctx=theirs) as a, tiledb.open(l) as b:
            got, want = a[:], b[:]
            for k in want:
                np.testing.assert_array_equal(got[k], want[k], err_msg=f"libtiledb {r} {k}")


def test_what_cannot_succeed_names_the_request_and_object(moto, tmp_path):
    """With no retries allowed (libtiledb's vfs.s3.connect_max_tries) and
    every request failed, a read fails at once with an error naming the
    request, the object and the store's answer."""
    import tessera.tiledb as ttiledb

    uri = f"s3://{BUCKET}/unreachable"
    with fault_proxy(moto, tmp_path / "all.json", 0.0) as endpoint:
        ttiledb.from_numpy(uri, np.arange(4.0), ctx=proxied_ctx(endpoint))
    with fault_proxy(moto, tmp_path / "none.json", 1.0, seed=3) as endpoint:
        started = time.monotonic()
        with pytest.raises(ttiledb.TileDBError) as e:
            ttiledb.open(uri, ctx=proxied_ctx(endpoint, **{"vfs.s3.connect_max_tries": 0}))[:]
        assert time.monotonic() - started < 30
    message = str(e.value)
    assert re.search(r"(GET|LIST|HEAD) ", message) and "unreachable" in message, message
