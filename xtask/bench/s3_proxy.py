"""A delaying, counting HTTP proxy in front of an S3 server (moto), for
the object store benchmark: every request waits DELAY_MS before it is
forwarded, as a request to a distant store would, and is counted. Both
readers (tessera and libtiledb) go through it.

    python s3_proxy.py LISTEN_PORT UPSTREAM_PORT DELAY_MS

GET /__proxy/stats returns {"requests": N, "by_method": {...}, "bytes_up":
B, "bytes_down": B} (request and answer bodies) and resets the counts. With PROXY_LOG set, each request's method, path and range are
appended to that file (to see what a reader asks).
"""
import http.client
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

listen, upstream, delay_ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
lock = threading.Lock()
counts = {}
moved = {"bytes_up": 0, "bytes_down": 0}
local = threading.local()


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def forward(self):
        if self.path == "/__proxy/stats":
            with lock:
                body = json.dumps({"requests": sum(counts.values()), "by_method": dict(counts), **moved}).encode()
                counts.clear()
                moved.update(bytes_up=0, bytes_down=0)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        with lock:
            counts[self.command] = counts.get(self.command, 0) + 1
            if os.environ.get("PROXY_LOG"):
                with open(os.environ["PROXY_LOG"], "a") as log:
                    log.write(f"{self.command} {self.path} {self.headers.get('Range', '')}\n")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body, length = self.chunked()
        else:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
        time.sleep(delay_ms / 1000)
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPConnection("127.0.0.1", upstream)
        headers = {k: v for k, v in self.headers.items()}
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            r = conn.getresponse()
        except (http.client.HTTPException, OSError):
            local.conn = conn = http.client.HTTPConnection("127.0.0.1", upstream)
            conn.request(self.command, self.path, body=body, headers=headers)
            r = conn.getresponse()
        data = r.read()
        with lock:
            moved["bytes_up"] += length
            moved["bytes_down"] += len(data)
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        # A HEAD answer has no body but the object's length.
        length = r.getheader("Content-Length") if self.command == "HEAD" else None
        self.send_header("Content-Length", length or str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def chunked(self):
        """A chunked body as sent (chunks and trailers, forwarded
        verbatim: aws-chunked bodies end in a checksum trailer) and the
        length of its data."""
        raw, length = bytearray(), 0
        while True:
            line = self.rfile.readline()
            raw += line
            size = int(line.split(b";")[0], 16)
            if size == 0:
                while True:
                    trailer = self.rfile.readline()
                    raw += trailer
                    if trailer in (b"\r\n", b"\n", b""):
                        return bytes(raw), length
            raw += self.rfile.read(size + 2)
            length += size

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", listen), Proxy).serve_forever()
