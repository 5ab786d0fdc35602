"""Single-cell reads: tessera.soma against tiledbsoma 2.3.0, in the same run.

    python soma.py generate EXPERIMENT [N_OBS N_VAR DENSITY]
    python soma.py run EXPERIMENT ROUNDS [S3S_FS DELAY_PROXY DELAY_MS MBPS] OUT_MD

`generate` writes an experiment with tiledbsoma.io.from_anndata (as users
make them): N_OBS cells (default 100,000) by N_VAR genes (20,000), X at
DENSITY (0.02: 40 million values) as float32 counts, obs with a
categorical cell type (10 types), a batch, n_genes and percent_mito, var
with a categorical chromosome, obsm with X_pca (50 components) and X_umap. `run` times each question in a fresh
process per side, alternating; the time is the question's calls after the
imports (the library, and on both sides the modules the question's
result needs: anndata, scipy); peak RSS is the process's. With the S3 rig
of shared/bench/s3 (s3s-fs behind its delaying proxy), both read the
experiment from `s3://bench/EXPERIMENT_NAME` through the same proxy:
tessera from the AWS_ environment, tiledbsoma from a SOMATileDBContext of
the same endpoint.
"""
import json
import os
import shutil
import subprocess
import sys

from common import free_port, s3_env, side_by_side, start_s3s_fs, wait, write_markdown

# Each question: its name, the modules its result needs (imported by both
# sides before the clock starts, so that neither's time holds a lazy
# import), and its code.
QUESTIONS = [
    ("open the experiment and its X layer", "",
     "exp = soma.open(uri, context=ctx); X = exp.ms['RNA'].X['data']; shape = X.shape"),
    ("obs value filter (one cell type, n_genes > 2000)", "",
     "exp = soma.open(uri, context=ctx); t = exp.obs.read(value_filter=\"cell_type == 'type_3' and n_genes > 2000\").concat()"),
    ("axis query to AnnData (a tenth of the cells)", "anndata",
     "exp = soma.open(uri, context=ctx); q = exp.axis_query('RNA', obs_query=soma.AxisQuery(value_filter=\"cell_type == 'type_3'\"));"
     " a = q.to_anndata('data')"),
    ("50 genes over every cell to AnnData", "anndata",
     "exp = soma.open(uri, context=ctx); q = exp.axis_query('RNA', var_query=soma.AxisQuery(coords=(list(range(0, exp.ms['RNA'].var.count, exp.ms['RNA'].var.count // 50)),)));"
     " a = q.to_anndata('data')"),
    ("whole X to CSR", "scipy.sparse",
     "exp = soma.open(uri, context=ctx); X = exp.ms['RNA'].X['data'];"
     " m, _ = next(X.read().blockwise(axis=0, size=X.shape[0]).scipy())"),
    ("io.to_anndata (obs, var, X, obsm)", "anndata",
     "exp = soma.open(uri, context=ctx); a = soma.io.to_anndata(exp, 'RNA')"),
]

