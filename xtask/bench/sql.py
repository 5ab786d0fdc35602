"""SQL over the bench arrays: `tessera sql` against TileDB-Py and DuckDB, in the same run.

    python sql.py BENCH_DIR TESSERA ROUNDS OUT_MD

Two questions over the 10-million-cell sparse array and the float64 dense
array: a grouped aggregate and a filtered count. tessera answers with
`tessera sql` (the shipped binary, a whole process: start-up, planning,
the read and the aggregation). TileDB-Py answers as its users do today:
with its own aggregates where it has them (`query(cond=...).agg`, the
filtered count on the sparse array), otherwise `.df[]` of just the
columns needed and pandas. Its time is the open, the read and the pandas
step, after the imports. DuckDB answers the same SQL over the same cells
exported once to Parquet (`tessera read --format parquet`), a whole
`python -c "import duckdb; ..."` process, as a user who wants SQL over
the data would compare. Each run is a fresh process; rounds alternate
the sides. All answers are compared before any time is kept.
"""
import json
import os
import subprocess
import sys

from common import alternating, run, write_markdown
from sql_cases import CASES, same

bench, tessera, rounds, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

RUNNER = r"""
import json, resource, sys, time
import tiledb
uri, code = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
A = tiledb.open(uri)
exec(code)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "answer": answer}))
"""


def run_tiledb(uri, code):
    out = subprocess.run([sys.executable, "-c", RUNNER, uri, code], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def run_tessera(uri, query):
    seconds, rss_mib, out = run([tessera, "sql", "--format", "jsonl", "--table", f"a={uri}", query])
    rows = [list(json.loads(line).values()) for line in out.splitlines()]
    return {"seconds": seconds, "rss_kib": rss_mib * 1024, "answer": rows}


DUCKDB = r"""
import json, sys
import duckdb
rows = duckdb.sql(sys.argv[2].replace(" FROM a", " FROM read_parquet('" + sys.argv[1] + "')")).fetchall()
print(json.dumps({"answer": [list(r) for r in rows]}))
"""


def parquet_of(uri):
    """The array's cells as Parquet, written once by `tessera read`."""
    path = uri.rstrip("/") + ".parquet"
    if not os.path.exists(path):
        subprocess.run([tessera, "read", uri, "--format", "parquet", "-o", path + ".part"], check=True)
        os.rename(path + ".part", path)
    return path


def run_duckdb(path, query):
    seconds, rss_mib, out = run([sys.executable, "-c", DUCKDB, path, query])
    return {"seconds": seconds, "rss_kib": rss_mib * 1024, "answer": json.loads(out)["answer"]}


rows = []
for name, question, query, code in CASES:
    uri = os.path.join(bench, name)
    t = run_tessera(uri, query)
    l = run_tiledb(uri, code)
    pq = parquet_of(uri)
    d = run_duckdb(pq, query)
    for peer, answer in [("TileDB-Py", l["answer"]), ("DuckDB", d["answer"])]:
        if not same(t["answer"], answer):
            sys.exit(f"{name} / {question}: answers differ:\n tessera {t['answer'][:5]}\n {peer} {answer[:5]}")
    got = alternating(rounds, {
        "tessera": lambda: run_tessera(uri, query),
        "tiledb": lambda: run_tiledb(uri, code),
        "duckdb": lambda: run_duckdb(pq, query),
    })
    (ts, tr), (ls, lr), (ds, dr) = got["tessera"], got["tiledb"], got["duckdb"]
    print(f"{name} / {question}: tessera {ts:.3f} s, TileDB-Py {ls:.3f} s ({ts / ls:.2f}), "
          f"DuckDB {ds:.3f} s ({ts / ds:.2f}); RSS {tr:.0f} / {lr:.0f} / {dr:.0f} MiB", flush=True)
    rows.append((name, question, ts, ls, ds, tr, lr, dr))

write_markdown(
    out,
    f"SQL over the bench arrays (`cargo xtask bench-sql`, {rounds} rounds, medians): `tessera sql` "
    "(the shipped binary, whole process) against TileDB-Py 0.36.1 / libtiledb 2.30 (its own "
    "aggregates where it has them, else `.df[]` of the needed columns plus pandas; open, read and "
    "pandas timed, imports not) and DuckDB 2.0.1 over the same cells as Parquet (a whole "
    "`python -c \"import duckdb; ...\"` process). Answers compared first.",
    ["array", "question", "tessera (s)", "TileDB-Py (s)", "ratio", "DuckDB on Parquet (s)",
     "ratio", "peak RSS tessera / TileDB-Py / DuckDB (MiB)"],
    [(n, q, f"{ts:.3f}", f"{ls:.3f}", f"{ts / ls:.2f}", f"{ds:.3f}", f"{ts / ds:.2f}",
      f"{tr:.0f} / {lr:.0f} / {dr:.0f}")
     for n, q, ts, ls, ds, tr, lr, dr in rows],
)
