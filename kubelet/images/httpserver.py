"""The HTTP server class our service images share.

http.server's own `server_bind` asks DNS for the listening address's full name
(`socket.getfqdn`); in a pod's network namespace with no route to a name server that waits for
the resolver's timeouts (about 10 s) before the first request can be served. This one skips it.
"""

from __future__ import annotations

import socket
import socketserver
from http.server import ThreadingHTTPServer


class Server(ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        self.server_name = socket.gethostname()
        self.server_port = self.server_address[1]
