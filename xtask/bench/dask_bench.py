"""Beyond one process: tessera.dask and tessera.soma.io.from_h5ads on a
dask.distributed LocalCluster of two worker processes (one thread each),
against the same work in one process and against the peer where it has
the operation, in the same run, alternating.

    python dask_bench.py BENCH_DIR DATA_DIR CELLS ROUNDS OUT_MD

- Read: the sum of dense_f64_zstd's attribute (the bench's largest
  array): tessera in this process (`Array.read` of the attribute, then
  its sum), `tessera.dask.array(...).sum()` on the cluster, and TileDB-Py's
  `dask.array.from_tiledb(...).sum()` on the same cluster.
- Ingestion: CELLS cells by 2,000 genes (6 % non-zero, float32 counts)
  in four `.h5ad` files of a quarter each (generated once into DATA_DIR):
  `from_h5ads` on the cluster, `from_h5ads` in this process (client
  None: one file after another), and tiledbsoma 2.3.0's
  `from_h5ad` of the first then `register_h5ads`, `prepare_experiment`
  and `from_h5ad` of each other, in this process. Each result is checked:
  tiledbsoma reads the experiment's X with every cell.
Seconds from the call to its result; the cluster is started before, untimed.
"""
import os
import shutil
import statistics
import sys
import time

import numpy as np

bench, data, cells, rounds, out_md = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import common  # noqa: E402
from soma_ingest import generate  # noqa: E402

ARRAY = "dense_f64_zstd"


def parts():
    """The four .h5ad files (made once): a quarter of the cells each."""
    paths = [os.path.join(data, f"part{k}.h5ad") for k in range(4)]
    if all(os.path.exists(p) for p in paths):
        return paths
    import anndata

    generate(os.path.join(data, "whole"), cells)
    whole = anndata.read_h5ad(os.path.join(data, "whole", "base.h5ad"))
    for path, rows in zip(paths, np.array_split(np.arange(whole.n_obs), 4)):
        part = whole[rows].copy()
        del part.layers["counts"]
        part.write_h5ad(path)
    shutil.rmtree(os.path.join(data, "whole"))
    return paths


def read_sides(client, attr):
    import dask.array as da

    import tessera
    import tessera.dask

    uri = os.path.join(bench, ARRAY)

    def one_process():
        table = tessera.open(uri).read(attrs=[attr], dims=False)
        return float(np.sum(table.column(attr).to_numpy()))

    return {
        "tessera, one process": one_process,
        "tessera.dask, 2 workers": lambda: float(tessera.dask.array(uri, attr).sum().compute(scheduler=client)),
        "TileDB-Py from_tiledb, 2 workers": lambda: float(
            da.from_tiledb(uri, attribute=attr).sum().compute(scheduler=client)),
    }


def ingest_sides(client, paths, work):
    import tiledbsoma.io as sio

    import tessera.soma as tsoma

    def target(name):
        uri = os.path.join(work, name)
        shutil.rmtree(uri, ignore_errors=True)
        return uri

    def tiledbsoma_one_by_one():
        uri = target("tiledbsoma")
        sio.from_h5ad(uri, paths[0], "RNA")
        rd = sio.register_h5ads(uri, paths[1:], measurement_name="RNA", obs_field_name="obs_id",
                                var_field_name="var_id")
        rd.prepare_experiment(uri)
        for p in paths[1:]:
            sio.from_h5ad(uri, p, "RNA", registration_mapping=rd)
        return uri

    return {
        "tessera from_h5ads, 2 workers": lambda: (tsoma.io.from_h5ads(target("cluster"), paths, "RNA",
                                                                      client=client), os.path.join(work, "cluster"))[1],
        "tessera from_h5ads, one process": lambda: (tsoma.io.from_h5ads(target("one"), paths, "RNA"),
                                                    os.path.join(work, "one"))[1],
        "tiledbsoma register and append, one process": tiledbsoma_one_by_one,
    }


def nonzeros(uri):
    import tiledbsoma

    with tiledbsoma.open(uri) as exp:
        return exp.ms["RNA"].X["data"].nnz


def timed_rounds(sides, check):
    """Median seconds of each side over ROUNDS, alternating the order."""
    times = {name: [] for name in sides}
    order = list(sides)
    for r in range(rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            result = sides[name]()
            times[name].append(time.perf_counter() - t0)
            check(name, result)
    return {name: statistics.median(v) for name, v in times.items()}


def main():
    import distributed

    import tessera

    attr = tessera.open(os.path.join(bench, ARRAY)).schema.attrs[0].name
    paths = parts()
    work = os.path.join(data, "work")
    os.makedirs(work, exist_ok=True)
    want_nnz = None
    rows = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        sides = read_sides(client, attr)
        sums = {}

        def same_sum(name, value):
            sums.setdefault("first", value)
            if not np.isclose(value, sums["first"], rtol=1e-9):
                raise SystemExit(f"{name}: sum {value}, other sides {sums['first']}")

        medians = timed_rounds(sides, same_sum)
        base = medians["tessera, one process"]
        peer = medians["TileDB-Py from_tiledb, 2 workers"]
        for name, s in medians.items():
            rows.append((f"read: sum of {ARRAY}", name, f"{s:.3f}", f"{s / base:.2f}", f"{s / peer:.2f}"))

        def all_cells(name, uri):
            nonlocal want_nnz
            got = nonzeros(uri)
            want_nnz = want_nnz or got
            if got != want_nnz:
                raise SystemExit(f"{name}: {got} cells in X, other sides {want_nnz}")

        medians = timed_rounds(ingest_sides(client, paths, work), all_cells)
        base = medians["tessera from_h5ads, one process"]
        peer = medians["tiledbsoma register and append, one process"]
        for name, s in medians.items():
            rows.append((f"ingest: 4 files of {cells // 4:,} cells", name, f"{s:.3f}", f"{s / base:.2f}",
                         f"{s / peer:.2f}"))
    common.write_markdown(
        out_md,
        f"A `LocalCluster` of 2 worker processes of 1 thread; medians of "
        f"{rounds} rounds, sides alternating. Seconds from the call to its result (cluster started before). "
        f"\"× one process\": against tessera doing the same in this process; \"× peer\": against TileDB-Py's "
        f"`from_tiledb` on the same cluster (reads) or tiledbsoma appending the files one by one (ingestion). "
        f"X holds {want_nnz:,} cells.",
        ["work", "side", "seconds", "× one process", "× peer"],
        rows,
    )


if __name__ == "__main__":
    main()
