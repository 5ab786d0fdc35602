"""The object-store read benchmark: tessera and libtiledb reading the bench
arrays from the S3 rig of shared/bench/s3 (s3s-fs, a file-backed server
whose ranged GET costs its range, behind delay_proxy.py: DELAY_MS a
request, MBPS a connection), both through the same proxy, alternating.

    python s3.py BENCH_DIR TESSERA S3S_FS DELAY_PROXY ROUNDS DELAY_MS MBPS ONLY OUT_MD

Every case of the local benchmark (common.cases()). tessera's time is its
whole process (`tessera read s3://... --format null`); libtiledb's is its
open and read inside its process (libtiledb_read.py: the C API of the
libtiledb TileDB-Py 0.36.1 ships), start-up excluded. Both must return the
cells `tessera aggregate ... count` counts on the local copy.

One more round of each, untimed, goes through a counting proxy
(s3_proxy.py, no delay): requests and bytes fetched. Beside each case, the
rig's floor: the longer of
  - fetch: the bytes tessera fetched, asked as tessera asked for them but
    cut into ranged GETs of at most 8 MiB, 32 at once (curl --parallel,
    signed), through the same delaying proxy: the network alone;
  - local: tessera reading the same case from the local copy (open,
    decode, assembly): the work alone.
ONLY: run just the cases whose "array / case" holds this text ("" for all).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from urllib.parse import unquote, urlsplit

bench, tessera, s3s_fs, delay_proxy, rounds, delay, mbps, only, out_md = sys.argv[1:10]
rounds = int(rounds)
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import common  # noqa: E402

common.configure(tessera, bench)
from common import free_port, libtiledb_spec, run, tessera_cmd, tessera_count, wait  # noqa: E402

PIECE, AT_ONCE = 8 << 20, 32
# The SHA-256 of an empty body: s3s-fs wants the header curl does not send.
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
cases = [c for c in common.cases() if only in f"{c[0]} / {c[1]}"]
names = sorted({c[0] for c in cases})

# The server's folder: the arrays linked in, not copied.
root = os.path.join(bench, "s3root-read")
shutil.rmtree(root, ignore_errors=True)
for name in names:
    shutil.copytree(os.path.join(bench, name), os.path.join(root, "bench", name), copy_function=os.link)

delayed, counting = free_port(), free_port()
log = tempfile.NamedTemporaryFile(prefix="s3-read-", suffix=".log", delete=False).name
server_proc, server = common.start_s3s_fs(s3s_fs, root)
procs = [server_proc]
procs.append(subprocess.Popen([sys.executable, delay_proxy, str(delayed), str(server), delay, mbps]))
procs.append(subprocess.Popen([sys.executable, os.path.join(here, "s3_proxy.py"), str(counting), str(server), "0"],
                              env=dict(os.environ, PROXY_LOG=log)))
wait(delayed)
wait(counting)


env_for = common.s3_env


def counted():
    """Requests and bytes down through the counting proxy since the last
    call, and the GETs it forwarded (path, Range header)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{counting}/__proxy/stats") as r:
        stats = json.loads(r.read())
    with open(log) as fh:
        gets = [line.split(" ", 2) for line in fh.read().splitlines()]
    open(log, "w").close()
    gets = [(p, rng.strip()) for m, p, rng in gets if m == "GET" and "list-type" not in p]
    return stats["requests"], stats["bytes_down"], gets


def pieces(gets):
    """tessera's GETs of object bytes cut into ranged GETs of at most
    PIECE: (path, first, last) each."""
    sizes = {}
    out = []
    for path, rng in gets:
        key = os.path.join(root, unquote(urlsplit(path).path).lstrip("/"))
        size = sizes.setdefault(key, os.path.getsize(key))
        if rng.startswith("bytes=-"):
            a, b = max(0, size - int(rng[7:])), size - 1
        elif rng.startswith("bytes="):
            a, b = (int(x) for x in rng[6:].split("-"))
        else:
            a, b = 0, size - 1
        while a <= b:
            out.append((urlsplit(path).path, a, min(b, a + PIECE - 1)))
            a += PIECE
    return out


