"""Reading the bench arrays from Python: tessera against TileDB-Py, in the same run.

    python python.py BENCH_DIR ROUNDS OUT_MD

The interpreter running this has both packages: tessera (a release wheel
of crates/tessera-python) and TileDB-Py 0.36.1 (libtiledb 2.30). Each
case reads a whole bench array into the result users ask for, with each
side's fastest public path to it:
  - numpy: dense arrays `A[:]["a"]` on both sides (attributes shaped like
    the array); sparse arrays `A[:]` (coordinates and attributes);
  - pyarrow.Table: tessera `A.read()`, TileDB-Py
    `A.query(return_arrow=True).df[:]`: coordinates and attributes of
    sparse arrays; of dense ones TileDB-Py's table holds the attributes
    only (a range index, no coordinates), so tessera reads the same
    columns, `A.read(dims=False)`.
Each read runs in a fresh process (rounds alternate the sides); the time
is the open and the read, after the imports; peak RSS is the process's
(interpreter and imports included: about the same on both sides). Prints
and writes a Markdown table: medians of time, the largest RSS.
"""
import json
import os
import subprocess
import sys

from common import side_by_side, write_markdown

bench, rounds, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]

CASES = [
    ("dense_f64_zstd", "numpy", "x = A[:]['a']", "x = A[:]['a']"),
    ("dense_i32_raw", "numpy", "x = A[:]['a']", "x = A[:]['a']"),
    ("dense_f32_fragments", "numpy", "x = A[:]['a']", "x = A[:]['a']"),
    ("sparse_2d", "numpy", "x = A[:]", "x = A[:]"),
    ("dense_f64_zstd", "pyarrow.Table", "x = A.read(dims=False)", "x = A.query(return_arrow=True).df[:]"),
    ("sparse_2d", "pyarrow.Table", "x = A.read()", "x = A.query(return_arrow=True).df[:]"),
    ("sparse_strings", "pyarrow.Table", "x = A.read()", "x = A.query(return_arrow=True).df[:]"),
]

RUNNER = r"""
import json, resource, sys, time
import numpy, pyarrow
side, uri, code = sys.argv[1], sys.argv[2], sys.argv[3]
if side == "tessera":
    import tessera
    t0 = time.perf_counter()
    A = tessera.open(uri)
    exec(code)
else:
    import tiledb
    t0 = time.perf_counter()
    A = tiledb.open(uri)
    exec(code)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def run(side, uri, code):
    out = subprocess.run([sys.executable, "-c", RUNNER, side, uri, code], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


rows = []
for name, result, tessera_code, tiledb_code in CASES:
    uri = os.path.join(bench, name)
    code = {"tessera": tessera_code, "tiledb": tiledb_code}
    got = side_by_side(rounds, lambda side, uri: run(side, uri, code[side]), ["tessera", "tiledb"], uri)
    (t, tr), (l, lr) = got["tessera"], got["tiledb"]
    rows.append((name, result, t, l, tr, lr))
    print(f"{name} -> {result}: tessera {t:.3f} s, TileDB-Py {l:.3f} s ({t / l:.2f}); "
          f"RSS {tr:.0f} / {lr:.0f} MiB ({tr / lr:.2f})", flush=True)

write_markdown(
    out,
    f"Reads from Python into numpy and pyarrow (`cargo xtask bench-python`, {rounds} rounds, medians; "
    "tessera's release wheel against TileDB-Py 0.36.1 / libtiledb 2.30, same machine, same run):",
    ["array", "into", "tessera (s)", "TileDB-Py (s)", "time ratio", "tessera peak RSS (MiB)",
     "TileDB-Py peak RSS (MiB)", "RSS ratio"],
    [(n, r, f"{t:.3f}", f"{l:.3f}", f"{t / l:.2f}", f"{tr:.0f}", f"{lr:.0f}", f"{tr / lr:.2f}")
     for n, r, t, l, tr, lr in rows],
)
