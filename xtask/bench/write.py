"""Writing arrays: tessera against libtiledb, in the same run.

    python write.py BENCH_DIR TESSERA ROUNDS [ONLY]

For the bench's 10-million-cell sparse array (sparse_2d) and its dense
float64 ZSTD array (dense_f64_zstd, 8192 x 8192 cells): the cells are read
once, untimed (tessera writes them to an Arrow IPC file, coordinates
included). Then, alternating, each round:
  - tessera: `tessera write COPY --input cells.arrow` into an empty copy
    (made by `tessera create`), the whole process timed: start-up, reading
    the Arrow file, sorting or placing the cells, filtering, writing;
  - libtiledb writing the same file, as a TileDB-Py user would: pyarrow
    memory-maps it, the columns the write needs become numpy arrays, one
    write (TileDB-Py 0.36.1, libtiledb 2.30; sparse `B[x, y] = {...}`,
    dense `B[:] = {...}`) into an empty copy; timed from opening the file
    to the end of the write (interpreter start-up and imports excluded).
The dense array is written a second way, like for like with libtiledb from
memory: tessera's Python package and libtiledb each in a process that
already holds the cells as numpy arrays (read from the array, untimed),
tessera as a box without coordinates (`tessera.write(COPY, {...},
subarray=box)`), the write alone timed.
Prints best and median seconds and peak RSS of each as a Markdown table.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

bench, tessera, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
work = os.path.join(bench, "write-bench")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

LIBTILEDB = r"""
import resource, sys, time, tiledb
src, dst = sys.argv[1], sys.argv[2]
with tiledb.open(src) as A:
    schema = A.schema
    if schema.sparse:
        d = A.query(coords=True)[:]
    else:
        d = A[:]
tiledb.Array.create(dst, schema)
attrs = {schema.attr(i).name: d[schema.attr(i).name] for i in range(schema.nattr)}
t0 = time.perf_counter()
with tiledb.open(dst, "w") as B:
    if schema.sparse:
        B[d["x"], d["y"]] = attrs
    else:
        B[:] = attrs
dt = time.perf_counter() - t0
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


# tessera's Python package writing the same numpy arrays as LIBTILEDB, as a
# box (`tessera.write(..., subarray=)`, libtiledb's `B[:] = {...}`): the
# like-for-like dense write, from memory, no coordinates.
TESSERA_PY = r"""
import resource, subprocess, sys, time, tiledb, tessera
src, dst, cli, schema_json = sys.argv[1:5]
with tiledb.open(src) as A:
    schema = A.schema
    d = A[:]
    box = [(int(schema.domain.dim(i).domain[0]), int(schema.domain.dim(i).domain[1])) for i in range(schema.domain.ndim)]
subprocess.run([cli, "create", dst, "--schema", schema_json], check=True)
attrs = {schema.attr(i).name: d[schema.attr(i).name] for i in range(schema.nattr)}
t0 = time.perf_counter()
tessera.write(dst, attrs, subarray=box)
dt = time.perf_counter() - t0
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


# libtiledb writing the Arrow file tessera writes: memory-mapped by
# pyarrow, the columns it needs as numpy arrays (a dense write takes the
# attributes shaped as the domain, row-major), one write.
LIBTILEDB_FILE = r"""
import resource, sys, time, tiledb, numpy as np, pyarrow as pa
src, dst, cells = sys.argv[1:4]
with tiledb.open(src) as A:
    schema = A.schema
tiledb.Array.create(dst, schema)
names = [schema.attr(i).name for i in range(schema.nattr)]
dims = [schema.domain.dim(i) for i in range(schema.domain.ndim)]
t0 = time.perf_counter()
table = pa.ipc.open_file(pa.memory_map(cells)).read_all()
with tiledb.open(dst, "w") as B:
    if schema.sparse:
        B[tuple(table.column(d.name).to_numpy() for d in dims)] = {n: table.column(n).to_numpy() for n in names}
    else:
        shape = tuple(int(d.domain[1] - d.domain[0] + 1) for d in dims)
        B[:] = {n: table.column(n).to_numpy().reshape(shape) for n in names}
