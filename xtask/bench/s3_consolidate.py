"""Consolidating arrays that live on S3: tessera against libtiledb in the
same run, both on the S3 rig of shared/bench/s3 (s3s-fs, a file-backed
server whose ranged GET costs its range, behind delay_proxy.py: 20 ms a
request, 100 MB/s a connection).

    python s3_consolidate.py BENCH_DIR TESSERA XTASK S3S_FS DELAY_PROXY ROUNDS OUT_MD

Arrays: the bench's 20-fragment dense array (dense_f32_fragments) and the
100-fragment sparse array of fragmented.py. The server's root folder is
target/bench/s3root: a fresh copy of an array is put there (untimed) and
consolidated as s3://bench/COPY into one fragment:
  - tessera: `tessera consolidate s3://bench/COPY` (sparse:
    `--with-timestamps`, so that both keep every version), the whole
    process timed;
  - tessera, awaited: `xtask consolidate-async s3://bench/COPY` (the
    same flags), the same consolidation awaited on one current-thread
    tokio runtime of the process's (`maintain_async::consolidate_fragments`),
    the whole process timed;
  - libtiledb: `tiledb.consolidate` (TileDB-Py 0.36.1, libtiledb 2.30;
    mode fragments, every fragment in one step), the call alone timed, in
    a fresh process.
Each side's peak RSS and the bytes its process wrote to local disk
(rusage's blocks out) are reported. One more round of each, untimed, goes
through s3_proxy.py (no delay) to count requests by method and the bytes
sent and received. A side's result is checked: the copy has one fragment
and reads (by libtiledb, locally) the same cells as the array before.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request

import numpy as np
import tiledb

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from common import free_port, libtiledb_s3, s3_env, start_s3s_fs, wait  # noqa: E402
from fragmented import sparse_100_fragments  # noqa: E402

bench, tessera, xtask, s3s_fs, delay_proxy, rounds, out_md = sys.argv[1:8]
rounds = int(rounds)
root = os.path.join(bench, "s3root")
shutil.rmtree(root, ignore_errors=True)
os.makedirs(os.path.join(root, "bench"))
sparse_100_fragments(bench)

LIBTILEDB = r"""
import json, resource, sys, time, tiledb
uri, s3 = sys.argv[1], json.loads(sys.argv[2])
cfg = tiledb.Config({"sm.consolidation.mode": "fragments", "sm.consolidation.amplification": "1000000",
                     "sm.consolidation.step_min_frags": "2", "sm.consolidation.step_max_frags": "1000", **s3})
ctx = tiledb.Ctx(cfg)
t0 = time.perf_counter()
tiledb.consolidate(uri, config=cfg, ctx=ctx)
dt = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(dt, ru.ru_maxrss / 1024, ru.ru_oublock * 512)
"""


delayed, counting = free_port(), free_port()
server_proc, server = start_s3s_fs(s3s_fs, root)
procs = [server_proc]
procs.append(subprocess.Popen([sys.executable, delay_proxy, str(delayed), str(server), "20", "100"]))
procs.append(subprocess.Popen([sys.executable, os.path.join(here, "s3_proxy.py"), str(counting), str(server), "0"]))
wait(delayed)
wait(counting)


env_for = s3_env


def counts():
    with urllib.request.urlopen(f"http://127.0.0.1:{counting}/__proxy/stats") as r:
        return json.loads(r.read())


def cells(path):
    """Every cell's coordinates and values, in a canonical order: what a
    consolidation must keep."""
    with tiledb.open(path) as a:
        if a.schema.sparse:
            got = a.query(order="U")[:]
            keys = [got[d.name] for d in a.schema.domain]
            order = np.lexsort(keys[::-1])
            return {k: v[order] for k, v in got.items()}
        return a[:]


def same(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)


def fresh(src, tag):
    dst = os.path.join(root, "bench", tag)
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst, f"s3://bench/{tag}"


def process_side(command, src, flags, tag, port):
    dst, uri = fresh(src, tag)
    t0 = time.perf_counter()
    p = subprocess.Popen([*command, uri, *flags], env=env_for(port), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    assert status == 0, f"{command} {uri} failed"
    return dst, dt, ru.ru_maxrss / 1024, ru.ru_oublock * 512


def tessera_side(src, flags, tag, port):
    return process_side([tessera, "consolidate"], src, flags, tag, port)


def awaited_side(src, flags, tag, port):
    return process_side([xtask, "consolidate-async"], src, flags, tag, port)


def libtiledb_side(src, flags, tag, port):
    dst, uri = fresh(src, tag)
    out = subprocess.run([sys.executable, "-c", LIBTILEDB, uri, json.dumps(libtiledb_s3(port))],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"libtiledb failed on {uri}:\n{out.stderr}")
    dt, rss, written = map(float, out.stdout.split())
    return dst, dt, rss, written


def checked(side, src, flags, tag, port, want):
    dst, *got = side(src, flags, tag, port)
    assert len(tiledb.array_fragments(dst)) == 1, f"{tag}: more than one fragment left"
    assert same(cells(dst), want), f"{tag}: the cells changed"
    shutil.rmtree(dst)
    return got


def mib(b):
    return f"{b / 2**20:.1f}"


rows = []
try:
    for name, flags in (("dense_f32_fragments", []), ("sparse_100_fragments", ["--with-timestamps"])):
        src = os.path.join(bench, name)
        n, want = len(tiledb.array_fragments(src)), cells(src)
        sides = {"tessera": tessera_side, "tessera, awaited": awaited_side, "libtiledb": libtiledb_side}
        timed = {k: [] for k in sides}
        for i in range(rounds):
            order = list(sides) if i % 2 == 0 else list(sides)[::-1]
            for k in order:
                timed[k].append(checked(sides[k], src, flags, f"{k.replace(', ', '-')}-{i}", delayed, want))
            print(f"{name} round {i}: " + ", ".join(f"{k} {timed[k][-1][0]:.2f}s {timed[k][-1][1]:.0f} MiB" for k in sides),
                  file=sys.stderr, flush=True)
        moved = {}
        for k in sides:
            counts()
            checked(sides[k], src, flags, f"{k.replace(', ', '-')}-counted", counting, want)
            moved[k] = counts()
        med = {k: statistics.median(x[0] for x in timed[k]) for k in sides}
        rss = {k: max(x[1] for x in timed[k]) for k in sides}
        disk = {k: max(x[2] for x in timed[k]) for k in sides}
        for k in sides:
            m = moved[k]
            by = ", ".join(f"{v} {meth}" for meth, v in sorted(m["by_method"].items()))
            rows.append(f"| {name} ({n} fragments) | {k} | {med[k]:.2f} | {med[k] / med['libtiledb']:.2f} | "
                        f"{rss[k]:.0f} | {rss[k] / rss['libtiledb']:.2f} | {mib(disk[k])} | {m['requests']} ({by}) | "
                        f"{mib(m['bytes_down'])} / {mib(m['bytes_up'])} |")
finally:
    for p in procs:
        p.kill()

with open(out_md, "w") as o:
    o.write(f"Every request delayed 20 ms, each connection at most 100 MB/s (s3s-fs behind delay_proxy.py); "
            f"medians of {rounds} rounds. Requests and bytes from one more round, through a counting proxy.\n\n")
    o.write("| array | engine | seconds | time ratio | peak RSS MiB | RSS ratio | local disk written MiB "
            "| requests | MiB down / up |\n|---|---|---:|---:|---:|---:|---:|---|---:|\n")
    o.write("\n".join(rows) + "\n")
