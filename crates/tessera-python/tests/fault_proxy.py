"""A fault-injecting HTTP proxy in front of an object store's server
(moto, Azurite, fake-gcs-server): each request, with probability RATE
(seeded, so a run can be repeated), is answered 503 SlowDown or 500
InternalError without reaching the server, has its connection dropped
before any answer, or is forwarded and then: (a GET) its answer's body
cut halfway, the connection closed; (a PUT) its answer lost, the
connection closed once the server has done the write (the client cannot
tell whether the write landed: the case conditional puts must handle). Other requests go through unchanged. What
was injected is counted per request method and fault, and written as JSON
to REPORT after every request.

    python fault_proxy.py LISTEN_PORT UPSTREAM_PORT [--rate R] [--seed S] [--report FILE] [--only FAULT] [--keep-alive]

``--only`` injects one fault alone (503, 500, drop, cut or lost), into
the requests it applies to.

One request per connection upstream (``Connection: close``): answers are
relayed as they come, and the client reconnects for its next request;
with ``--keep-alive``, an answer whose length is known keeps the client's
connection for its next request, as a store's would (the benchmark of
retries puts this proxy behind a delaying one, where a new connection
costs a round trip).
"""

import argparse
import asyncio
import json
import logging
import os
import random

FAULTS = ("503", "500", "drop")
# Faults after the request was forwarded, by method.
FORWARDED = {"GET": "cut", "PUT": "lost"}
SLOW_DOWN = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
             b"<Message>Please reduce your request rate.</Message></Error>")
INTERNAL = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>InternalError</Code>"
            b"<Message>We encountered an internal error. Please try again.</Message></Error>")


class Proxy:
    def __init__(self, upstream, rate, seed, report, only=None, keep_alive=False):
        self.upstream, self.rate, self.report, self.only = upstream, rate, report, only
        self.keep_alive = keep_alive
        self.rng = random.Random(seed)
        self.counts = {}

    def _count(self, method, outcome):
        by_method = self.counts.setdefault(method, {})
        by_method[outcome] = by_method.get(outcome, 0) + 1
        if self.report:
            with open(self.report + ".tmp", "w") as f:
                json.dump(self.counts, f)
            os.replace(self.report + ".tmp", self.report)

    async def handle(self, reader, writer):
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                method, head, body = request
                fault = self._fault(method)
                self._count(method, fault or "passed")
                if fault in ("503", "500"):
                    status = b"503 Slow Down" if fault == "503" else b"500 Internal Server Error"
                    payload = SLOW_DOWN if fault == "503" else INTERNAL
                    writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/xml\r\n"
                                 b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)
                    await writer.drain()
                    continue
                if fault == "drop":
                    break
                if not await self._forward(method, head, body, writer, fault):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    def _fault(self, method):
        choices = FAULTS + ((FORWARDED[method],) if method in FORWARDED else ())
        if self.only:
            choices = tuple(f for f in choices if f == self.only)
        if not choices or self.rng.random() >= self.rate:
            return None
        return self.rng.choice(choices)

    async def _forward(self, method, head, body, writer, fault):
        """Forwards one request and relays (or spoils) its answer; whether
        the client's connection goes on to another request."""
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"connection:")]
        up_writer.write(b"\r\n".join(lines) + b"\r\nConnection: close\r\n\r\n" + body)
        await up_writer.drain()
        answer_head = await up_reader.readuntil(b"\r\n\r\n")
        if fault == "lost":
            # The server has answered, so the write is done: not relayed.
            up_writer.close()
            return False
        kept = [line for line in answer_head[:-4].split(b"\r\n") if not line.lower().startswith(b"connection:")]
        length = _content_length(answer_head)
        # No body follows a HEAD's answer, whatever its length says.
        length = 0 if method == "HEAD" else length
        if self.keep_alive and length is not None and fault != "cut":
            writer.write(b"\r\n".join(kept) + b"\r\n\r\n")
            remaining = length
            while remaining:
                data = await up_reader.read(min(remaining, 1 << 16))
                if not data:
                    raise ConnectionError("the server closed the connection mid-answer")
                remaining -= len(data)
                writer.write(data)
                await writer.drain()
            await writer.drain()
            up_writer.close()
            return True
        # The client is told the connection ends with this answer.
        writer.write(b"\r\n".join(kept) + b"\r\nConnection: close\r\n\r\n")
        if fault == "cut" and length:
            # Half the body, then the connection closed: a body cut short.
            writer.write(await up_reader.readexactly(length // 2))
            await writer.drain()
            up_writer.close()
            return False
        while True:
            data = await up_reader.read(1 << 16)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        up_writer.close()
        return False


def _content_length(head):
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1].strip())
    return None


async def _read_request(reader):
    """``(method, head without its blank line, body)``, or None at the end."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    head = head[:-4]
    method = head.split(b" ", 1)[0].decode()
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        headers[k.strip().lower()] = v.strip()
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = b""
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            body += size_line + chunk
            if size == 0:
                break
    else:
        body = await reader.readexactly(int(headers.get(b"content-length", b"0")))
    return method, head, body


async def serve(listen, upstream, rate, seed, report, only=None, ready=None, keep_alive=False):
    proxy = Proxy(upstream, rate, seed, report, only, keep_alive)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", listen, limit=1 << 20)
    if ready:
        ready()
    async with server:
        await server.serve_forever()


def main():
    # Connections the client drops mid-request leave tasks asyncio reports
    # at collection: expected here, not news.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser()
    parser.add_argument("listen", type=int)
    parser.add_argument("upstream", type=int)
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--report")
    parser.add_argument("--only", choices=FAULTS + tuple(FORWARDED.values()))
    parser.add_argument("--keep-alive", action="store_true")
    args = parser.parse_args()
    asyncio.run(serve(args.listen, args.upstream, args.rate, args.seed, args.report, args.only,
                      keep_alive=args.keep_alive))


if __name__ == "__main__":
    main()
