"""Experiments on Azure Blob Storage: Azurite, Azure's storage emulator
(npm ``azurite``; the path of its ``azurite-blob`` in TESSERA_AZURITE,
which .ci/run sets), on a free loopback port. tessera.soma.io ingests
straight to ``azure://`` with the storage keys of a SOMATileDBContext,
and tiledbsoma (libtiledb's Azure client) reads what it wrote and appends
to it."""

import os
import shutil
import socket
import subprocess
import time

import pytest

from conftest import emulator, same_anndata

ACCOUNT = "devstoreaccount1"
# Azurite's one account and its published key.
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CONTAINER = "tessera"


@pytest.fixture(scope="module")
def azurite(tmp_path_factory):
    """Azurite's blob endpoint, with the container made."""
    program, port = emulator("TESSERA_AZURITE", "Azure (azurite-blob)")
    data = tmp_path_factory.mktemp("azurite")
    proc = subprocess.Popen([program, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--silent",
                             "--skipApiVersionCheck", "--location", str(data)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}/{ACCOUNT}"
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("azurite-blob did not start")
        import tiledb

        tiledb.VFS(config=libtiledb_config(endpoint)).create_bucket(f"azure://{CONTAINER}")
        yield endpoint
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)


def libtiledb_config(endpoint):
    """libtiledb's keys for the emulator: what a SOMATileDBContext carries."""
    return {"vfs.azure.storage_account_name": ACCOUNT, "vfs.azure.storage_account_key": ACCOUNT_KEY,
            "vfs.azure.blob_endpoint": endpoint}


def test_soma_ingestion_through_azure(azurite, tmp_path, monkeypatch):
    """from_h5ad to ``azure://`` with only the context's keys (none in the
    environment); tiledbsoma reads it as its own local ingestion of the
    same file, appends a second file to it, and tessera.soma reads the
    result as tiledbsoma does."""
    import tessera.soma as tsoma
    import tiledbsoma
    import tiledbsoma.io
    from test_soma_ingest import append_with_tiledbsoma, store_parts

    for name in list(os.environ):
        if name.startswith("AZURE_") or name.startswith("AZURITE_"):
            monkeypatch.delenv(name)
    path, second = store_parts(tmp_path, "az_", 60)
    uri = f"azure://{CONTAINER}/ingested"
    config = libtiledb_config(azurite)
    ours = tsoma.SOMATileDBContext(tiledb_config=config)
    tsoma.io.from_h5ad(uri, path, "RNA", context=ours)
    with pytest.raises(tsoma.SOMAError, match="already exists"):
        tsoma.io.from_h5ad(uri, path, "RNA", context=ours)
    local = str(tmp_path / "local")
    tiledbsoma.io.from_h5ad(local, str(path), "RNA")
    theirs = tiledbsoma.SOMATileDBContext(tiledb_config=config)
    with tiledbsoma.open(uri, context=theirs) as a, tiledbsoma.open(local) as b:
        same_anndata(tiledbsoma.io.to_anndata(a, "RNA"), tiledbsoma.io.to_anndata(b, "RNA"))
    append_with_tiledbsoma((uri, local), second, theirs)
    # tessera registers and appends a third part on Azure, tiledbsoma the
    # same part locally.
    third = store_parts(tmp_path, "az3_", 62)[1]
    kwargs = dict(measurement_name="RNA", obs_field_name="obs_id", var_field_name="gene_ids",
                  append_obsm_varm=True)
    rd = tsoma.io.register_anndatas(uri, [third.copy()], context=ours, **kwargs)
    rd.prepare_experiment(uri, context=ours)
    tsoma.io.from_anndata(uri, third.copy(), "RNA", registration_mapping=rd, context=ours)
    append_with_tiledbsoma((local,), third, None)
    with tiledbsoma.open(uri, context=theirs) as a, tiledbsoma.open(local) as b:
        same_anndata(tiledbsoma.io.to_anndata(a, "RNA"), tiledbsoma.io.to_anndata(b, "RNA"))
    with tsoma.open(uri, context=ours) as a, tiledbsoma.open(local) as b:
        same_anndata(tsoma.io.to_anndata(a, "RNA"), tiledbsoma.io.to_anndata(b, "RNA"))


def test_soma_through_azure_faults(azurite, tmp_path, monkeypatch):
    """Ingestion, then the experiment consolidated and vacuumed array by
    array, on Azurite through the fault proxy (5 % of requests 503, 500,
    dropped, bodies cut, answers lost); tiledbsoma reads it straight from
    Azurite as its own local ingestion of the same file."""
    import urllib.parse

    import tessera.soma as tsoma
    import tiledbsoma
    import tiledbsoma.io
    from conftest import faults_survived, faulty, maintain_tree
    from tessera._storage_keys import storage_options
    from test_soma_ingest import store_parts

    for name in list(os.environ):
        if name.startswith("AZURE_") or name.startswith("AZURITE_"):
            monkeypatch.delenv(name)
    path, _ = store_parts(tmp_path, "azf_", 64)
    uri = f"azure://{CONTAINER}/faulty"
    report = tmp_path / "faults.json"
    with faulty(urllib.parse.urlparse(azurite).port, report, 0.05, seed=4) as proxy:
        config = libtiledb_config(f"{proxy}/{ACCOUNT}")
        tsoma.io.from_h5ad(uri, path, "RNA", context=tsoma.SOMATileDBContext(tiledb_config=config))
        maintain_tree(uri, storage_options(config))
    faults_survived(report, "on Azure")
    local = str(tmp_path / "local")
    tiledbsoma.io.from_h5ad(local, str(path), "RNA")
    theirs = tiledbsoma.SOMATileDBContext(tiledb_config=libtiledb_config(azurite))
    with tiledbsoma.open(uri, context=theirs) as a, tiledbsoma.open(local) as b:
        same_anndata(tiledbsoma.io.to_anndata(a, "RNA"), tiledbsoma.io.to_anndata(b, "RNA"))
