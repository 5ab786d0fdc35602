"""Consolidating fragments: tessera against libtiledb, in the same run.

    python consolidate.py BENCH_DIR TESSERA ROUNDS

Arrays: the bench's 20-fragment dense array (dense_f32_fragments: 16 row
bands and 4 overlapping updates of a 4096 x 4096 float32 array, ZSTD) and
the 100-fragment sparse array of fragmented.py (sparse_100_fragments).
Each round, alternating, a fresh copy (untimed) is consolidated into one
fragment:
  - tessera: `tessera consolidate COPY` (sparse: `--with-timestamps`, so
    that both keep every version), the whole process timed;
  - libtiledb: `tiledb.consolidate(COPY)` (TileDB-Py 0.36.1, libtiledb
    2.30; sm.consolidation.mode fragments, every fragment in one step,
    amplification opened), the call alone timed, in a fresh process.
Peak RSS: tessera's process; libtiledb's process (Python and numpy
included, about 40 MiB before the call). Prints a Markdown table.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

import tiledb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fragmented import sparse_100_fragments  # noqa: E402

bench, tessera, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
work = os.path.join(bench, "consolidate-bench")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

sparse_100_fragments(bench)

LIBTILEDB = r"""
import resource, sys, time, tiledb
uri = sys.argv[1]
cfg = tiledb.Config({"sm.consolidation.mode": "fragments", "sm.consolidation.amplification": "1000000",
                     "sm.consolidation.step_min_frags": "2", "sm.consolidation.step_max_frags": "1000"})
t0 = time.perf_counter()
tiledb.consolidate(uri, config=cfg)
dt = time.perf_counter() - t0
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def fresh(src, tag):
    dst = os.path.join(work, tag)
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


def fragments(uri):
    # Those a vacuum file does not list: what a reader sees.
    return len(tiledb.array_fragments(uri))


def run_tessera(src, flags, i):
    dst = fresh(src, f"tessera-{i}")
    t0 = time.perf_counter()
    p = subprocess.Popen([tessera, "consolidate", dst, *flags], stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    assert status == 0, "tessera consolidate failed"
    assert fragments(dst) == 1, "tessera left more than one fragment"
    shutil.rmtree(dst)
    return dt, ru.ru_maxrss / 1024


def run_libtiledb(src, flags, i):
    dst = fresh(src, f"libtiledb-{i}")
    out = subprocess.run([sys.executable, "-c", LIBTILEDB, dst], capture_output=True, text=True, check=True)
    dt, rss = map(float, out.stdout.split())
    assert fragments(dst) == 1, "libtiledb left more than one fragment"
    shutil.rmtree(dst)
    return dt, rss


def f(v):
    s = [x[0] for x in v]
    return f"{min(s):.3f} / {statistics.median(s):.3f}"


rows = []
for name, flags in (("dense_f32_fragments", []), ("sparse_100_fragments", ["--with-timestamps"])):
    src = os.path.join(bench, name)
    n = fragments(src)
    t, lt = [], []
    for i in range(rounds):
        pair = (run_tessera, t), (run_libtiledb, lt)
        for fn, acc in (pair if i % 2 == 0 else pair[::-1]):
            acc.append(fn(src, flags, i))
        print(f"{name} round {i}: tessera {t[-1][0]:.3f}s {t[-1][1]:.0f} MiB, libtiledb {lt[-1][0]:.3f}s {lt[-1][1]:.0f} MiB",
              file=sys.stderr, flush=True)
    ratio = statistics.median(x[0] for x in t) / statistics.median(x[0] for x in lt)
    rss_t, rss_l = max(x[1] for x in t), max(x[1] for x in lt)
    rows.append(f"| {name} | {n} | {f(t)} | {f(lt)} | {ratio:.2f} | {rss_t:.0f} / {rss_l:.0f} ({rss_t / rss_l:.2f}) |")

print("| array | fragments | tessera s (process) | libtiledb s (call) | time ratio | peak RSS tessera / libtiledb MiB (ratio) |")
print("|---|---|---|---|---|---|")
for r in rows:
    print(r)
