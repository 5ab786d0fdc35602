"""The object store benchmark: tessera and libtiledb reading the bench
arrays from the same S3 server (moto) through the same delaying, counting
proxy (s3_proxy.py: DELAY_MS added to every request). Per array: opening
it, a full read and a 1 % read, each as the number of requests the proxy
counted and the wall time (tessera's whole process; libtiledb's open and
read inside its process, start-up excluded). Both must read the cells
`tessera aggregate ... count` counts on the local copy.

Usage: s3.py BENCH_DIR TESSERA MOTO_PYTHON MOTO_SERVER ROUNDS DELAY_MS OUT_MD
"""
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

bench, tessera, moto_py, moto_server, rounds, delay, out_md = sys.argv[1:8]
rounds = int(rounds)
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import common  # noqa: E402

common.configure(tessera, bench)
from common import free_port, libtiledb_spec, quarter, run, side, tessera_cmd, tessera_count, wait  # noqa: E402


moto_port, proxy_port = free_port(), free_port()
procs = [subprocess.Popen([moto_server, "-H", "127.0.0.1", "-p", str(moto_port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
wait(moto_port)
procs.append(subprocess.Popen([moto_py, os.path.join(here, "s3_proxy.py"), str(proxy_port), str(moto_port), delay]))
wait(proxy_port)


def stats_reset():
    with urllib.request.urlopen(f"http://127.0.0.1:{proxy_port}/__proxy/stats") as r:
        return json.loads(r.read())["requests"]


env = dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy_port}", AWS_ACCESS_KEY_ID="test",
           AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1", AWS_ALLOW_HTTP="true")
env["TESSERA_LIBTILEDB_CONFIG"] = json.dumps({
    "vfs.s3.endpoint_override": f"127.0.0.1:{proxy_port}", "vfs.s3.scheme": "http",
    "vfs.s3.use_virtual_addressing": "false", "vfs.s3.region": "us-east-1",
    "vfs.s3.aws_access_key_id": "test", "vfs.s3.aws_secret_access_key": "test"})
py = sys.executable
names = ["dense_f64_zstd", "dense_f32_fragments", "sparse_2d"]
rows = []
try:
    for name in names:
        subprocess.run([moto_py, os.path.join(here, "s3_upload.py"), f"http://127.0.0.1:{moto_port}", "bench",
                        os.path.join(bench, name), name], check=True, stdout=subprocess.DEVNULL)
    for name in names:
        local, uri = os.path.join(bench, name), f"s3://bench/{name}"
        if name.startswith("dense"):
            n = side(name)
            one = f"{quarter(n)},{quarter(n)}"
        else:
            one = f"0:{2**40 // 10},0:{2**40 // 10}"
        for label, sub in [("open", None), ("full read", None), ("1 % read", one)]:
            spec = json.loads(libtiledb_spec(local, None, sub, None))
            if label == "open":
                spec["open_only"] = True
                tcmd = [tessera, "fragments", uri]
            else:
                tcmd = tessera_cmd(uri, None, sub, None)
            want = None if label == "open" else tessera_count(local, sub, None)
            t, l, tr, lr = [], [], set(), set()
            for _ in range(rounds):
                stats_reset()
                t.append(run(tcmd, env)[0])
                tr.add(stats_reset())
                _, _, o = run([py, os.path.join(here, "libtiledb_read.py"), uri, json.dumps(spec), "0"], env)
                lr.add(stats_reset())
                secs, cells, _ = o.split()
                l.append(float(secs))
                if want is not None and int(cells) != want:
                    raise SystemExit(f"{name} / {label}: libtiledb read {cells} cells, tessera counts {want}")
            rows.append((name, label, max(tr), max(lr), statistics.median(t), statistics.median(l)))
            print(f"{name} / {label}: requests {max(tr)} vs {max(lr)}, {statistics.median(t):.3f}s vs {statistics.median(l):.3f}s", flush=True)
finally:
    for p in procs:
        p.kill()

with open(out_md, "w") as o:
    o.write(f"Every request delayed {delay} ms by the proxy; medians of {rounds} rounds.\n\n")
    o.write("| array | case | tessera requests | libtiledb requests | request ratio | tessera s | libtiledb s | time ratio |\n")
    o.write("|---|---|---|---|---|---|---|---|\n")
    for name, label, tr, lr, t, l in rows:
        o.write(f"| {name} | {label} | {tr} | {lr} | {tr / lr:.2f} | {t:.3f} | {l:.3f} | {t / l:.2f} |\n")
