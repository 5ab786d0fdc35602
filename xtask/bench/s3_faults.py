"""What retries cost: tessera and libtiledb reading bench arrays from the S3
rig of shared/bench/s3 while the store answers a share of requests 503
SlowDown (throttling), both through the same chain, alternating:

    reader -> delay_proxy.py (DELAY_MS a request, MBPS a connection)
           -> fault_proxy.py --only 503 --rate R --keep-alive (seeded)
           -> s3s-fs

    python s3_faults.py BENCH_DIR TESSERA S3S_FS DELAY_PROXY FAULT_PROXY ROUNDS DELAY_MS MBPS RATES OUT_MD

RATES: comma-separated shares of requests answered 503 ("0,0.01,0.05"); the
first is the baseline each row is compared with. A 503 never reaches the
server and costs one round trip; what it costs the reader beyond that is
its backoff before the retry. tessera's time is its whole process
(`tessera read s3://... --format null`); libtiledb's its open and read
inside its process (libtiledb_read.py), start-up excluded. libtiledb must
return the cells `tessera aggregate ... count` counts on the local copy, at
every rate; tessera's cells of the subarray cases must equal its local
read's. The 503s each reader met are counted by the proxy, per run.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

(bench, tessera, s3s_fs, delay_proxy, fault_proxy, rounds, delay, mbps, rates,
 out_md) = sys.argv[1:11]
rounds = int(rounds)
rates = [float(r) for r in rates.split(",")]
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import common  # noqa: E402

common.configure(tessera, bench)
from common import free_port, libtiledb_spec, run, tessera_cmd, tessera_count, wait  # noqa: E402

# Large reads (many 8 MiB GETs side by side) and small ones (a few
# requests, each on the critical path).
CASES = [
    ("dense_f64_zstd", "full read"),
    ("dense_f64_zstd", "1 % subarray"),
    ("sparse_2d", "full read"),
    ("sparse_2d", "1 % subarray"),
]
cases = [c for c in common.cases() if (c[0], c[1]) in CASES]
names = sorted({c[0] for c in cases})

root = os.path.join(bench, "s3root-faults")
shutil.rmtree(root, ignore_errors=True)
for name in names:
    shutil.copytree(os.path.join(bench, name), os.path.join(root, "bench", name), copy_function=os.link)
report = tempfile.NamedTemporaryFile(prefix="s3-faults-", suffix=".json", delete=False).name
server_proc, server = common.start_s3s_fs(s3s_fs, root)
procs = [server_proc]


def injected():
    """503s the fault proxy has answered so far."""
    try:
        with open(report) as fh:
            counts = json.load(fh)
    except (FileNotFoundError, json.JSONDecodeError):
        return 0
    return sum(by.get("503", 0) for by in counts.values())


def chain(rate):
    """A fault proxy answering `rate` of requests 503 before the server,
    and a delaying proxy before it: the port readers are given."""
    faulty, delayed = free_port(), free_port()
    open(report, "w").close()
    faults = subprocess.Popen([sys.executable, fault_proxy, str(faulty), str(server), "--only", "503",
                               "--rate", str(rate), "--seed", "7", "--report", report, "--keep-alive"])
    slow = subprocess.Popen([sys.executable, delay_proxy, str(delayed), str(faulty), delay, mbps])
    wait(faulty)
    wait(delayed)
    return delayed, [faults, slow]


def timed(case, port):
    """Median seconds of tessera and of libtiledb over ROUNDS alternating
    runs through `port`, and the median 503s each met in one run."""
    name, label, attrs, sub, cond = case
    local, uri = os.path.join(bench, name), f"s3://bench/{name}"
    want = tessera_count(local, sub, cond)
    tcmd = tessera_cmd(uri, attrs, sub, cond)
    lcmd = [sys.executable, os.path.join(here, "libtiledb_read.py"), uri,
            libtiledb_spec(local, attrs, sub, cond), "0"]
    env = common.s3_env(port)
    seconds, met = {"t": [], "l": []}, {"t": [], "l": []}
    for i in range(rounds):
        sides = [("t", tcmd), ("l", lcmd)]
        for side, cmd in sides if i % 2 == 0 else sides[::-1]:
            before = injected()
            dt, _, out = run(cmd, env)
            met[side].append(injected() - before)
            if side == "t":
                seconds["t"].append(dt)
                continue
            secs, cells, _ = out.split()
            if int(cells) != want:
                raise SystemExit(f"{name} / {label}: libtiledb read {cells} cells, tessera counts {want}")
            seconds["l"].append(float(secs))
    return ({k: statistics.median(v) for k, v in seconds.items()},
            {k: statistics.median(v) for k, v in met.items()})


def same_cells(case, port):
    """Fails unless tessera's cells through the chain (as CSV, lines
    sorted) equal those it reads from the local copy. Only for subarray
    cases: full reads are checked by count alone here (test_s3.py checks
    whole reads under every fault, against local reads)."""
    name, label, attrs, sub, cond = case

    def lines(arr, env):
        cmd = tessera_cmd(arr, attrs, sub, cond)
        # `--format null` swapped for CSV.
        csv = cmd[:3] + ["--format", "csv"] + cmd[5:]
        return sorted(subprocess.run(csv, capture_output=True, check=True, env=env).stdout.splitlines())

    if lines(f"s3://bench/{name}", common.s3_env(port)) != lines(os.path.join(bench, name), None):
        raise SystemExit(f"{name} / {label}: tessera's cells through the faulty chain differ from a local read")


rows = []
try:
    for rate in rates:
        port, chained = chain(rate)
        procs += chained
        try:
            for case in cases:
                name, label = case[0], case[1]
                if case[3]:
                    same_cells(case, port)
                med, met = timed(case, port)
                rows.append((name, label, rate, med, met))
                print(f"{name} / {label}, {rate:.0%} 503: tessera {med['t']:.3f}s ({met['t']:.0f} met), "
                      f"libtiledb {med['l']:.3f}s ({met['l']:.0f} met)", flush=True)
        finally:
            for p in chained:
                p.kill()
            for p in chained:
                procs.remove(p)
finally:
    for p in procs:
        p.kill()
    shutil.rmtree(root, ignore_errors=True)
    os.unlink(report)

base = {(n, c): m for n, c, r, m, _ in rows if r == rates[0]}
common.write_markdown(
    out_md,
    f"Every request delayed {delay} ms, each connection at most {mbps} MB/s (s3s-fs behind delay_proxy.py), "
    f"a seeded share of requests answered 503 SlowDown before the server (fault_proxy.py --only 503); "
    f"medians of {rounds} rounds, alternating. \"× own {rates[0]:.0%}\": the time against the same reader's "
    "with no 503s, through the same chain. 503s met: the median in one read.",
    ["array", "case", "503 share", "tessera s", "libtiledb s", "time ratio", "tessera × own 0 %",
     "libtiledb × own 0 %", "503s met tessera / libtiledb"],
    [(n, c, f"{r:.0%}", f"{m['t']:.3f}", f"{m['l']:.3f}", f"{m['t'] / m['l']:.2f}",
      f"{m['t'] / base[(n, c)]['t']:.2f}", f"{m['l'] / base[(n, c)]['l']:.2f}", f"{met['t']:.0f} / {met['l']:.0f}")
     for n, c, r, m, met in rows],
)
