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

Both replace the `process_subprotocol(headers)` method of websockets' sans-I/O ServerProtocol
and ClientProtocol on the connection's instance. That is not public API: `check_hooks()` runs at
import and fails loudly if a websockets release renamed it or stopped calling it, rather than
letting the subprotocol be refused again with no clear cause.
"""

from __future__ import annotations

import inspect
from typing import Any

HOOK = "process_subprotocol"


class IncompatibleWebsockets(ImportError):
    """The installed websockets no longer has the method these helpers replace."""


def check_hooks(*classes: type) -> None:
    """Each class must have HOOK, a method taking the headers, that its handshake calls."""
    for cls in classes:
        where = f"{cls.__module__}.{cls.__qualname__}"
        method = getattr(cls, HOOK, None)
        problem = ""
        if not callable(method):
            problem = f"it has no method {HOOK}()"
        else:
            try:
                inspect.signature(method).bind(object(), object())  # (self, headers)
            except TypeError:
                problem = f"its {HOOK}() does not take one argument (the headers)"
            except ValueError:
                pass  # no signature to inspect (a builtin): nothing more to check
        if not problem and not _calls(cls, HOOK):
            problem = f"its handshake no longer calls self.{HOOK}()"
        if problem:
            raise IncompatibleWebsockets(
                f"api/websocket_compat.py: {where} is not what it expects: {problem}. Port-forward's "
                "subprotocol 'SPDY/3.1+portforward.k8s.io' would be refused; adapt websocket_compat.py "
                "to this websockets release (websockets 17.4 works)."
            )


def _calls(cls: type, name: str) -> bool:
    """Does a method of `cls` (or of a base class) use the attribute `name`? Read from the names
    its compiled code refers to: every process imports this module, and reading and parsing the
    classes' source (inspect.getsource) cost a tenth of a second of each one's start."""
    for klass in cls.__mro__:
        for member in vars(klass).values():
            code = getattr(member, "__code__", None)
            if code is not None and name in code.co_names:
                return True
    return False


def _check_installed() -> None:
    from websockets.client import ClientProtocol
    from websockets.server import ServerProtocol

    check_hooks(ServerProtocol, ClientProtocol)


_check_installed()


def lenient_server_protocol() -> type:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    class LenientWebSocketsProtocol(WebSocketsSansIOProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # uvicorn adds the header the application accepts with itself; nothing to select here
            setattr(self.conn, HOOK, lambda headers: None)

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
            setattr(protocol, HOOK, process_subprotocol)
            super().__init__(protocol, *args, **kwargs)

    return {"Sec-WebSocket-Protocol": ", ".join(offered)} if offered else {}, LenientClientConnection
