"""The scrape cycle: every --metric-resolution, every node's kubelet, all at once.

    ┌─ tick ──────────────────────────────────────────────────────────────────────────┐
    │ nodes informer ─▶ for each Node, concurrently:                                    │
    │                     GET http(s)://<address>:<kubelet port>/metrics/resource?node=<name>│
    │                     (timeout --kubelet-request-timeout) ─▶ decode.py ─▶ a batch     │
    │                   merge the batches ─▶ storage.store() (storage.py)                 │
    └──────────────────────────────────────────────────────────────────────────────────┘

As upstream (pkg/scraper), a node that cannot be scraped (no address, refused, timed out, not
200, not the Prometheus text format) is logged and left out of this cycle's batch - so its
points are dropped, and its usage reappears two good scrapes later. The next tick starts
--metric-resolution after the previous one started (at once if a tick took longer).

Where a kubelet is: the Node's first InternalIP (else ExternalIP, else Hostname) in
status.addresses, and the port in status.daemonEndpoints.kubeletEndpoint.Port (upstream's
--kubelet-use-node-status-port; 10250 when the kubelet reported none). `?node=` is mini-k8s':
one mini-kubelet process may host many simulated nodes on one port (kubelet/resourcemetrics.py).

HTTPS or not: with --kubelet-certificate-authority, as upstream always does, over HTTPS, the
kubelet's serving certificate checked against that CA and metrics-server's client certificate
presented (--kubelet-client-certificate/--kubelet-client-key, else the one of its kubeconfig, as
upstream falls back to its API credentials); the kubelet then asks the API server whether this
user may `get nodes/metrics`. Without it, plain HTTP: mini-k8s' kubelets without a client CA keep
their metrics open.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from dataclasses import replace
from typing import Any

import httpx

from client import Informer
from client.credentials import Credentials
from metrics_server.decode import MetricsBatch, decode_batch
from metrics_server.storage import Storage

log = logging.getLogger("metrics_server.scraper")

ADDRESS_TYPES = ("InternalIP", "ExternalIP", "Hostname")
DEFAULT_KUBELET_PORT = 10250


def kubelet_tls(ca_file: str, client: Credentials) -> ssl.SSLContext | None:
    """How to reach kubelets over HTTPS (see the module docstring); None: plain HTTP. `client`
    holds the certificate to present (a file, or PEM in memory from a kubeconfig's `-data`)."""
    if not ca_file:
        return None
    return replace(client, ca_file=ca_file, ca_data="", insecure=False, token="").ssl_context()


def kubelet_url(node: dict[str, Any], scheme: str = "http") -> str | None:
    status = node.get("status") or {}
    addresses = status.get("addresses") or []
    address = next((a.get("address") for t in ADDRESS_TYPES for a in addresses if a.get("type") == t), None)
    if not address:
        return None
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port") or DEFAULT_KUBELET_PORT
    host = f"[{address}]" if ":" in address else address
    return f"{scheme}://{host}:{port}/metrics/resource"


class Scraper:
    def __init__(
        self, nodes: Informer, storage: Storage, resolution: float, timeout: float, tls: ssl.SSLContext | None = None
    ) -> None:
        self.nodes = nodes
        self.storage = storage
        self.resolution = resolution
        self.scheme = "https" if tls is not None else "http"
        self.http = httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=64), verify=tls or True)
        self.cycles = 0  # completed ticks
        self.last_tick = 0.0  # when the newest tick started (time.time())
        self.last_done = 0.0  # when the newest completed tick ended

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            self.last_tick = time.time()
            try:
                await self.tick()
                self.cycles += 1
                self.last_done = time.time()
            except Exception:  # keep the cycle going: /livez tells when ticks stop completing
                log.exception("scrape cycle failed")
            await asyncio.sleep(max(started + self.resolution - loop.time(), 0.0))

    async def tick(self) -> None:
        nodes = self.nodes.list()
        batches = await asyncio.gather(*(self.scrape(n) for n in nodes))
        batch = MetricsBatch()
        for b in batches:
            if b is not None:
                batch.merge(b)
        self.storage.store(batch)
        log.debug("scraped %d of %d nodes: %d pods", sum(b is not None for b in batches), len(nodes), len(batch.pods))

    async def scrape(self, node: dict[str, Any]) -> MetricsBatch | None:
        name = node["metadata"]["name"]
        url = kubelet_url(node, self.scheme)
        if url is None:
            log.warning("failed to scrape node %s: it reports no address", name)
            return None
        asked = int(time.time() * 1000)
        try:
            resp = await self.http.get(url, params={"node": name})
            if resp.status_code != 200:
                raise ValueError(f"request failed, status: {resp.status_code} {resp.text.strip()[:200]!r}")
            return decode_batch(resp.text, name, asked)
        except Exception as exc:  # noqa: BLE001 - whatever one kubelet does, the others are scraped
            log.error("failed to scrape node %s (%s): %s", name, url, str(exc) or type(exc).__name__)
            return None

    async def aclose(self) -> None:
        await self.http.aclose()
