"""Writing a sparse array: tessera against libtiledb, in the same run.

    python write.py BENCH_DIR TESSERA ROUNDS

For the bench's 10-million-cell sparse array (sparse_2d): its cells are
read once, untimed (tessera writes them to an Arrow IPC file; TileDB-Py
reads them into numpy arrays). Then, alternating, each round:
  - tessera: `tessera write COPY --input cells.arrow` into an empty copy
    (made by `tessera create`), the whole process timed: start-up, reading
    the Arrow file, sorting, filtering, writing;
  - libtiledb: one `B[x, y] = {...}` write (TileDB-Py 0.36.1, libtiledb
    2.30) into an empty copy, the write alone timed, in a process that
    already holds the cells.
Prints best and median seconds and peak RSS of each as a Markdown table.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

bench, tessera, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = os.path.join(bench, "sparse_2d")
work = os.path.join(bench, "write-bench")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
schema = os.path.join(work, "schema.json")
cells = os.path.join(work, "cells.arrow")
with open(schema, "w") as fh:
    subprocess.run([tessera, "schema", src, "--json"], stdout=fh, check=True)
subprocess.run([tessera, "read", src, "--format", "arrow", "-o", cells], check=True)

LIBTILEDB = r"""
import resource, sys, time, tiledb
src, dst = sys.argv[1], sys.argv[2]
with tiledb.open(src) as A:
    schema = A.schema
    d = A.query(coords=True)[:]
tiledb.Array.create(dst, schema)
t0 = time.perf_counter()
with tiledb.open(dst, "w") as B:
    B[d["x"], d["y"]] = {"v": d["v"], "k": d["k"]}
dt = time.perf_counter() - t0
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def run_tessera(i):
    dst = os.path.join(work, f"tessera-{i}")
    shutil.rmtree(dst, ignore_errors=True)
    subprocess.run([tessera, "create", dst, "--schema", schema], check=True)
    t0 = time.perf_counter()
    p = subprocess.Popen([tessera, "write", dst, "--input", cells], stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    assert status == 0, "tessera write failed"
    shutil.rmtree(dst)
    return dt, ru.ru_maxrss / 1024


def run_libtiledb(i):
    dst = os.path.join(work, f"libtiledb-{i}")
    shutil.rmtree(dst, ignore_errors=True)
    out = subprocess.run([sys.executable, "-c", LIBTILEDB, src, dst], capture_output=True, text=True, check=True)
    dt, rss = map(float, out.stdout.split())
    shutil.rmtree(dst)
    return dt, rss


t, lt = [], []
for i in range(rounds):
    pair = (run_tessera, t), (run_libtiledb, lt)
    for f, acc in (pair if i % 2 == 0 else pair[::-1]):
        acc.append(f(i))
    print(f"round {i}: tessera {t[-1][0]:.3f}s, libtiledb {lt[-1][0]:.3f}s", file=sys.stderr, flush=True)


def f(v):
    s = [x[0] for x in v]
    return f"{min(s):.3f} / {statistics.median(s):.3f}"


ratio = statistics.median(x[0] for x in t) / statistics.median(x[0] for x in lt)
print("| array | cells | tessera s (process) | libtiledb s (write only) | ratio | RSS tessera / libtiledb MiB |")
print("|---|---|---|---|---|---|")
print(f"| sparse_2d | 10,000,000 | {f(t)} | {f(lt)} | {ratio:.2f} | {max(x[1] for x in t):.0f} / {max(x[1] for x in lt):.0f} |")
