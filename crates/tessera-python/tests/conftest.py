"""Shared by the tests: where the fixtures are, and tessera's results in
the JSONL contract's value forms (the forms xtask/fixtures/read.py gives
TileDB-Py's reads), so the two compare row by row."""

import contextlib
import glob
import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

# libtiledb 2.30 (TileDB-Py 0.36.1, which these tests compare against)
# merges the tiles of a sparse read in parallel before reading them, and
# the merge's last task can free its merge unit after the query is gone
# (the race TileDB-Inc/TileDB#5723 removes). Beside tessera's threads in
# this process that freed memory was written to now and then: the tests
# crashed (heap corruption, or a core with libtiledb's worker in
# MergeUnit's destructor). The merge only orders tile loading, so reads
# without it return the same cells. libtiledb reads its configuration
# from TILEDB_* variables: set before any test imports tiledb, and
# inherited by the processes tests start.
os.environ.setdefault("TILEDB_SM_QUERY_SPARSE_GLOBAL_ORDER_PREPROCESS_TILE_MERGE", "0")

REPO = Path(__file__).resolve().parents[3]
TESTDATA = REPO / "testdata"
sys.path.insert(0, str(REPO / "xtask" / "fixtures"))

# Files whose tests take minutes (TileDB-Py's whole suite, run twice;
# writers racing on S3), started first: under pytest-xdist (CI runs two
# workers) the other tests then run beside them rather than after.
LONGEST_FIRST = ("test_tiledb_py_suite.py", "test_concurrency.py")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.path.name not in LONGEST_FIRST)


RELEASES = sorted(p.name for p in TESTDATA.glob("tiledb-*"))
BLOB_TYPES = ("BLOB", "GEOM_WKB", "GEOM_WKT")


def cases():
    """Every fixture case: (release, name, folder, its case: the queries
    xtask/fixtures/generate.py ran, kept in expected.json)."""
    out = []
    for release in RELEASES:
        for expected in sorted(glob.glob(str(TESTDATA / release / "*" / "expected.json"))):
            folder = Path(expected).parent
            with open(expected) as fh:
                out.append((release, folder.name, folder, json.load(fh)["case"]))
    return out


def jfloat(x, f32):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(repr(np.float32(x))) if f32 else float(x)


def contract_value(v, arrow_type, tiledb_type):
    """One cell's value as the JSONL contract writes it."""
    if v is None:
        return None
    if pa.types.is_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        return [contract_value(x, arrow_type.value_type, tiledb_type) for x in v]
    if isinstance(v, bytes):
        return v.hex() if tiledb_type in BLOB_TYPES else v.decode("utf-8", "replace")
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        return jfloat(v, pa.types.is_float32(arrow_type))
    return v


def contract_rows(table):
    """The table's rows in the contract's forms: enumerated attributes as
    their stored keys, datetimes as integers."""
    cols = {}
    for field, column in zip(table.schema, table.columns):
        tiledb_type = (field.metadata or {}).get(b"tiledb.datatype", b"").decode()
        t = field.type
        if pa.types.is_dictionary(t):
            column = pa.chunked_array([c.indices for c in column.chunks], type=t.index_type)
            t = t.index_type
        if pa.types.is_timestamp(t):
            column = column.cast(pa.int64())
            t = pa.int64()
        cols[field.name] = [contract_value(v, t, tiledb_type) for v in column.to_pylist()]
    names = table.column_names
    return [{n: cols[n][i] for n in names} for i in range(table.num_rows)]


def canonical(rows):
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


@pytest.fixture
def scratch(tmp_path):
    return tmp_path


def same_anndata(a, b):
    """Two AnnData objects hold the same matrices, frames and indexes."""
    assert a.shape == b.shape
    assert a.obs.equals(b.obs) and list(a.obs.index) == list(b.obs.index)
    assert a.var.equals(b.var) and list(a.var.index) == list(b.var.index)
    assert list(a.obs.dtypes) == list(b.obs.dtypes)
    assert type(a.X) is type(b.X) and a.X.dtype == b.X.dtype
    if hasattr(b.X, "nnz"):
        assert (a.X != b.X).nnz == 0
    else:  # a dense X layer: numpy
        np.testing.assert_array_equal(a.X, b.X)
    assert sorted(a.layers.keys()) == sorted(b.layers.keys())
    for k in b.layers.keys():
        assert (a.layers[k] != b.layers[k]).nnz == 0
    for m in ("obsm", "varm"):
        assert sorted(getattr(a, m).keys()) == sorted(getattr(b, m).keys())
        for k in getattr(b, m).keys():
            np.testing.assert_array_equal(getattr(a, m)[k], getattr(b, m)[k])
    for m in ("obsp", "varp"):
        assert sorted(getattr(a, m).keys()) == sorted(getattr(b, m).keys())
        for k in getattr(b, m).keys():
            x, y = getattr(a, m)[k], getattr(b, m)[k]
            assert type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape and (x != y).nnz == 0
    same_uns(a.uns, b.uns)


