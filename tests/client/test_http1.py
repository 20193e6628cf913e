"""client/http1.py against real sockets: keep-alive, the in-flight bound, bodies by length and by
chunks, and what happens when a server hangs up or goes quiet.

The server here is a small real HTTP/1.1 server on 127.0.0.1 whose behaviour each path picks, so
we can make it do the rude things uvicorn does only sometimes (close an idle connection, stall).
The REST client's suites run the same pool against the real mini-apiserver.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from client.http1 import ConnectionPool, ProtocolError


@dataclass
class Server:
    port: int = 0
    connections: int = 0
    requests: list[tuple[str, bytes]] = field(default_factory=list)  # (request line, body)
    in_flight: int = 0
    most_in_flight: int = 0
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                headers = {}
                while (h := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = h.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append((line.decode().strip(), body))
                path = line.split()[1].decode()
                if not await self.answer(path, headers, body, writer):
                    return
                if path == "/linger":  # hang up the moment the next request starts, unanswered
                    await reader.readline()
                    return
        finally:
            writer.close()

    async def answer(self, path: str, headers: dict[str, str], body: bytes, w: asyncio.StreamWriter) -> bool:
        """Write the response `path` asks for; False closes the connection afterwards."""
        if path.startswith("/slow"):
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            await self.release.wait()
            self.in_flight -= 1
        if path == "/stall":
            await asyncio.sleep(3600)
        if path == "/half":
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
            return False
        if path == "/chunked":
            w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n")
            return True
        echo = f"{headers.get('accept', '')}|{body.decode()}".encode()
        close = path == "/close"
        w.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n%s"
                % (len(echo), b"Connection: close\r\n" if close else b"", echo))  # fmt: skip
        await w.drain()
        return not close and path != "/hangup-after"  # hangup-after: answer, then close while idle


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    s = Server()
    srv = await asyncio.start_server(s.handle, "127.0.0.1", 0)
    s.port = srv.sockets[0].getsockname()[1]
    try:
        yield s
    finally:
        s.release.set()
        srv.close()


def pool(server: Server, **kw: float) -> ConnectionPool:
    return ConnectionPool(f"http://127.0.0.1:{server.port}", headers={"Accept": "application/json"}, **kw)


async def test_sequential_requests_share_one_kept_alive_connection(server: Server) -> None:
    p = pool(server)
    for i in range(20):
        resp = await p.request("POST", "/echo", body=f"n{i}".encode())
        assert (resp.status_code, resp.text) == (200, f"application/json|n{i}")
    assert server.connections == 1
    await p.aclose()


async def test_per_request_headers_override_the_defaults(server: Server) -> None:
    p = pool(server)
    resp = await p.request("GET", "/echo", headers={"accept": "application/json;as=Table"})
    assert resp.text == "application/json;as=Table|"
    assert resp.headers["content-type"] == "text/plain"
    await p.aclose()


async def test_no_more_than_max_connections_requests_are_in_flight(server: Server) -> None:
    p = pool(server, max_connections=3)
    calls = [asyncio.create_task(p.request("GET", f"/slow/{i}")) for i in range(12)]
    while server.in_flight < 3:
        await asyncio.sleep(0.01)  # polling the server's own counter, not waiting out a guess
    server.release.set()
    await asyncio.gather(*calls)
    assert server.most_in_flight == 3 and server.connections == 3 and len(server.requests) == 12
    await p.aclose()


async def test_chunked_bodies_are_joined(server: Server) -> None:
    p = pool(server)
    assert (await p.request("GET", "/chunked")).content == b"hello world"
    assert (await p.request("GET", "/echo")).status_code == 200  # the connection is still in step
    assert server.connections == 1
    await p.aclose()


async def test_connection_close_is_honoured(server: Server) -> None:
    p = pool(server)
    await p.request("GET", "/close")
    await p.request("GET", "/echo")
    assert server.connections == 2
    await p.aclose()


async def test_an_idle_connection_the_server_closed_is_replaced_without_resending(server: Server) -> None:
    p = pool(server)
    await p.request("GET", "/hangup-after")
    resp = await p.request("POST", "/echo", body=b"once")  # the kept connection is dead by now
    assert resp.text == "application/json|once"
    assert [r for r in server.requests if r[1] == b"once"] == [("POST /echo HTTP/1.1", b"once")]
    assert server.connections == 2
    await p.aclose()


async def test_a_request_racing_the_servers_hangup_is_sent_again_on_a_new_connection(server: Server) -> None:
    p = pool(server)
    await p.request("GET", "/linger")
    resp = await p.request("POST", "/echo", body=b"again")  # sent on the kept connection, which dies
    assert resp.text == "application/json|again"
    assert server.connections == 2
    await p.aclose()


async def test_an_answer_cut_short_is_an_error_and_is_not_retried(server: Server) -> None:
    p = pool(server)
    with pytest.raises(ProtocolError):
        await p.request("POST", "/half", body=b"x")
    assert len(server.requests) == 1
    assert (await p.request("GET", "/echo")).status_code == 200  # the broken connection was dropped
    await p.aclose()


async def test_a_silent_server_times_out(server: Server) -> None:
    p = pool(server, timeout=0.3)
    with pytest.raises(TimeoutError):
        await p.request("GET", "/stall")
    assert (await p.request("GET", "/echo")).status_code == 200
    await p.aclose()


async def test_nobody_listening_is_connection_refused(server: Server) -> None:
    p = ConnectionPool("http://127.0.0.1:1")
    with pytest.raises(ConnectionRefusedError):
        await p.request("GET", "/")


def test_a_pool_used_again_under_a_new_event_loop_starts_over() -> None:
    """A command-line tool may call asyncio.run twice with one client: the second loop must not
    reuse the first loop's sockets."""

    async def serve_and_ask(p: ConnectionPool | None) -> tuple[ConnectionPool, int]:
        s = Server()
        srv = await asyncio.start_server(s.handle, "127.0.0.1", 0)
        port = srv.sockets[0].getsockname()[1]
        pool_ = p or ConnectionPool(f"http://127.0.0.1:{port}")
        pool_.port = port  # the second server listens elsewhere; same pool object
        codes = [(await pool_.request("GET", "/echo")).status_code for _ in range(3)]
        srv.close()
        return pool_, sum(codes)

    p, total = asyncio.run(serve_and_ask(None))
    assert total == 600
    _, total = asyncio.run(serve_and_ask(p))
    assert total == 600
