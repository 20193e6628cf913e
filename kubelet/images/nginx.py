"""The `nginx` image of the catalog: an HTTP server with nginx's welcome page.

    GET /            the "Welcome to nginx!" page, plus the pod's hostname (so a Service's load
                     balancing is visible: each pod answers with its own name)
    GET /healthz     "ok"  (anything else: 404 in nginx's words)

It listens on port 80 like nginx; NGINX_PORT changes that (pods share the host's network in
this runtime, see docs/images.md). Access lines go to stdout in nginx's combined format, so
`kubectl logs` shows requests. SIGTERM stops it (exit 0), as nginx's fast shutdown does.
"""

from __future__ import annotations

import os
import socket
import sys
from datetime import datetime
from http.server import BaseHTTPRequestHandler

from kubelet.images.httpserver import serve

WELCOME = """<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>
<p>Served by pod <b>{host}</b> (mini-k8s process runtime).</p>
<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""


class Handler(BaseHTTPRequestHandler):
    server_version = "nginx/1.25.3"

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path in ("/", "/index.html"):
            self._send(200, "text/html", WELCOME.format(host=socket.gethostname()))
        elif self.path == "/healthz":
            self._send(200, "text/plain", "ok\n")
        else:
            self._send(404, "text/html", "<html><head><title>404 Not Found</title></head><body>"
                                         "<center><h1>404 Not Found</h1></center></body></html>\n")  # fmt: skip

    def do_HEAD(self) -> None:  # noqa: N802
        self.do_GET()

    def _send(self, code: int, kind: str, body: str) -> None:
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        when = datetime.now().astimezone().strftime("%d/%b/%Y:%H:%M:%S %z")
        agent = self.headers.get("User-Agent", "-")
        print(f'{self.client_address[0]} - - [{when}] "{self.requestline}" {code} {size} "-" "{agent}"', flush=True)


def main() -> int:
    return serve("nginx", Handler, int(os.environ.get("NGINX_PORT") or 80))


if __name__ == "__main__":
    sys.exit(main())