def same_uns(a, b, path="uns"):
    """Two uns mappings hold the same keys, and under each a value of the
    same type and contents."""
    assert sorted(a.keys()) == sorted(b.keys()), path
    for k, want in b.items():
        got, at = a[k], f"{path}[{k!r}]"
        assert type(got) is type(want), f"{at}: {type(got)} != {type(want)}"
        if isinstance(want, dict):
            same_uns(got, want, at)
        elif isinstance(want, np.ndarray):
            assert got.dtype == want.dtype, at
            np.testing.assert_array_equal(got, want, err_msg=at)
        elif hasattr(want, "equals"):  # a pandas DataFrame
            assert got.equals(want) and list(got.index) == list(want.index), at
            assert list(got.dtypes) == list(want.dtypes) and got.index.name == want.index.name, at
        else:
            assert got == want, at


def walk(coll, prefix=""):
    """Every member of a SOMA collection (tessera.soma's or tiledbsoma's),
    depth first, as ``(path, object)``."""
    for name in sorted(coll.keys()):
        obj = coll[name]
        yield prefix + name, obj
        if hasattr(obj, "keys") and not hasattr(obj, "read"):
            yield from walk(obj, prefix + name + "/")


def free_port():
    """A loopback port nothing listens on now, outside the kernel's
    ephemeral range: the benchmarks' helper (xtask/bench/common.py says
    why)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tessera_bench_common", REPO / "xtask" / "bench" / "common.py")
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    return common.free_port()


def emulator(variable, what):
    """The server program ``variable`` names and a free loopback port for
    it; without it the test is skipped, except in CI, where it fails."""
    program = os.environ.get(variable)
    if not program:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the {what} tests: set {variable}")
        pytest.skip(f"{variable} is not set (the {what} tests' server)")
    return program, free_port()


@contextlib.contextmanager
def faulty(upstream, report, rate, seed=7, only=None):
    """The fault proxy (fault_proxy.py) in front of the server on the
    loopback port ``upstream`` (moto, Azurite, fake-gcs-server), failing ``rate``
    of requests (503 SlowDown, 500, dropped, GET bodies cut halfway, PUT
    answers lost; ``only`` one of them); gives its endpoint. Its counts
    go to ``report``."""
    port = free_port()
    proxy = subprocess.Popen([sys.executable, str(Path(__file__).parent / "fault_proxy.py"), str(port),
                              str(upstream), "--rate", str(rate), "--seed", str(seed), "--report", str(report),
                              *(["--only", only] if only else [])])
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proxy.kill()
        proxy.wait()


# The S3 tests' bucket on moto.
S3_BUCKET = "pytest"


@pytest.fixture(scope="module")
def moto():
    """moto's S3 server (TESSERA_MOTO_SERVER) on a free loopback port, the
    bucket S3_BUCKET made and the environment pointing at it."""
    program, port = emulator("TESSERA_MOTO_SERVER", "S3 (moto_server)")
    proc = subprocess.Popen([program, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(urllib.request.Request(f"{endpoint}/{S3_BUCKET}", method="PUT"), timeout=2)
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("moto_server did not start")
        env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
               "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        yield endpoint
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    finally:
        proc.kill()
        proc.wait()


def maintain_tree(uri, storage_options):
    """Every array below ``uri`` consolidated, then vacuumed, by
    tessera.consolidate_tree / vacuum_tree; none may fail."""
    import tessera

    for run in (tessera.consolidate_tree, tessera.vacuum_tree):
        done = run(uri, storage_options=storage_options)
        assert all(a.error is None for a in done), done
    return done


def faults_survived(report, where, least=5):
    """The fault proxy's counts (``report``), printed; at least ``least``
    faults were injected."""
    counts = json.loads(Path(report).read_text())
    print(f"faults injected and survived {where}:", json.dumps(counts, sort_keys=True))
    assert sum(n for c in counts.values() for f, n in c.items() if f != "passed") >= least, counts
    return counts
