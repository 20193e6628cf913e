"""An idle keep-alive connection stays open as long as kube-apiserver keeps one (90 s), not 5 s."""

from __future__ import annotations

import socket
import time

from tests.support.apiserver import APIServerProcess
from tests.support.fixtures import apiserver  # noqa: F401  (one server, not one per backend: no storage here)

REQUEST = b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: idle-test\r\n\r\n"


def answer(conn: socket.socket) -> bytes:
    """One HTTP/1.1 response read off `conn` (b"" when the server has closed it)."""
    data = b""
    while b"\r\n\r\n" not in data:
        part = conn.recv(65536)
        if not part:
            return data
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    lengths = [line.split(b":", 1)[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    length = int(lengths[0])
    while len(body) < length:
        part = conn.recv(65536)
        if not part:
            break
        body += part
    return head + b"\r\n\r\n" + body


def test_a_connection_idle_longer_than_uvicorns_default_still_serves(
    apiserver: APIServerProcess,  # noqa: F811
) -> None:
    with socket.create_connection(("127.0.0.1", apiserver.port), timeout=10) as conn:
        conn.sendall(REQUEST)
        assert answer(conn).startswith(b"HTTP/1.1 200")
        # Idle past uvicorn's default keep-alive (5 s), which would close the connection here. This
        # sleep is the test: what is measured is that nothing happens for longer than that.
        time.sleep(6)
        conn.sendall(REQUEST)
        again = answer(conn)
        assert again.startswith(b"HTTP/1.1 200"), again[:200]
