"""What the benchmarks share: running a process with its peak RSS, the
bench arrays' cases as `tessera read` arguments and as the spec
libtiledb_read.py reads, and the cell counts both must return.
configure() names the tessera binary and the bench folder first."""
import os
import platform
import statistics
import subprocess
import time

tessera = None
bench = None


def configure(tessera_bin, bench_dir):
    global tessera, bench
    tessera, bench = tessera_bin, bench_dir


def run(cmd, env=None):
    """Wall seconds, peak RSS (MiB) and stdout of one process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err.decode()[-2000:]}")
    return dt, ru.ru_maxrss / 1024, out.decode()


def quarter(n):
    return f"{n * 45 // 100}:{n * 55 // 100 - 1}"


def side(name):
    # Dense sides: from the array's schema, via our own CLI.
    info = subprocess.run([tessera, "schema", os.path.join(bench, name), "--json"], capture_output=True, text=True, check=True).stdout
    import json

    d = json.loads(info)["dimensions"][0]["domain"]
    return int(d[1]) + 1


def cases():
    """The bench cases: (array, case, attributes, subarray, condition)."""
    out = []
    for name in ["dense_f64_zstd", "dense_i32_raw", "dense_f32_fragments"]:
        n = side(name)
        out += [
            (name, "full read", None, None, None),
            (name, "one attribute (a), no coordinates", "a", None, None),
            (name, "1 % subarray", None, f"{quarter(n)},{quarter(n)}", None),
        ]
    big = 2**40
    out += [
        ("sparse_2d", "full read", None, None, None),
        ("sparse_2d", "one attribute (v), no coordinates", "v", None, None),
        ("sparse_2d", "1 % subarray", None, f"0:{big // 10},0:{big // 10}", None),
        ("sparse_2d", "condition k < 10", None, None, "k < 10"),
        ("sparse_strings", "full read", None, None, None),
        ("sparse_strings", "1 % subarray", None, f"0:{2**62 // 100}", None),
        ("sparse_strings", "condition s < 'b'", None, None, "s < 'b'"),
        ("sparse_fragments", "full read, 10 fragments deduplicated", None, None, None),
        ("sparse_fragments", "condition v > 0.5, deduplicated", None, None, "v > 0.5"),
    ]
    return out


def tessera_cmd(arr, attrs, sub, cond):
    cmd = [tessera, "read", arr, "--format", "null"]
    if attrs:
        # As libtiledb_read.py does: attributes only, no coordinates.
        cmd += ["--attrs", attrs, "--no-dims"]
    if sub:
        dims = ["r", "c"] if "dense" in arr else (["i"] if "sparse_strings" in arr else ["x", "y"])
        for d, r in zip(dims, sub.split(",")):
            cmd += ["--subarray", f"{d}={r}"]
    if cond:
        cmd += ["--where", cond]
    return cmd


SIZES = {"INT8": 1, "UINT8": 1, "INT16": 2, "UINT16": 2, "INT32": 4, "UINT32": 4, "INT64": 8,
         "UINT64": 8, "FLOAT32": 4, "FLOAT64": 8, "STRING_ASCII": 1, "STRING_UTF8": 1}


def libtiledb_spec(arr, attrs, sub, cond):
    """What libtiledb_read.py reads: the fields `tessera read` returns for
    the case (sparse coordinates unless only attributes are asked for;
    dense coordinates never: neither reader builds them), from the schema."""
    import json

    info = json.loads(subprocess.run([tessera, "schema", arr, "--json"], capture_output=True, text=True, check=True).stdout)
    sparse = info["array_type"] == "sparse"

    def field(x):
        n = x.get("cell_val_num", 1)
        var = n == "var"
        return {
            "name": x["name"],
            "var": var,
            "nullable": bool(x.get("nullable")),
            "cell_size": 0 if var else SIZES[x["type"]] * n,
            "type": x["type"],
        }

    by_name = {x["name"]: field(x) for x in info["dimensions"] + info["attributes"]}
    if attrs:
        fields = [by_name[a] for a in attrs.split(",")]
    else:
        fields = [field(x) for x in info["attributes"]]
        if sparse:
            fields = [field(x) for x in info["dimensions"]] + fields
    spec = {
        "sparse": sparse,
        "fields": fields,
        "dims": [field(x) for x in info["dimensions"]],
        "subarray": [[int(v) for v in r.split(":")] for r in sub.split(",")] if sub else None,
        "cond": None,
    }
    if not sparse and not sub:
        # libtiledb's C API wants a dense read's subarray set: the domain.
        spec["subarray"] = [[int(v) for v in x["domain"]] for x in info["dimensions"]]
    if cond:
        name, op, value = cond.split(" ", 2)
        spec["cond"] = {"name": name, "type": by_name[name]["type"], "op": op, "value": value.strip("'")}
    return json.dumps(spec)


def tessera_count(arr, sub, cond):
    """The cells the case selects, by `tessera aggregate` (from metadata
    where it can): libtiledb must have read as many."""
    import json

    cmd = [tessera, "aggregate", arr, "count"] + tessera_cmd(arr, None, sub, cond)[5:]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["count"]


def stats(v):
    return min(v), statistics.median(v)


def alternating(rounds, sides):
    """Runs each of `sides` (name -> function returning a dict with
    "seconds" and "rss_kib") `rounds` times, alternating which goes first;
    gives each side's median seconds and largest RSS in MiB."""
    got = {name: [] for name in sides}
    order = list(sides)
    for r in range(rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            got[name].append(sides[name]())
    return {
        name: (statistics.median(x["seconds"] for x in runs), max(x["rss_kib"] for x in runs) / 1024)
        for name, runs in got.items()
    }


def side_by_side(rounds, run, sides, *args):
    """Each of `sides` once untimed (the files then sit in the page
    cache), then `alternating` rounds of `run(side, *args)`."""
    for side in sides:
        run(side, *args)
    return alternating(rounds, {side: (lambda side=side: run(side, *args)) for side in sides})


def write_markdown(out, intro, header, rows):
    """Writes `intro`, then a table of `header` cells (the first two
    left-aligned, the rest right) and `rows` of cells, to `out`."""
    lines = [intro, "", "| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def free_port():
    """A loopback port nothing listens on now, below the kernel's ephemeral
    range: a port of that range (what binding port 0 gives) may become an
    outgoing connection's before the server binds it, and `wait` polling a
    port nobody listens on yet may be given it as its own, and connect to
    itself."""
    import random
    import socket

    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(10000):
        port = random.randrange(10000, low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free loopback port below {low}")


def wait(port):
    """Waits (up to 30 s) until something listens on `port`."""
    import socket

    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port}")


def start_s3s_fs(program, root):
    """s3s-fs (the S3 rig's server) serving the folder `root` (a bucket a
    sub-folder) on a free port, up and listening: (process, port)."""
    port = free_port()
    proc = subprocess.Popen([program, "--host", "127.0.0.1", "--port", str(port), "--access-key", "test",
                             "--secret-key", "test", root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait(port)
    return proc, port


def libtiledb_s3(port):
    """libtiledb's configuration for the rig's endpoint on `port`."""
    return {"vfs.s3.endpoint_override": f"127.0.0.1:{port}", "vfs.s3.scheme": "http",
            "vfs.s3.use_virtual_addressing": "false", "vfs.s3.region": "us-east-1",
            "vfs.s3.aws_access_key_id": "test", "vfs.s3.aws_secret_access_key": "test"}


def s3_env(port):
    """The environment reaching the rig's endpoint on `port`: `AWS_*` for
    tessera, TESSERA_LIBTILEDB_CONFIG (JSON) for libtiledb's runners."""
    import json

    return dict(os.environ, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_ACCESS_KEY_ID="test",
                AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1", AWS_ALLOW_HTTP="true",
                TESSERA_LIBTILEDB_CONFIG=json.dumps(libtiledb_s3(port)))


def cpu():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