RUNNER = r"""
import json, os, resource, sys, time
side, uri, imports, code = sys.argv[1:5]
ctx = None
if side == "tessera":
    import tessera.soma as soma
    import tessera.soma.io
else:
    import tiledbsoma as soma
    import tiledbsoma.io
    if "TESSERA_LIBTILEDB_CONFIG" in os.environ:
        ctx = soma.SOMATileDBContext(tiledb_config=json.loads(os.environ["TESSERA_LIBTILEDB_CONFIG"]))
for module in filter(None, imports.split(",")):
    __import__(module)
t0 = time.perf_counter()
exec(code)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def generate(uri, n_obs=100_000, n_var=20_000, density=0.02):
    import anndata as ad
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp
    import tiledbsoma.io

    rng = np.random.default_rng(7)
    obs = pd.DataFrame(
        {
            "cell_type": pd.Categorical(rng.choice([f"type_{i}" for i in range(10)], n_obs)),
            "batch": pd.Categorical(rng.choice(["a", "b", "c"], n_obs)),
            "n_genes": rng.integers(100, 5000, n_obs).astype(np.int32),
            "percent_mito": rng.random(n_obs).astype(np.float32),
        },
        index=[f"cell_{i}" for i in range(n_obs)],
    )
    var = pd.DataFrame(
        {"chromosome": pd.Categorical(rng.choice([f"chr{i}" for i in range(1, 23)], n_var)),
         "means": rng.random(n_var)},
        index=[f"gene_{j}" for j in range(n_var)],
    )
    # Per cell, its genes drawn at the density: CSR built directly.
    per_cell = rng.binomial(n_var, density, n_obs)
    indptr = np.concatenate(([0], np.cumsum(per_cell)))
    indices = np.concatenate([np.sort(rng.choice(n_var, k, replace=False)) for k in per_cell]).astype(np.int32)
    data = rng.integers(1, 50, len(indices)).astype(np.float32)
    x = sp.csr_matrix((data, indices, indptr), shape=(n_obs, n_var))
    # Embeddings as analyses leave them: 50 principal components and a UMAP.
    obsm = {"X_pca": rng.standard_normal((n_obs, 50), dtype=np.float32),
            "X_umap": rng.standard_normal((n_obs, 2), dtype=np.float32)}
    tiledbsoma.io.from_anndata(uri, ad.AnnData(X=x, obs=obs, var=var, obsm=obsm), measurement_name="RNA")
    print(json.dumps({"experiment": uri, "cells": n_obs, "genes": n_var, "values": int(len(data))}))


# The environment of both sides' processes (the S3 rig's endpoint).
ENV = dict(os.environ)


def run(side, uri, imports, code):
    out = subprocess.run([sys.executable, "-c", RUNNER, side, uri, imports, code], check=True,
                         capture_output=True, text=True, env=ENV)
    return json.loads(out.stdout.strip().splitlines()[-1])


def s3_rig(experiment, s3s_fs, delay_proxy, delay, mbps):
    """Serves `experiment` from s3s-fs behind the delaying proxy (its files
    linked into the server's folder, not copied); sets ENV to reach it and
    returns the experiment's URI and the servers' processes."""
    name = os.path.basename(os.path.normpath(experiment))
    root = os.path.join(os.path.dirname(os.path.normpath(experiment)), "s3root-soma")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(experiment, os.path.join(root, "bench", name), copy_function=os.link)
    server_proc, server = start_s3s_fs(s3s_fs, root)
    delayed = free_port()
    procs = [server_proc, subprocess.Popen([sys.executable, delay_proxy, str(delayed), str(server), delay, mbps])]
    wait(delayed)
    ENV.update(s3_env(delayed))
    return f"s3://bench/{name}", procs


def main():
    if sys.argv[1] == "generate":
        args = sys.argv[3:]
        generate(sys.argv[2], *(int(a) for a in args[:2]), *(float(a) for a in args[2:3]))
        return
    uri, rounds, rig, out = sys.argv[2], int(sys.argv[3]), sys.argv[4:-1], sys.argv[-1]
    where, procs, command = "a generated experiment on local disk", [], "cargo xtask bench-soma"
    if rig:
        s3s_fs, delay_proxy, delay, mbps = rig
        uri, procs = s3_rig(uri, s3s_fs, delay_proxy, delay, mbps)
        command += " --s3"
        where = (f"the generated experiment on the S3 rig (s3s-fs behind delay_proxy.py: every request "
                 f"delayed {delay} ms, each connection at most {mbps} MB/s)")
    try:
        rows = questions(uri, rounds)
    finally:
        for p in procs:
            p.kill()
    write_markdown(
        out,
        f"Single-cell reads (`{command}`, {rounds} rounds, medians): tessera.soma against "
        f"tiledbsoma 2.3.0 (libtiledb 2.30) on {where}, same machine, same run:",
        ["question", "tessera.soma (s)", "tiledbsoma (s)", "time ratio", "tessera peak RSS (MiB)",
         "tiledbsoma peak RSS (MiB)", "RSS ratio"],
        [(q, f"{t:.3f}", f"{s:.3f}", f"{t / s:.2f}", f"{tr:.0f}", f"{sr:.0f}", f"{tr / sr:.2f}")
         for q, t, s, tr, sr in rows],
    )


def questions(uri, rounds):
    """Each question's medians: (question, tessera s, tiledbsoma s, tessera
    MiB, tiledbsoma MiB)."""
    rows = []
    for question, imports, code in QUESTIONS:
        got = side_by_side(rounds, run, ["tessera", "tiledbsoma"], uri, imports, code)
        (t, tr), (s, sr) = got["tessera"], got["tiledbsoma"]
        rows.append((question, t, s, tr, sr))
        print(f"{question}: tessera {t:.3f} s, tiledbsoma {s:.3f} s ({t / s:.2f}); "
              f"RSS {tr:.0f} / {sr:.0f} MiB ({tr / sr:.2f})", flush=True)
    return rows


if __name__ == "__main__":
    main()
