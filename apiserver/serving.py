"""Serving the app on the plain port, the secure port, or both, from one process.

uvicorn serves one socket per Server; two Servers share the app here. The first one started
runs the app's lifespan (the watch caches, bootstrap objects), and only once it is up does the
second begin to listen, so no request reaches a server that is not ready. A SIGTERM or Ctrl-C
stops both. The secure port asks for a client certificate but does not require one
(`--client-ca-file` set): a certificate is one way to authenticate, a token another. Its
connections decrypt into one buffer each (tls_reads.py) and join the writes of one loop pass into
one TLS record (tls_writes.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import sys
from collections.abc import Generator
from types import FrameType
from typing import Any

import uvicorn

from api import eventloop
from api.websocket_compat import lenient_server_protocol
from apiserver.config import ServerConfig
from apiserver.tls_reads import BufferedReads

IDLE_TIMEOUT_SECONDS = 90


class _Server(uvicorn.Server):
    """A uvicorn Server that stops its peers too, and leaves signals to the first one."""

    def __init__(self, config: uvicorn.Config, *, handles_signals: bool) -> None:
        super().__init__(config)
        self.peers: list[uvicorn.Server] = []
        self.handles_signals = handles_signals

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if not self.handles_signals:
            yield
            return
        with super().capture_signals():
            yield

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        for peer in self.peers:
            peer.should_exit = True


def _configs(app: Any, config: ServerConfig, **common: Any) -> list[uvicorn.Config]:
    configs = []
    if config.port:
        configs.append(uvicorn.Config(app, host=config.bind_address, port=config.port, **common))
    if config.secure_port and config.tls_cert_file:
        tls: dict[str, Any] = {"ssl_certfile": config.tls_cert_file, "ssl_keyfile": config.tls_private_key_file}
        if config.client_ca_file:
            tls.update(ssl_ca_certs=config.client_ca_file, ssl_cert_reqs=ssl.CERT_OPTIONAL)
        configs.append(uvicorn.Config(app, host=config.bind_address, port=config.secure_port,
                                      http=BufferedReads, **tls, **common))  # fmt: skip
    for i, cfg in enumerate(configs):
        cfg.lifespan = "on" if i == 0 else "off"
    return configs


async def _serve_all(servers: list[_Server]) -> None:
    first = asyncio.create_task(servers[0].serve())
    while not servers[0].started:  # the lifespan (caches, bootstrap) must be done first
        if first.done():
            await first
            return
        await asyncio.sleep(0.02)
    await asyncio.gather(first, *(s.serve() for s in servers[1:]))


def serve(app: Any, config: ServerConfig, **options: Any) -> None:
    # ws: kubectl's port-forward subprotocol `SPDY/3.1+portforward.k8s.io` is not an RFC token (api/websocket_compat.py)
    # timeout_keep_alive: an idle connection stays open 90 s, as kube-apiserver's IdleTimeout (Go's
    # default transport keeps idle connections as long). uvicorn's own 5 s would close a kubectl's or
    # a controller's connection after every quiet spell, and each new one on the secure port costs a
    # TLS handshake (~1.5 ms of server CPU here).
    common = {"timeout_graceful_shutdown": 2, "log_config": None, "ws": lenient_server_protocol(),
              "timeout_keep_alive": IDLE_TIMEOUT_SECONDS, **options}  # loggers: api/klog.py  # fmt: skip
    servers = [_Server(cfg, handles_signals=i == 0) for i, cfg in enumerate(_configs(app, config, **common))]
    servers[0].peers = list(servers[1:])
    try:
        eventloop.run(_serve_all(servers))
    except KeyboardInterrupt:
        sys.exit(130)
