"""One read with TileDB-Py (libtiledb), timed inside the process.

Usage: libtiledb_read.py ARRAY ATTRS|- SUBARRAY|- COND|- THREADS
Prints the read's own seconds (import and start-up excluded) on stdout.
SUBARRAY is `lo:hi,lo:hi` (inclusive), one range per dimension.
"""
import sys
import time

import tiledb

uri, attrs, sub, cond, threads = sys.argv[1:6]
cfg = {}
if threads == "1":
    cfg = {"sm.compute_concurrency_level": "1", "sm.io_concurrency_level": "1"}
ctx = tiledb.Ctx(tiledb.Config(cfg))
t0 = time.perf_counter()
with tiledb.open(uri, ctx=ctx) as A:
    kw = {}
    if attrs != "-":
        kw["attrs"] = attrs.split(",")
    if cond != "-":
        kw["cond"] = cond
    # Same work as `tessera read --format null`: sparse coordinates come
    # back unless only attributes were asked for. Dense coordinates are not
    # built by either reader: tessera describes them by a grid (and writes
    # them cell by cell in text formats), TileDB-Py leaves them out of dense
    # reads by default.
    if attrs != "-" or not A.schema.sparse:
        kw["dims"] = []
    else:
        kw["dims"] = [d.name for d in A.schema.domain]
    q = A.query(**kw)
    if sub == "-":
        r = q[:]
    else:
        idx = tuple(slice(int(a), int(b) + 1) for a, b in (p.split(":") for p in sub.split(",")))
        r = q[idx]
print(time.perf_counter() - t0)
