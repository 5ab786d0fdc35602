"""Many processes on one array at once: writers (cells and metadata), a
consolidator (every mode, in a loop), a vacuumer (the same) and readers, locally and
on S3 (moto), in rounds. No process fails; every read sees whole
fragments only; at the end libtiledb (TileDB-Py) reads every cell every
writer wrote, and tessera reads the same. The processes are
concurrent_worker.py, through tessera.tiledb."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import tiledb

from test_s3 import BUCKET, libtiledb_ctx

WORKER = Path(__file__).parent / "concurrent_worker.py"
WRITERS, ROUNDS, READERS = 3, 2, 2

sys.path.insert(0, str(Path(__file__).parent))
import concurrent_worker as worker  # noqa: E402


def _start(*args):
    return subprocess.Popen([sys.executable, str(WORKER), *map(str, args)], stderr=subprocess.PIPE, text=True)


def _finish(procs):
    for name, p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"{name} failed:\n{err}"


def _round(uri, tmp_path, r, batches):
    """Writers of round ``r``, with the maintenance and the readers running
    until they are done; what the readers reported."""
    stop = tmp_path / f"stop{r}"
    others = [("consolidator", _start("consolidate", uri, stop)), ("vacuumer", _start("vacuum", uri, stop))]
    reports = [tmp_path / f"read{r}-{i}.json" for i in range(READERS)]
    others += [(f"reader {i}", _start("read", uri, stop, rep)) for i, rep in enumerate(reports)]
    writers = [(f"writer {w}", _start("write", uri, w, batches)) for w in range(r * WRITERS, (r + 1) * WRITERS)]
    try:
        _finish(writers)
    finally:
        stop.touch()
        _finish(others)
    return [json.loads(rep.read_text()) for rep in reports]


def _expected(batches):
    xs = [worker.batch_base(w, b) + np.arange(worker.CELLS, dtype=np.int64)
          for w in range(ROUNDS * WRITERS) for b in range(batches)]
    x = np.sort(np.concatenate(xs))
    return x, 10 * x + (x // worker.STRIDE) // 100


def _concurrently(uri, tmp_path, ctx, batches):
    import tessera.tiledb as ttiledb

    worker.create(uri)
    for r in range(ROUNDS):
        reports = _round(uri, tmp_path, r, batches)
        for rep in reports:
            assert rep["reads"] >= 1
            # What a reader saw never shrinks: nothing written was lost.
            assert rep["batches_seen"] == sorted(rep["batches_seen"]), rep
            assert rep["batches_seen"][-1] == (r + 1) * WRITERS * batches, rep
            assert rep["metadata_keys"] == sorted(rep["metadata_keys"]), rep
            assert rep["metadata_keys"][-1] == (r + 1) * WRITERS * batches, rep
        print(f"round {r}: reads per reader", [rep["reads"] for rep in reports])
    x, v = _expected(batches)
    with tiledb.open(uri, ctx=ctx) as A:
        got = A.query(order="G")[:]
        order = np.argsort(got["x"])
        np.testing.assert_array_equal(got["x"][order], x)
        np.testing.assert_array_equal(got["v"][order], v)
        assert len(A.meta.keys()) == len(x) // worker.CELLS
    with ttiledb.open(uri) as A:
        got = A[:]
        np.testing.assert_array_equal(np.sort(got["x"]), x)
    fragments = len(ttiledb.array_fragments(uri))
    print(f"{uri}: {len(x)} cells read back by libtiledb; {fragments} fragments left")


def test_writers_consolidation_vacuum_and_readers_locally(tmp_path):
    _concurrently(str(tmp_path / "array"), tmp_path, None, batches=8)


def test_writers_consolidation_vacuum_and_readers_on_s3(moto, tmp_path):
    _concurrently(f"s3://{BUCKET}/concurrent", tmp_path, libtiledb_ctx(moto), batches=4)
