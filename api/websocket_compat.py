"""WebSocket subprotocols with a "/" in their name, on both ends of the `websockets` library.

kubectl 1.32's port-forward offers the subprotocol `SPDY/3.1+portforward.k8s.io`. "/" is not a
token character of RFC 7230, so `websockets` (under uvicorn, and as a client) refuses the header
("invalid Sec-WebSocket-Protocol header"), while Go's websocket libraries, which Kubernetes uses,
just split it on commas. These helpers make ours do the same:

  - `lenient_server_protocol()`: a uvicorn WebSocket protocol class (uvicorn.Config(ws=...))
    whose handshake does not parse the header; the offered names still reach the application
    (uvicorn splits them on commas into scope["subprotocols"]) and it still chooses one;
  - `lenient_client(offered)`: the request header and a `create_connection` class for
    websockets.connect(...) that accepts whichever of `offered` the server chose.
"""

from __future__ import annotations

from typing import Any


def lenient_server_protocol() -> type:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    class LenientWebSocketsProtocol(WebSocketsSansIOProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # uvicorn adds the header the application accepts with itself; nothing to select here
            self.conn.process_subprotocol = lambda headers: None  # type: ignore[method-assign]

    return LenientWebSocketsProtocol


def lenient_client(offered: list[str]) -> tuple[dict[str, str], type]:
    """(headers to add, create_connection) for websockets.connect, with subprotocols=None."""
    from websockets.asyncio.client import ClientConnection
    from websockets.exceptions import NegotiationError

    def process_subprotocol(headers: Any) -> str | None:
        values = [v.strip() for header in headers.get_all("Sec-WebSocket-Protocol") for v in header.split(",")]
        if not values:
            return None
        if len(values) > 1 or values[0] not in offered:
            raise NegotiationError(f"unsupported subprotocol: {', '.join(values)}")
        return values[0]

    class LenientClientConnection(ClientConnection):
        def __init__(self, protocol: Any, *args: Any, **kwargs: Any) -> None:
            protocol.process_subprotocol = process_subprotocol
            super().__init__(protocol, *args, **kwargs)

    return {"Sec-WebSocket-Protocol": ", ".join(offered)} if offered else {}, LenientClientConnection
