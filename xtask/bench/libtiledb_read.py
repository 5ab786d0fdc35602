"""One read with libtiledb through its C API, timed inside the process.

Usage: libtiledb_read.py ARRAY SPEC_JSON THREADS
Prints the read's own seconds (interpreter start-up, `import tiledb` and
the context's creation excluded), the number of cells read, and the
seconds the context's creation took.

The C API is called with ctypes over the libtiledb that TileDB-Py ships,
into buffers allocated up front from libtiledb's own size estimates (numpy
`empty`, so untouched until written): no Python object is built per cell or
per tile, so Python overhead does not flatter tessera. SPEC_JSON (built by
bench.py from `tessera schema --json`):
  {"sparse": bool,
   "fields": [{"name", "var", "nullable"}],       # what is read
   "dims": [{"name", "type"}],                    # for subarray values
   "subarray": [[lo, hi], ...] | null,            # inclusive, per dimension
   "cond": {"name", "type", "op", "value"} | null}
Dense reads are row-major, sparse reads unordered: as `tessera read`. An
incomplete query is resubmitted with the same buffers (as tessera recycles
a batch's), or with doubled ones when nothing fitted.
"""
import ctypes as C
import glob
import json
import os
import struct
import sys
import time

import numpy as np
import tiledb  # noqa: F401  (loads the bundled libtiledb; its import is not timed)

uri, spec, threads = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
here = os.path.dirname(tiledb.__file__)
libs = glob.glob(os.path.join(here, "..", "tiledb.libs", "libtiledb*.so*")) + glob.glob(
    os.path.join(here, "libtiledb.so*")
)
if not libs:
    raise SystemExit(f"no libtiledb shared library next to {here}")
L = C.CDLL(libs[0])
P = C.c_void_p
u64p = C.POINTER(C.c_uint64)

READ, ROW_MAJOR, UNORDERED = 0, 0, 3
COMPLETED, INCOMPLETE = 1, 3
OPS = {"<": 0, "<=": 1, ">": 2, ">=": 3, "==": 4, "!=": 5}
PACK = {"INT8": "b", "UINT8": "B", "INT16": "h", "UINT16": "H", "INT32": "i", "UINT32": "I",
        "INT64": "q", "UINT64": "Q", "FLOAT32": "f", "FLOAT64": "d"}


def check(rc, what, ctx=None):
    if rc == 0:
        return
    msg = b"?"
    if ctx is not None:
        err = P()
        if L.tiledb_ctx_get_last_error(ctx, C.byref(err)) == 0 and err:
            m = C.c_char_p()
            L.tiledb_error_message(err, C.byref(m))
            msg = m.value or b"?"
    raise SystemExit(f"{what} failed ({rc}): {msg.decode(errors='replace')}")


def value_bytes(kind, v):
    if kind in PACK:
        return struct.pack("<" + PACK[kind], int(v) if PACK[kind] in "bBhHiIqQ" else float(v))
    return str(v).encode()


# The context (thread pools, configuration) is made before the read's clock
# starts, as TileDB-Py's Ctx was; its first creation also initialises the
# library. It is timed on its own: the part of a process's start-up that a
# program reading with libtiledb pays (beside the interpreter's), as a
# tessera process pays its own start-up.
t_ctx = time.perf_counter()
cfg = P()
err = P()
check(L.tiledb_config_alloc(C.byref(cfg), C.byref(err)), "config")
if threads == "1":
    for k in ["sm.compute_concurrency_level", "sm.io_concurrency_level"]:
        check(L.tiledb_config_set(cfg, k.encode(), b"1", C.byref(err)), k)
# Extra settings (the S3 benchmark's endpoint) as a JSON object.
for k, v in json.loads(os.environ.get("TESSERA_LIBTILEDB_CONFIG", "{}")).items():
    check(L.tiledb_config_set(cfg, k.encode(), str(v).encode(), C.byref(err)), k)
ctx = P()
check(L.tiledb_ctx_alloc(cfg, C.byref(ctx)), "context")
ctx_secs = time.perf_counter() - t_ctx

t0 = time.perf_counter()
arr = P()
check(L.tiledb_array_alloc(ctx, uri.encode(), C.byref(arr)), "array alloc", ctx)
check(L.tiledb_array_open(ctx, arr, READ), "array open", ctx)
if spec.get("open_only"):
    # The S3 benchmark's open case: the array opened, nothing read.
    print(f"{time.perf_counter() - t0:.6f} 0 {ctx_secs:.6f}")
    sys.exit(0)
