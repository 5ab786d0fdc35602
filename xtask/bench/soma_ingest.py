"""Single-cell writes: tessera.soma.io against tiledbsoma.io 2.3.0, in the
same run.

    python soma_ingest.py generate DIR N_OBS [N_VAR DENSITY]
    python soma_ingest.py run DIR ROUNDS [LARGE_DIR] OUT_MD

`generate` writes DIR/base.h5ad (N_OBS cells by N_VAR genes, default
2,000, X at DENSITY, default 0.06, as float32 counts, and the same cells
as a `counts` layer; obs with categoricals, as users' files have them),
DIR/more.h5ad (a fifth as many new cells, some new genes and a new cell
type) and DIR/layer.npz (a normalised layer of base's shape). `run` times,
in a fresh process per side and alternating, from_h5ad of base.h5ad, the
append of more.h5ad (register_h5ads, prepare_experiment, from_h5ad) to an
experiment tiledbsoma ingested, and add_X_layer of the layer; each figure
is the whole process (imports included) and its peak RSS. With
LARGE_DIR (ten times the cells), from_h5ad of its base.h5ad once a side,
to show what grows.
"""
import json
import os
import shutil
import subprocess
import sys
import time

from common import cpu, write_markdown

RUNNER = r"""
import sys
side, task, data, target = sys.argv[1:5]
if side == "tessera":
    import tessera.soma as soma
    import tessera.soma.io as sio
else:
    import tiledbsoma as soma
    import tiledbsoma.io as sio
if task == "ingest":
    sio.from_h5ad(target, f"{data}/base.h5ad", "RNA")
elif task == "append":
    rd = sio.register_h5ads(target, [f"{data}/more.h5ad"], measurement_name="RNA", obs_field_name="obs_id",
                            var_field_name="var_id")
    rd.prepare_experiment(target)
    sio.from_h5ad(target, f"{data}/more.h5ad", "RNA", registration_mapping=rd)
elif task == "layer":
    import scipy.sparse as sp
    layer = sp.load_npz(f"{data}/layer.npz")
    with soma.Experiment.open(target, "w") as exp:
        sio.add_X_layer(exp, "RNA", "normalised", layer)
"""


