"""api/websocket_compat.py: kubectl's port-forward subprotocol `SPDY/3.1+portforward.k8s.io` (a "/",
not an RFC 7230 token) through a real WebSocket handshake, uvicorn's server and websockets' client,
and the import-time check that the method both replace still exists."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import pytest
import uvicorn
import websockets

from api.spdy_session import TUNNEL_PROTOCOL
from api.websocket_compat import IncompatibleWebsockets, check_hooks, lenient_client, lenient_server_protocol


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Accepts the first subprotocol offered, then echoes binary messages."""
    assert scope["type"] == "websocket"
    assert (await receive())["type"] == "websocket.connect"
    offered = scope.get("subprotocols") or []
    await send({"type": "websocket.accept", "subprotocol": offered[0] if offered else None})
    while (message := await receive())["type"] == "websocket.receive":
        await send({"type": "websocket.send", "bytes": message.get("bytes") or b""})


@contextlib.asynccontextmanager
async def _server(ws: Any) -> Any:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)  # listening before uvicorn serves it: a client can connect at once
    config = uvicorn.Config(_app, ws=ws, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"ws://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()


async def test_the_spdy_subprotocol_is_negotiated_by_both_lenient_ends() -> None:
    async with _server(lenient_server_protocol()) as url:
        headers, connection = lenient_client([TUNNEL_PROTOCOL])
        async with websockets.connect(url, additional_headers=headers, create_connection=connection,
                                      proxy=None, open_timeout=10) as conn:  # fmt: skip
            assert conn.subprotocol == TUNNEL_PROTOCOL
            await conn.send(b"\x80\x03\x00\x06")
            assert await asyncio.wait_for(conn.recv(), 10) == b"\x80\x03\x00\x06"


async def test_without_the_lenient_server_the_subprotocol_is_refused() -> None:
    """What the helpers are for: websockets' own parsing rejects the "/" (so a test of them that
    passes proves they are in effect)."""
    async with _server("websockets-sansio") as url:
        headers, connection = lenient_client([TUNNEL_PROTOCOL])
        with pytest.raises(websockets.InvalidStatus):
            await websockets.connect(url, additional_headers=headers, create_connection=connection,
                                     proxy=None, open_timeout=10)  # fmt: skip


def test_a_websockets_without_the_hook_fails_loudly() -> None:
    class Renamed:
        def process_subprotocols(self, headers: Any) -> None: ...

    class OtherSignature:
        def process_subprotocol(self, request: Any, headers: Any) -> None: ...

    class NotCalled:
        def process_subprotocol(self, headers: Any) -> None: ...

        def accept(self, headers: Any) -> None:
            self.select_subprotocol(headers)

        def select_subprotocol(self, headers: Any) -> None: ...

    for cls, why in ((Renamed, "has no method process_subprotocol"), (OtherSignature, "does not take one argument"),
                     (NotCalled, "no longer calls self.process_subprotocol")):  # fmt: skip
        with pytest.raises(IncompatibleWebsockets, match=why):
            check_hooks(cls)
    from websockets.client import ClientProtocol
    from websockets.server import ServerProtocol

    check_hooks(ServerProtocol, ClientProtocol)  # the installed release: fine (it ran at import too)