q = P()
check(L.tiledb_query_alloc(ctx, arr, READ, C.byref(q)), "query alloc", ctx)
check(L.tiledb_query_set_layout(ctx, q, UNORDERED if spec["sparse"] else ROW_MAJOR), "layout", ctx)
keep = []  # what the C side points at stays alive until the end
if spec["subarray"]:
    sub = P()
    check(L.tiledb_subarray_alloc(ctx, arr, C.byref(sub)), "subarray alloc", ctx)
    for i, ((lo, hi), d) in enumerate(zip(spec["subarray"], spec["dims"])):
        a, b = value_bytes(d["type"], lo), value_bytes(d["type"], hi)
        keep += [a, b]
        check(L.tiledb_subarray_add_range(ctx, sub, C.c_uint32(i), a, b, None), "range", ctx)
    check(L.tiledb_query_set_subarray_t(ctx, q, sub), "set subarray", ctx)
if spec["cond"]:
    c = spec["cond"]
    qc = P()
    v = value_bytes(c["type"], c["value"])
    keep.append(v)
    check(L.tiledb_query_condition_alloc(ctx, C.byref(qc)), "condition alloc", ctx)
    check(
        L.tiledb_query_condition_init(ctx, qc, c["name"].encode(), v, C.c_uint64(len(v)), OPS[c["op"]]),
        "condition",
        ctx,
    )
    check(L.tiledb_query_set_condition(ctx, q, qc), "set condition", ctx)

# Buffers sized by libtiledb's estimates (at least a page each).
bufs = []
for f in spec["fields"]:
    name = f["name"].encode()
    data, offs = C.c_uint64(0), C.c_uint64(0)
    if f["var"]:
        check(L.tiledb_query_get_est_result_size_var(ctx, q, name, C.byref(offs), C.byref(data)), "estimate", ctx)
    else:
        check(L.tiledb_query_get_est_result_size(ctx, q, name, C.byref(data)), "estimate", ctx)
    cells = (offs.value // 8 if f["var"] else 0) or 1
    bufs.append({
        "name": name, "var": f["var"], "nullable": f["nullable"],
        "data": max(data.value, 4096), "offs": max(offs.value, 4096), "valid": max(cells, 4096),
    })


def attach():
    for b in bufs:
        b["d"] = np.empty(b["data"], dtype=np.uint8)
        b["dsz"] = C.c_uint64(b["data"])
        check(L.tiledb_query_set_data_buffer(ctx, q, b["name"], b["d"].ctypes.data_as(P), C.byref(b["dsz"])), "data buffer", ctx)
        if b["var"]:
            b["o"] = np.empty(b["offs"] // 8, dtype=np.uint64)
            b["osz"] = C.c_uint64(b["offs"])
            check(L.tiledb_query_set_offsets_buffer(ctx, q, b["name"], b["o"].ctypes.data_as(u64p), C.byref(b["osz"])), "offsets buffer", ctx)
        if b["nullable"]:
            b["v"] = np.empty(b["valid"], dtype=np.uint8)
            b["vsz"] = C.c_uint64(b["valid"])
            check(L.tiledb_query_set_validity_buffer(ctx, q, b["name"], b["v"].ctypes.data_as(P), C.byref(b["vsz"])), "validity buffer", ctx)


def reset_sizes():
    for b in bufs:
        b["dsz"].value = b["data"]
        if b["var"]:
            b["osz"].value = b["offs"]
        if b["nullable"]:
            b["vsz"].value = b["valid"]


attach()
cells = 0
status = C.c_int(0)
while True:
    check(L.tiledb_query_submit(ctx, q), "submit", ctx)
    check(L.tiledb_query_get_status(ctx, q, C.byref(status)), "status", ctx)
    b = bufs[0]
    got = b["osz"].value // 8 if b["var"] else None
    if got is None:
        # Fixed-sized: cells from the first field's bytes and its cell size.
        got = b["dsz"].value // spec["fields"][0]["cell_size"]
    cells += got
    if status.value == COMPLETED:
        break
    if status.value != INCOMPLETE:
        raise SystemExit(f"query status {status.value}")
    if got == 0:
        for b in bufs:
            b["data"] *= 2
            b["offs"] *= 2
            b["valid"] *= 2
        attach()
    else:
        reset_sizes()
L.tiledb_query_free(C.byref(q))
L.tiledb_array_close(ctx, arr)
L.tiledb_array_free(C.byref(arr))
print(time.perf_counter() - t0, cells, ctx_secs)