def fetch_floor(parts):
    """Seconds for curl to fetch `parts` through the delaying proxy,
    AT_ONCE at a time."""
    if not parts:
        return 0.0
    with tempfile.NamedTemporaryFile("w", suffix=".curl", delete=False) as cfg:
        for i, (path, a, b) in enumerate(parts):
            if i:
                cfg.write("next\n")
            cfg.write(f'url = "http://127.0.0.1:{delayed}{path}"\nrange = "{a}-{b}"\noutput = "/dev/null"\n'
                      'aws-sigv4 = "aws:amz:us-east-1:s3"\nuser = "test:test"\nfail\nsilent\n'
                      f'header = "x-amz-content-sha256: {EMPTY_SHA256}"\n')
    t0 = time.perf_counter()
    subprocess.run(["curl", "-s", "--no-progress-meter", "--parallel", "--parallel-immediate", "--parallel-max", str(AT_ONCE), "-K", cfg.name],
                   check=True)
    dt = time.perf_counter() - t0
    os.unlink(cfg.name)
    return dt


py = sys.executable
rows = []
try:
    for name, label, attrs, sub, cond in cases:
        local, uri = os.path.join(bench, name), f"s3://bench/{name}"
        spec = libtiledb_spec(local, attrs, sub, cond)
        want = tessera_count(local, sub, cond)
        tcmd = tessera_cmd(uri, attrs, sub, cond)
        lcmd = [py, os.path.join(here, "libtiledb_read.py"), uri, spec, "0"]
        # Counted first (one untimed round each), so the floor knows its bytes.
        counted()
        run(tcmd, env_for(counting))
        t_req, t_bytes, t_gets = counted()
        run(lcmd, env_for(counting))
        l_req, l_bytes, _ = counted()
        parts = pieces(t_gets)
        t, l, fl, lo = [], [], [], []
        for i in range(rounds):
            sides = [("t", tcmd), ("l", lcmd)]
            for side, cmd in sides if i % 2 == 0 else sides[::-1]:
                dt, _, out = run(cmd, env_for(delayed))
                if side == "t":
                    t.append(dt)
                    continue
                secs, cells, _ = out.split()
                if int(cells) != want:
                    raise SystemExit(f"{name} / {label}: libtiledb read {cells} cells, tessera counts {want}")
                l.append(float(secs))
            fl.append(fetch_floor(parts))
            lo.append(run(tessera_cmd(local, attrs, sub, cond))[0])
        med = {k: statistics.median(v) for k, v in (("t", t), ("l", l), ("fl", fl), ("lo", lo))}
        floor = max(med["fl"], med["lo"])
        rows.append((name, label, med, floor, t_req, l_req, t_bytes, l_bytes))
        print(f"{name} / {label}: tessera {med['t']:.3f}s, libtiledb {med['l']:.3f}s "
              f"({med['t'] / med['l']:.2f}); floor {floor:.3f}s (fetch {med['fl']:.3f}, local {med['lo']:.3f})",
              flush=True)
finally:
    for p in procs:
        p.kill()
    shutil.rmtree(root, ignore_errors=True)
    os.unlink(log)

mb = lambda b: f"{b / 1e6:.1f}"
common.write_markdown(
    out_md,
    f"Every request delayed {delay} ms, each connection at most {mbps} MB/s (s3s-fs behind delay_proxy.py); "
    f"medians of {rounds} rounds. Requests and MB fetched from one more round of each, through a counting proxy. "
    f"Floor: the longer of fetching tessera's bytes as ranged GETs of at most 8 MiB, {AT_ONCE} at once (curl), "
    "and tessera reading the case from a local copy.",
    ["array", "case", "tessera s", "libtiledb s", "time ratio", "floor s (fetch / local)", "tessera / floor",
     "requests tessera / libtiledb", "MB fetched tessera / libtiledb"],
    [(name, label, f"{m['t']:.3f}", f"{m['l']:.3f}", f"{m['t'] / m['l']:.2f}",
      f"{floor:.3f} ({m['fl']:.3f} / {m['lo']:.3f})", f"{m['t'] / floor:.2f}", f"{tr} / {lr}",
      f"{mb(tb)} / {mb(lb)}")
     for name, label, m, floor, tr, lr, tb, lb in rows],
)
