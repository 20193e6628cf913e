"""The `kubeguide/tomcat-app` image of the catalog: the seed's web tier, as a placeholder.

The book's app is a JSP page on Tomcat that reads MYSQL_SERVICE_HOST / MYSQL_SERVICE_PORT and
talks to MySQL through the Service. This serves, on 8080 (PORT changes it), a page that names the
pod, shows those two variables, and says whether a TCP connection to them succeeds (and whether
what answers greets like MySQL) - what a student checks to see the Service wiring work.
"""

from __future__ import annotations

import os
import socket
import sys
from http.server import BaseHTTPRequestHandler

from kubelet.images.httpserver import reply, serve


def mysql_check(host: str, port: int) -> str:
    try:
        with socket.create_connection((host, port), timeout=2) as conn:
            conn.settimeout(2)
            head = conn.recv(64)
    except OSError as exc:
        return f"cannot reach MySQL at {host}:{port}: {exc}"
    if len(head) > 5 and head[4] == 10:
        version = head[5:].split(b"\x00", 1)[0].decode(errors="replace")
        return f"MySQL reachable at {host}:{port} (server version {version})"
    return f"something answers at {host}:{port}, but it does not greet like MySQL"


class Handler(BaseHTTPRequestHandler):
    server_version = "Apache-Coyote/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        host = os.environ.get("MYSQL_SERVICE_HOST", "")
        port = os.environ.get("MYSQL_SERVICE_PORT", "3306")
        status = mysql_check(host, int(port)) if host else "MYSQL_SERVICE_HOST is not set"
        body = (
            "<html><head><title>HPE University Docker&amp;Kubernetes Learning</title></head><body>\n"
            f"<h2>Congratulations!!</h2>\n<p>Served by pod {socket.gethostname()}</p>\n"
            f"<p>MYSQL_SERVICE_HOST={host} MYSQL_SERVICE_PORT={port}</p>\n<p>{status}</p>\n</body></html>\n"
        ).encode()
        reply(self, body)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        print(f'{self.client_address[0]} "{self.requestline}" {code}', flush=True)


def main() -> int:
    return serve("tomcat-app", Handler, int(os.environ.get("PORT") or 8080))


if __name__ == "__main__":
    sys.exit(main())
