"""The `registry.k8s.io/hpa-example` image of the catalog: an HTTP server that burns CPU.

Kubernetes' HorizontalPodAutoscaler walkthrough uses a PHP page that adds square roots a
million times per request and answers "OK!"; this does the same work in Python, so a load
generator (`while true; do wget -q -O- http://php-apache; done`) makes the pods' CPU climb.
Port 80, or PORT (pods share the host's network in this runtime, see docs/images.md).
"""

from __future__ import annotations

import math
import os
import sys
from http.server import BaseHTTPRequestHandler

from kubelet.images.httpserver import reply, serve


def burn() -> float:
    x = 0.0001
    for _ in range(1_000_001):
        x += math.sqrt(x)
    return x


class Handler(BaseHTTPRequestHandler):
    server_version = "Apache/2.4.10 (Debian)"

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        burn()
        body = b"OK!"
        reply(self, body)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        print(f'{self.client_address[0]} - - "{self.requestline}" {code}', flush=True)


def main() -> int:
    return serve("hpa-example", Handler, int(os.environ.get("PORT") or 80))


if __name__ == "__main__":
    sys.exit(main())