dt = time.perf_counter() - t0
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def prepare(name):
    """The array's schema (JSON) and cells (Arrow IPC) for tessera."""
    src = os.path.join(bench, name)
    schema = os.path.join(work, f"{name}.json")
    cells = os.path.join(work, f"{name}.arrow")
    with open(schema, "w") as fh:
        subprocess.run([tessera, "schema", src, "--json"], stdout=fh, check=True)
    subprocess.run([tessera, "read", src, "--format", "arrow", "-o", cells], check=True)
    return src, schema, cells


def run_tessera(case, i):
    _, schema, cells = case
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


def run_libtiledb(case, i):
    src = case[0]
    dst = os.path.join(work, f"libtiledb-{i}")
    shutil.rmtree(dst, ignore_errors=True)
    out = subprocess.run([sys.executable, "-c", LIBTILEDB, src, dst], capture_output=True, text=True, check=True)
    dt, rss = map(float, out.stdout.split())
    shutil.rmtree(dst)
    return dt, rss


def run_libtiledb_file(case, i):
    src, _, cells = case
    dst = os.path.join(work, f"libtiledb-file-{i}")
    shutil.rmtree(dst, ignore_errors=True)
    out = subprocess.run([sys.executable, "-c", LIBTILEDB_FILE, src, dst, cells],
                         capture_output=True, text=True, check=True)
    dt, rss = map(float, out.stdout.split())
    shutil.rmtree(dst)
    return dt, rss


def run_tessera_python(case, i):
    src, schema, _ = case
    dst = os.path.join(work, f"tessera-py-{i}")
    shutil.rmtree(dst, ignore_errors=True)
    out = subprocess.run([sys.executable, "-c", TESSERA_PY, src, dst, tessera, schema],
                         capture_output=True, text=True, check=True)
    dt, rss = map(float, out.stdout.split())
    shutil.rmtree(dst)
    return dt, rss


def f(v):
    s = [x[0] for x in v]
    return f"{min(s):.3f} / {statistics.median(s):.3f}"


rows = []
FILE = "TileDB-Py, same Arrow file (mmap, numpy, one write)"
MEMORY = "TileDB-Py, numpy in memory, write only"
cases = (("sparse_2d", "10,000,000", run_tessera, "CLI, Arrow file, process", run_libtiledb_file, FILE),
         ("dense_f64_zstd", "67,108,864", run_tessera, "CLI, Arrow file, process", run_libtiledb_file, FILE),
         ("dense_f64_zstd", "67,108,864", run_tessera_python, "Python, numpy box, write only", run_libtiledb, MEMORY))
only = sys.argv[4] if len(sys.argv) > 4 else ""
for name, cells_label, ours, how, peer, peer_how in cases:
    if only and only not in how:
        continue
    case = prepare(name)
    t, lt = [], []
    for i in range(rounds):
        pair = (ours, t), (peer, lt)
        for fn, acc in (pair if i % 2 == 0 else pair[::-1]):
            acc.append(fn(case, i))
        print(f"{name} ({how}) round {i}: tessera {t[-1][0]:.3f}s, libtiledb {lt[-1][0]:.3f}s", file=sys.stderr, flush=True)
    os.remove(case[2])
    ratio = statistics.median(x[0] for x in t) / statistics.median(x[0] for x in lt)
    rss = f"{max(x[1] for x in t):.0f} / {max(x[1] for x in lt):.0f}"
    rows.append(f"| {name} | {cells_label} | {how} | {peer_how} | {f(t)} | {f(lt)} | {ratio:.2f} | {rss} |")

print("| array | cells | tessera | libtiledb | tessera s | libtiledb s | ratio | RSS tessera / libtiledb MiB |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print(r)
