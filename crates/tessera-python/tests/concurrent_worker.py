"""One process of the concurrency test (test_concurrency.py): a writer, a
consolidator, a vacuumer or a reader of one sparse array, through
tessera.tiledb. Object-store settings come from the environment.

    python concurrent_worker.py write URI WRITER BATCHES
    python concurrent_worker.py consolidate URI STOP_FILE
    python concurrent_worker.py vacuum URI STOP_FILE
    python concurrent_worker.py read URI STOP_FILE REPORT

Writer ``w`` writes ``BATCHES`` fragments, batch ``b`` the coordinates
``batch_base(w, b) + [0, CELLS)`` with values ``10 * x + w`` and the
metadata key ``w{w}b{b}``. Consolidator and vacuumer run every mode. The others
loop until STOP_FILE exists. A reader checks every read: each batch it
sees is there whole (no fragment half seen, none seen twice) with the
values its writer wrote; it writes what it saw as JSON to REPORT.
Failures raise: the process ends non-zero with the traceback.
"""

import json
import os
import sys
import time

import numpy as np

import tessera.tiledb as tiledb

CELLS = 50
STRIDE = 1000
MODES = ("fragments", "commits", "fragment_meta", "array_meta")


def batch_base(writer, batch):
    return (writer * 100 + batch) * STRIDE


def create(uri):
    dom = tiledb.Domain(tiledb.Dim("x", domain=(0, 10**8), tile=10_000, dtype=np.int64))
    schema = tiledb.ArraySchema(domain=dom, attrs=[tiledb.Attr("v", dtype=np.int64)], sparse=True,
                                capacity=64, allows_duplicates=False)
    tiledb.Array.create(uri, schema)


def write(uri, writer, batches):
    for b in range(batches):
        x = batch_base(writer, b) + np.arange(CELLS, dtype=np.int64)
        with tiledb.open(uri, "w") as A:
            A[x] = {"v": 10 * x + writer}
            A.meta[f"w{writer}b{b}"] = b


def _until(stop_file, step):
    rounds = 0
    while not os.path.exists(stop_file):
        step()
        rounds += 1
        time.sleep(0.02)
    return rounds


def consolidate(uri, stop_file):
    def step():
        for mode in MODES:
            tiledb.consolidate(uri, config=tiledb.Config({"sm.consolidation.mode": mode}))
    return _until(stop_file, step)


def vacuum(uri, stop_file):
    def step():
        for mode in MODES:
            tiledb.vacuum(uri, config=tiledb.Config({"sm.vacuum.mode": mode}))
    return _until(stop_file, step)


def check(got):
    """The batches a read holds, each checked whole and right."""
    x, v = got["x"], got["v"]
    assert len(np.unique(x)) == len(x), "a cell read twice"
    writers = (x // STRIDE) // 100
    np.testing.assert_array_equal(v, 10 * x + writers, err_msg="values not as written")
    batches, counts = np.unique(x // STRIDE, return_counts=True)
    partial = batches[counts != CELLS]
    assert len(partial) == 0, f"batches seen in part: {partial.tolist()}"
    return batches.tolist()


def read(uri, stop_file, report):
    seen, keys = [], []

    def step():
        with tiledb.open(uri) as A:
            seen.append(len(check(A[:])))
            keys.append(len(A.meta.keys()))
    rounds = _until(stop_file, step)
    # One more after the stop: nothing a read sees is lost later.
    step()
    with open(report, "w") as f:
        json.dump({"reads": rounds + 1, "batches_seen": seen, "metadata_keys": keys}, f)


def main():
    role, uri, *rest = sys.argv[1:]
    if role == "write":
        write(uri, int(rest[0]), int(rest[1]))
    elif role == "consolidate":
        consolidate(uri, rest[0])
    elif role == "vacuum":
        vacuum(uri, rest[0])
    elif role == "read":
        read(uri, rest[0], rest[1])
    else:
        raise SystemExit(f"unknown role {role}")


if __name__ == "__main__":
    main()