def generate(out, n_obs, n_var=2000, density=0.06):
    import anndata as ad
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp

    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)

    def matrix(n, m):
        # Rows of about density * m values; a CSR built directly, a block of
        # rows at a time so that generating stays within memory.
        blocks = []
        for start in range(0, n, 50_000):
            rows = min(50_000, n - start)
            counts = rng.binomial(m, density, rows)
            indptr = np.concatenate(([0], np.cumsum(counts)))
            indices = np.concatenate([np.sort(rng.choice(m, k, replace=False)) for k in counts]).astype(np.int32)
            data = rng.integers(1, 50, len(indices)).astype(np.float32)
            blocks.append(sp.csr_matrix((data, indices, indptr), shape=(rows, m)))
        return sp.vstack(blocks, format="csr")

    def frame(n, prefix, types):
        return pd.DataFrame(
            {
                "cell_type": pd.Categorical(rng.choice(types, n)),
                "batch": pd.Categorical(rng.choice(["a", "b", "c"], n)),
                "n_genes": rng.integers(100, 5000, n).astype(np.int32),
                "percent_mito": rng.random(n).astype(np.float32),
            },
            index=[f"{prefix}{i}" for i in range(n)],
        )

    def genes(m, offset=0):
        return pd.DataFrame({"chromosome": pd.Categorical(rng.choice([f"chr{i}" for i in range(1, 23)], m)),
                             "means": rng.random(m)}, index=[f"gene_{j + offset}" for j in range(m)])

    types = [f"type_{i}" for i in range(10)]
    x = matrix(n_obs, n_var)
    ad.AnnData(X=x, obs=frame(n_obs, "cell_", types), var=genes(n_var), layers={"counts": x}).write_h5ad(
        f"{out}/base.h5ad")
    sp.save_npz(f"{out}/layer.npz", x.multiply(1.0 / (x.sum(axis=1) + 1)).tocsr().astype(np.float32),
                compressed=False)
    del x
    more, extra = max(1, n_obs // 5), n_var // 20
    y = matrix(more, n_var + extra)
    ad.AnnData(X=y, obs=frame(more, "more_", types + ["type_new"]), var=genes(n_var + extra),
               layers={"counts": y}).write_h5ad(f"{out}/more.h5ad")
    print(json.dumps({"dir": out, "cells": n_obs, "genes": n_var}))


def timed(side, task, data, target):
    """Runs one task in a fresh process: its wall seconds and peak RSS (MiB)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, side, task, data, target])
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{side} {task} failed (status {status})")
    return seconds, usage.ru_maxrss / 1024


def prepared(task, data, work, side):
    """The target of a task, made untimed: none for an ingestion, a copy of
    tiledbsoma's ingestion of base.h5ad otherwise."""
    target = os.path.join(work, f"{task}-{side}")
    shutil.rmtree(target, ignore_errors=True)
    if task != "ingest":
        shutil.copytree(os.path.join(work, "seed"), target)
    return target


def measure(data, work, rounds):
    """Each task, both sides alternating: median seconds, largest RSS."""
    seed = os.path.join(work, "seed")
    if not os.path.exists(seed):
        subprocess.run([sys.executable, "-c", RUNNER, "tiledbsoma", "ingest", data, seed], check=True)
    rows = []
    for task in ("ingest", "append", "layer"):
        got = {"tessera": [], "tiledbsoma": []}
        for r in range(rounds):
            for side in ("tessera", "tiledbsoma") if r % 2 == 0 else ("tiledbsoma", "tessera"):
                got[side].append(timed(side, task, data, prepared(task, data, work, side)))
        rows.append((task, {s: (sorted(t for t, _ in v)[len(v) // 2], max(m for _, m in v)) for s, v in got.items()}))
    return rows


NAMES = {
    "ingest": "from_h5ad (X and a counts layer)",
    "append": "append a fifth more cells (register_h5ads, prepare_experiment, from_h5ad)",
    "layer": "add_X_layer (a normalised layer from memory)",
}


def cells(data):
    """The cells of DIR/base.h5ad, as the table names them."""
    import h5py

    with h5py.File(os.path.join(data, "base.h5ad"), "r") as f:
        return f"{f['X'].attrs['shape'][0]:,}"


def main():
    if sys.argv[1] == "generate":
        args = sys.argv[4:]
        generate(sys.argv[2], int(sys.argv[3]), *(int(a) for a in args[:1]), *(float(a) for a in args[1:2]))
        return
    data, rounds, out = sys.argv[2], int(sys.argv[3]), sys.argv[-1]
    large = sys.argv[4] if len(sys.argv) > 5 else None
    work = os.path.join(os.path.dirname(os.path.normpath(data)), "work")
    os.makedirs(work, exist_ok=True)
    rows = []
    for task, r in measure(data, work, rounds):
        (ts, tm), (ls, lm) = r["tessera"], r["tiledbsoma"]
        rows.append([NAMES[task], cells(data), f"{ts:.2f}", f"{ls:.2f}", f"{ts / ls:.2f}", f"{tm:.0f}", f"{lm:.0f}",
                     f"{tm / lm:.2f}"])
    if large:
        sides = {}
        for side in ("tessera", "tiledbsoma"):
            target = prepared("ingest", large, work, f"large-{side}")
            sides[side] = timed(side, "ingest", large, target)
            shutil.rmtree(target, ignore_errors=True)
        (ts, tm), (ls, lm) = sides["tessera"], sides["tiledbsoma"]
        rows.append([NAMES["ingest"], cells(large), f"{ts:.2f}", f"{ls:.2f}", f"{ts / ls:.2f}", f"{tm:.0f}",
                     f"{lm:.0f}", f"{tm / lm:.2f}"])
    meta = json.dumps({"cpu": cpu(), "rounds": rounds})
    write_markdown(
        out,
        f"Single-cell writes (`cargo xtask bench-soma-ingest`, {rounds} rounds, medians; whole processes, "
        f"imports included; peak RSS of the process): tessera.soma.io against tiledbsoma.io "
        f"2.3.0 in the same run. <!-- {meta} -->",
        ["task", "cells", "tessera s", "tiledbsoma s", "ratio", "tessera MiB", "tiledbsoma MiB", "ratio"],
        rows,
    )


if __name__ == "__main__":
    main()
