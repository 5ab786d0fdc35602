"""Side by side: `tessera read --format null` against libtiledb (its C API
through ctypes, over the library TileDB-Py ships: libtiledb_read.py), and
the floor (read + raw decode only), as whole processes, alternating. Both
readers must return the cells `tessera aggregate ... count` counts.

Usage: bench.py BENCH_DIR TESSERA FLOOR ROUNDS OUT_MD [ONLY]
ONLY: run just the cases whose "array / case" holds this text.
Peak RSS comes from wait4; libtiledb's in-process read time is reported
beside its whole-process time so interpreter start-up does not flatter us,
and so is its read plus the creation of its context (the library's own
start-up, as a tessera process's start-up is in tessera's time).
"""
import os
import statistics
import subprocess
import sys
import time

bench, tessera, floor, rounds, out_md = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
only = sys.argv[6] if len(sys.argv) > 6 else ""
py = sys.executable
here = os.path.dirname(os.path.abspath(__file__))


import common  # noqa: E402

common.configure(tessera, bench)
from common import run, tessera_cmd, libtiledb_spec, tessera_count, stats  # noqa: E402

cases = [c for c in common.cases() if only in f"{c[0]} / {c[1]}"]
rows = []
startup = [run([py, "-c", "import tiledb"])[0] for _ in range(rounds)]
# tessera's own fixed cost: a process that starts, parses its arguments and
# exits, as every tessera read does; libtiledb's read-only time has none.
tessera_startup = [run([tessera, "--version"])[0] for _ in range(rounds)]
for name, label, attrs, sub, cond in cases:
    arr = os.path.join(bench, name)
    # The floor of reads without a condition (the tiles they meet, read
    # and decoded; a deduplicating read's sort has none), run in the same
    # rounds as the readers: the machine's slow and fast spells hit all
    # alike.
    floor_cmd = None
    if not cond and name != "sparse_fragments":
        floor_cmd = [floor, "floor", arr, attrs or "-"] + ([sub] if sub else [])
    fl = {"all": [], "1": []} if floor_cmd else None
    res = {}
    spec = libtiledb_spec(arr, attrs, sub, cond)
    for threads in ["all", "1"]:
        env = dict(os.environ)
        if threads == "1":
            env["RAYON_NUM_THREADS"] = "1"
        t, l, lin, lctx, rt, rl, cells = [], [], [], [], [], [], set()
        for _ in range(rounds):
            dt, rss, _ = run(tessera_cmd(arr, attrs, sub, cond), env)
            t.append(dt)
            rt.append(rss)
            dt, rss, o = run([py, os.path.join(here, "libtiledb_read.py"), arr, spec, "1" if threads == "1" else "0"])
            l.append(dt)
            secs, n, ctx = o.split()
            lin.append(float(secs))
            lctx.append(float(secs) + float(ctx))
            cells.add(int(n))
            rl.append(rss)
            if floor_cmd:
                fl[threads].append(run(floor_cmd, env)[0])
        want = tessera_count(arr, sub, cond)
        if cells != {want}:
            raise SystemExit(f"{name} / {label}: libtiledb read {sorted(cells)} cells, tessera counts {want}")
        res[threads] = (t, l, lin, lctx, max(rt), max(rl))
    rows.append((name, label, res, fl))
    t, l, lin, _, _, _ = res["all"]
    print(f"{name} / {label}: tessera {min(t):.3f}s, libtiledb {min(l):.3f}s ({min(lin):.3f}s in-process)", flush=True)

# Four decimals: the small reads take a few milliseconds.
f = lambda v: f"{stats(v)[0]:.4f} / {stats(v)[1]:.4f}"
with open(out_md, "w") as o:
    o.write(f"Python start-up + `import tiledb`: {f(startup)} s (best / median).\n")
    o.write(f"A tessera process that does no read (`tessera --version`: start-up, argument parsing, exit): {f(tessera_startup)} s.\n\n")
    o.write("| array | case | tessera s | libtiledb s (process) | libtiledb s (read only) | ratio vs read only | libtiledb s (context + read) | ratio vs context + read | tessera 1 thread | libtiledb 1 thread (read only) | ratio 1 thread | RSS tessera / libtiledb MiB | floor s | tessera / floor | floor 1 thread s | tessera / floor, 1 thread |\n")
    o.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for name, label, res, fl in rows:
        t, l, lin, lctx, rt, rl = res["all"]
        t1, _, lin1, _, _, _ = res["1"]
        ratio = statistics.median(t) / statistics.median(lin)
        ratio_ctx = statistics.median(t) / statistics.median(lctx)
        ratio1 = statistics.median(t1) / statistics.median(lin1)
        floor_s = f(fl["all"]) if fl else ""
        frac = f"{min(fl['all']) / min(t):.0%}" if fl else ""
        floor1_s = f(fl["1"]) if fl else ""
        # How far tessera on one thread sits from the floor on one thread.
        times1 = f"{statistics.median(t1) / statistics.median(fl['1']):.2f}" if fl else ""
        o.write(
            f"| {name} | {label} | {f(t)} | {f(l)} | {f(lin)} | {ratio:.2f} | {f(lctx)} | {ratio_ctx:.2f} | {f(t1)} | {f(lin1)} | {ratio1:.2f} | {rt:.0f} / {rl:.0f} | {floor_s} | {frac} | {floor1_s} | {times1} |\n"
        )
print("wrote", out_md)
