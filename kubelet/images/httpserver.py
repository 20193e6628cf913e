"""The HTTP server class our service images share.

http.server's own `server_bind` asks DNS for the listening address's full name
(`socket.getfqdn`); in a pod's network namespace with no route to a name server that waits for
the resolver's timeouts (about 10 s) before the first request can be served. This one skips it.

Servers listen on IPv6 and IPv4 at once (`[::]` with IPV6_V6ONLY off), as nginx's image does:
a pod's /etc/hosts names `localhost` ::1 as well as 127.0.0.1, and clients such as busybox's
wget try ::1 first.
"""

from __future__ import annotations

import signal
import socket
import socketserver
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Server(ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        self.server_name = socket.gethostname()
        self.server_port = self.server_address[1]


def reply(handler: BaseHTTPRequestHandler, body: bytes, status: int = 200, content_type: str = "text/html") -> None:
    """Send one complete response."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def dual_stack(cls: type[socketserver.TCPServer], port: int, handler: Any) -> socketserver.TCPServer:
    """`cls` listening on every IPv6 and IPv4 address of `port`; IPv4 only where IPv6 is off."""
    if socket.has_ipv6:

        class DualStack(cls):  # type: ignore[valid-type,misc]
            address_family = socket.AF_INET6

            def server_bind(self) -> None:
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                super().server_bind()

        try:
            return DualStack(("::", port), handler)  # type: ignore[no-any-return]
        except OSError:
            pass  # no IPv6 in this kernel or namespace
    return cls(("0.0.0.0", port), handler)


def serve(name: str, handler: type[BaseHTTPRequestHandler], port: int) -> int:
    """Serve until SIGTERM (exit 0, as a well-behaved container does)."""
    server = dual_stack(Server, port, handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"{name}: listening on port {port}", flush=True)
    try:
        server.serve_forever()
    except (SystemExit, KeyboardInterrupt):
        pass
    return 0
