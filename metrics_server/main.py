"""`mini-metrics-server`: scrape every kubelet's resource metrics, serve metrics.k8s.io/v1beta1.

    mini-metrics-server --master http://127.0.0.1:8080 --metric-resolution 15s

The role kubernetes-sigs/metrics-server plays: the first half of the resource metrics pipeline
(kubelets -> metrics-server -> API server aggregation -> `kubectl top` and the HPA controller).
It talks to the API server only through client/ (informers on Nodes and Pods: where the kubelets
are, and the labels that selectors match), to kubelets over HTTPS as itself when given
--kubelet-certificate-authority (else plain HTTP: scraper.py), and keeps only the last two
points of everything in memory (storage.py). Started before any scrape it is live but not ready;
ready once the caches have synced and the first scrape cycle is done.

Flags are metrics-server's where it has them (--metric-resolution 60s by default, as upstream,
--kubelet-request-timeout 10s, --bind-address). Deviation: plain HTTP on --port (10260), where
metrics-server serves HTTPS on --secure-port (10250 in its manifests, 4443 in many charts) and
authenticates the API server's aggregator; in mini-k8s the aggregator reaches it on loopback.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Annotated

import typer

from api import cmdline
from api.duration import parse_duration
from client import SharedInformerFactory, new_client
from client.credentials import Credentials
from client.kubeconfig import client_config
from metrics_server import server
from metrics_server.scraper import Scraper, kubelet_tls
from metrics_server.storage import Storage

log = logging.getLogger("metrics_server")
app = typer.Typer(add_completion=False, help="mini-metrics-server: resource usage of nodes and pods (metrics.k8s.io).")


@dataclass(frozen=True)
class Options:
    master: str
    kubeconfig: str
    bind_address: str
    port: int
    metric_resolution: float
    kubelet_request_timeout: float
    kubelet_certificate_authority: str = ""
    kubelet_client_certificate: str = ""
    kubelet_client_key: str = ""


@app.command()
def run(
    master: Annotated[str, typer.Option("--master", help="The API server's address (overrides kubeconfig).")] = "",
    kubeconfig: Annotated[str, typer.Option("--kubeconfig", help="Path to a kubeconfig file.")] = "",
    bind_address: Annotated[str, typer.Option("--bind-address", help="The address to serve on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Plain-HTTP port of metrics.k8s.io and /healthz.")] = 10260,
    metric_resolution: Annotated[
        str, typer.Option("--metric-resolution", help="How often every kubelet is scraped (Go duration).")
    ] = "60s",
    kubelet_request_timeout: Annotated[
        str, typer.Option("--kubelet-request-timeout", help="Give up on a kubelet after this long.")
    ] = "10s",
    kubelet_certificate_authority: Annotated[
        str,
        typer.Option(
            "--kubelet-certificate-authority",
            help="Scrape kubelets over HTTPS, their serving certificates checked against this CA file.",
        ),
    ] = "",
    kubelet_client_certificate: Annotated[
        str,
        typer.Option(
            "--kubelet-client-certificate", help="The client certificate for kubelets [the kubeconfig's]."
        ),
    ] = "",
    kubelet_client_key: Annotated[
        str, typer.Option("--kubelet-client-key", help="Its key [the kubeconfig's].")
    ] = "",
    verbosity: Annotated[int, typer.Option("-v", "--v", help="Log verbosity (0-4).")] = 0,
) -> None:
    try:
        options = Options(
            master=cmdline.server_url(master),
            kubeconfig=kubeconfig,
            bind_address=bind_address,
            port=port,
            metric_resolution=parse_duration(metric_resolution),
            kubelet_request_timeout=parse_duration(kubelet_request_timeout),
            kubelet_certificate_authority=kubelet_certificate_authority,
            kubelet_client_certificate=kubelet_client_certificate,
            kubelet_client_key=kubelet_client_key,
        )
        if options.metric_resolution <= 0:
            raise ValueError("--metric-resolution must be positive")
        if bool(kubelet_client_certificate) != bool(kubelet_client_key):
            raise ValueError("--kubelet-client-certificate and --kubelet-client-key go together")
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    # logging is set up from -v/--logtostderr/--log-dir already (api/klog.py, via cmdline.run)
    sys.exit(asyncio.run(_main(options)))


async def _main(options: Options) -> int:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    try:
        await _serve(options)
    except asyncio.CancelledError:
        return 0
    return 0


async def _serve(options: Options) -> None:
    config = client_config(options.kubeconfig or None, master=options.master or None)
    client = new_client(options.kubeconfig or None, master=options.master or None, user_agent="mini-metrics-server")
    factory = SharedInformerFactory(client)
    nodes = factory.informer_for("nodes")
    pods = factory.informer_for("pods")
    storage = Storage(options.metric_resolution)
    presented = config.credentials  # upstream falls back to its API credentials' certificate
    if options.kubelet_client_certificate:
        presented = Credentials(cert_file=options.kubelet_client_certificate, key_file=options.kubelet_client_key)
    tls = kubelet_tls(options.kubelet_certificate_authority, presented)
    scraper = Scraper(nodes, storage, options.metric_resolution, options.kubelet_request_timeout, tls)
    synced = False
    scraping: asyncio.Task[None] | None = None

    def health(check: str) -> str | None:
        if check == "readyz":
            if not synced:
                return "informer caches not synced yet"
            return None if scraper.cycles else "no scrape cycle has completed yet"
        if scraping is not None and scraping.done():
            return "the scrape loop has stopped"
        stale = options.metric_resolution * 1.5 + options.kubelet_request_timeout
        if scraper.last_tick and time.time() - scraper.last_tick > stale:
            return f"metric-collection-timely: no scrape cycle started in the last {stale:g}s"
        return None

    http = server.serve(server.build_app(storage, nodes, pods, health), options.bind_address, options.port)
    factory.start()
    log.info("serving metrics.k8s.io/v1beta1 on http://%s:%d, scraping every %gs", options.bind_address,
             options.port, options.metric_resolution)  # fmt: skip
    try:
        synced = all((await factory.wait_for_cache_sync()).values())
        scraping = asyncio.create_task(scraper.run(), name="scrape")
        await scraping
    finally:
        if scraping is not None:
            scraping.cancel()
        srv, serving = http
        srv.should_exit = True
        await asyncio.gather(serving, return_exceptions=True)
        await factory.shutdown()
        await scraper.aclose()
        await client.aclose()


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    cmdline.run(app, "mini-metrics-server")
