"""A lean HTTP/1.1 keep-alive client, for the benchmarks that judge a server's throughput.

Throughput is what a server sustains while it is kept busy. With httpx, the client (one Python
process, sharing the machine's two cores with the server) spent ~300 µs of its own CPU on a
request, more than the server did, so the server idled between requests and woke for each one
alone. A server woken per request pays the wake-up (epoll, the loop's pass, the scheduler's
context switches) on every request: a bare uvicorn app cost ~200 µs of server CPU a GET driven
by httpx and ~45 µs kept busy by this client (2026-11-28). Those benchmarks measured the client
and the wake-ups more than the server.

This client costs ~30 µs a request: the request is framed by hand, the answer read by its
Content-Length (or its chunks), headers not decoded. One `Connection` is one keep-alive
connection, used by one coroutine at a time, reopened if the server closes it. It speaks only
what the benchmarks send; it is not a general client, and it has no timeouts (a timer per
request would cost what it saves): a server that stops answering stops the benchmark.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(slots=True)
class Response:
    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode(errors="replace")

    def json(self) -> Any:
        return jsonlib.loads(self.content)


class Connection:
    """One keep-alive connection to `base_url`; `headers` go with every request."""

    def __init__(self, base_url: str, *, verify: ssl.SSLContext | None = None,
                 headers: dict[str, str] | None = None) -> None:  # fmt: skip
        url = urlsplit(base_url)
        self._host = url.hostname or "127.0.0.1"
        self._port = url.port or (443 if url.scheme == "https" else 80)
        self._tls = verify or (ssl.create_default_context() if url.scheme == "https" else None)
        fixed = {"host": f"{self._host}:{self._port}", "accept": "application/json", **(headers or {})}
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode("latin-1")
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def get(self, path: str) -> Response:
        return await self.request("GET", path)

    async def post(self, path: str, *, json: Any) -> Response:
        return await self.request("POST", path, jsonlib.dumps(json).encode())

    async def request(self, method: str, path: str, body: bytes | None = None) -> Response:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self._host, self._port, ssl=self._tls)
        reader, writer = self._streams
        head = f"{method} {path} HTTP/1.1\r\n".encode("latin-1") + self._fixed
        if body is not None:
            head += b"content-type: application/json\r\ncontent-length: %d\r\n" % len(body)
        writer.write(head + b"\r\n" + (body or b""))
        answer = await reader.readuntil(b"\r\n\r\n")
        headers = answer.lower()
        response = Response(int(answer[9:12]), await _body(reader, headers))
        if b"\r\nconnection: close" in headers:
            await self.aclose()
        return response

    async def aclose(self) -> None:
        if self._streams is not None:
            writer = self._streams[1]
            self._streams = None
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, ssl.SSLError):
                pass


async def _body(reader: asyncio.StreamReader, head: bytes) -> bytes:
    at = head.find(b"\r\ncontent-length:")
    if at >= 0:
        return await reader.readexactly(int(head[at + 17 : head.index(b"\r\n", at + 2)]))
    if b"\r\ntransfer-encoding: chunked" not in head:
        return b""  # 204, 304: no body
    parts = []
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
    await reader.readuntil(b"\r\n")  # the end of the (empty) trailers
    return b"".join(parts)
