"""HTTP/1.1 keep-alive connections for RESTClient's short requests: get, list, create, update...

Why not httpx for these? Measured on a 2-core machine (`bench/client.py`): an httpx request costs
the *client* 1.3-2 ms of CPU, more than the API server spends answering it, and its connection pool
rescans every connection for every queued request. A kubelet writing pod statuses for 100 nodes, or
a controller creating 1,000 pods, spent most of its CPU there. The API server speaks plain
HTTP/1.1, so the part a component needs fits in this file:

    GET /api/v1/namespaces/default/pods/web HTTP/1.1      <- request line
    Host: 127.0.0.1:8080                                  <- headers
    Content-Length: 123                                   <- when there is a body
                                                          <- empty line, then the body
    HTTP/1.1 200 OK                                       <- status line
    Content-Type: application/json                        <- headers; the body's size comes from
    Content-Length: 456                                      Content-Length, or from chunks
                                                             (Transfer-Encoding: chunked)

A connection is kept open after a complete response (keep-alive) and reused by the next request;
at most `max_connections` requests are in flight, the rest wait on a semaphore. A reused connection
may have been closed by the server while it sat idle (the API server closes one idle for 90 s, as
kube-apiserver does; a restart closes them all): if such a connection fails before a single byte
of the answer arrived, the request is sent once more on a new connection, as Go's net/http does —
the server never saw it.

Long responses (watches, `logs -f`) still go through httpx (RESTClient.raw_stream): each is one
request lasting minutes, so what a request costs does not matter there.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from api import wirejson


class ProtocolError(ConnectionError):
    """The server's answer was not HTTP/1.1 as we know it (or it hung up in the middle)."""


@dataclass
class Response:
    status_code: int
    reason_phrase: str
    headers: dict[str, str] = field(default_factory=dict)  # names lower-cased
    content: bytes = b""

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return wirejson.loads(self.content)


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def usable(self) -> bool:
        """False once the server hung up (the event loop saw EOF) or we closed it."""
        return not self.reader.at_eof() and not self.writer.is_closing()

    def close(self) -> None:
        self.writer.close()


class ConnectionPool:
    """Keep-alive HTTP/1.1 connections to one server (`http://host:port` or `https://...`)."""

    def __init__(
        self,
        base_url: str,
        *,
        max_connections: int = 8,
        timeout: float = 30.0,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.ssl: ssl.SSLContext | None = None
        if parts.scheme == "https":
            self.ssl = ssl_context or ssl.create_default_context()
        self.prefix = parts.path.rstrip("/")  # a server under a path: http://host/k8s
        self.timeout = timeout
        self._common = {k.lower(): v for k, v in {"Host": parts.netloc, **(headers or {})}.items()}
        self.max_connections = max_connections
        self._idle: deque[_Connection] = deque()
        self._slots = asyncio.Semaphore(max_connections)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def set_header(self, name: str, value: str) -> None:
        """Change a header every later request carries (a renewed bearer token)."""
        self._common[name.lower()] = value

    async def request(
        self, method: str, target: str, *, headers: Mapping[str, str] | None = None, body: bytes | None = None
    ) -> Response:
        """Send one request (target = path plus query string) and read the whole answer.
        Raises OSError (ConnectionRefusedError, ...), TimeoutError or ProtocolError."""
        fields = self._common | {k.lower(): v for k, v in (headers or {}).items()}  # ours override the defaults
        if body is not None:
            fields["content-length"] = str(len(body))
        lines = "".join(f"{k}: {v}\r\n" for k, v in fields.items())
        head = f"{method} {self.prefix}{target} HTTP/1.1\r\n{lines}\r\n".encode("latin-1")
        self._bind_to_running_loop()
        async with self._slots:
            async with asyncio.timeout(self.timeout):
                conn = self._reuse()
                if conn is not None:
                    try:
                        return await self._exchange(conn, method, head, body)
                    except _NothingReceived:
                        pass  # the server closed it while idle: it never saw this request
                return await self._exchange(await self._connect(), method, head, body)

    async def aclose(self) -> None:
        self._closed = True
        while self._idle:
            self._idle.pop().close()

    def _bind_to_running_loop(self) -> None:
        """Connections and the semaphore belong to one event loop. A client used again under a new
        loop (a second `asyncio.run`) starts over instead of touching the old loop's sockets."""
        loop = asyncio.get_running_loop()
        if loop is self._loop:
            return
        if self._loop is not None:
            for conn in self._idle:
                with contextlib.suppress(Exception):
                    conn.close()
            self._idle.clear()
            self._slots = asyncio.Semaphore(self.max_connections)
        self._loop = loop

    # ------------------------------------------------------------------ one exchange

    def _reuse(self) -> _Connection | None:
        while self._idle:
            conn = self._idle.pop()  # newest first: the least likely to have timed out
            if conn.usable():
                return conn
            conn.close()
        return None

    async def _connect(self) -> _Connection:
        reader, writer = await asyncio.open_connection(self.host, self.port, ssl=self.ssl, limit=1 << 20)
        return _Connection(reader, writer)

    async def _exchange(self, conn: _Connection, method: str, head: bytes, body: bytes | None) -> Response:
        received = False
        try:
            conn.writer.write(head + body if body else head)
            await conn.writer.drain()
            status_line = await conn.reader.readline()
            if not status_line:
                raise _NothingReceived("the server closed the connection")
            received = True
            resp, keep_alive = await self._read_response(conn.reader, method, status_line)
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            conn.close()
            if not received and not isinstance(exc, _NothingReceived):
                raise _NothingReceived(str(exc)) from exc
            if isinstance(exc, OSError):
                raise
            raise ProtocolError(f"malformed response: {exc}") from exc
        except BaseException:  # cancelled or timed out mid-exchange: the connection is in an unknown state
            conn.close()
            raise
        if keep_alive and not self._closed:
            self._idle.append(conn)
        else:
            conn.close()
        return resp

    @staticmethod
    async def _read_response(
        reader: asyncio.StreamReader, method: str, status_line: bytes
    ) -> tuple[Response, bool]:
        version, code, *reason = status_line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        if not version.startswith("HTTP/1."):
            raise ProtocolError(f"not an HTTP/1.x status line: {status_line[:60]!r}")
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise asyncio.IncompleteReadError(b"", None)
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        status = int(code)
        keep_alive = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            content = b""
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            content = await _read_chunked(reader)
        elif "content-length" in headers:
            content = await reader.readexactly(int(headers["content-length"]))
        else:  # the body runs until the server closes the connection
            content, keep_alive = await reader.read(), False
        return Response(status, reason[0] if reason else "", headers, content), keep_alive


class _NothingReceived(ConnectionError):
    """The connection failed before any byte of the answer: safe to send the request again."""


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readline()).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # trailers: none that we use
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)  # the CRLF after each chunk
