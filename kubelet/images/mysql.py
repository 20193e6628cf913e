"""The `mysql` image of the catalog: a placeholder that looks like MySQL from the outside.

It is no database. It checks the environment as the official image's entrypoint does (one of
MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD, MYSQL_RANDOM_ROOT_PASSWORD, else it exits 1
with the image's complaint), listens on 3306 (MYSQL_TCP_PORT changes it) and greets every
connection with a MySQL protocol-10 handshake packet, then closes it. Enough for a tcpSocket
probe, a Service's endpoints, and the seed's tomcat-app page to show "MySQL reachable".
"""

from __future__ import annotations

import os
import signal
import socketserver
import struct
import sys

from kubelet.images.httpserver import dual_stack

VERSION = b"5.7.44-mini"


def greeting(connection_id: int) -> bytes:
    salt = b"abcdefgh"
    body = (
        b"\x0a" + VERSION + b"\x00" + struct.pack("<I", connection_id) + salt + b"\x00"
        + struct.pack("<H", 0xF7FF) + b"\x21" + struct.pack("<H", 0x0002) + struct.pack("<H", 0x81FF)
        + b"\x15" + b"\x00" * 10 + b"ijklmnopqrst\x00" + b"mysql_native_password\x00"
    )  # fmt: skip
    return struct.pack("<I", len(body))[:3] + b"\x00" + body


class Handler(socketserver.BaseRequestHandler):
    count = 0

    def handle(self) -> None:
        Handler.count += 1
        self.request.sendall(greeting(Handler.count))


def main() -> int:
    if not any(os.environ.get(k) for k in ("MYSQL_ROOT_PASSWORD", "MYSQL_ALLOW_EMPTY_PASSWORD",
                                            "MYSQL_RANDOM_ROOT_PASSWORD")):  # fmt: skip
        print("error: database is uninitialized and password option is not specified\n"
              "  You need to specify one of MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD and "
              "MYSQL_RANDOM_ROOT_PASSWORD", file=sys.stderr, flush=True)  # fmt: skip
        return 1
    port = int(os.environ.get("MYSQL_TCP_PORT") or 3306)
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    server = dual_stack(socketserver.ThreadingTCPServer, port, Handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"mysqld: ready for connections. Version: '{VERSION.decode()}'  port: {port}  (mini-k8s placeholder)",
          flush=True)  # fmt: skip
    try:
        server.serve_forever()
    except (SystemExit, KeyboardInterrupt):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
