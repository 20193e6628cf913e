"""`mini-cluster-dns`: Services and EndpointSlices in, DNS answers out.

It runs as its own process, like the other components, and reads the API server only through
two informers (Services, EndpointSlices). Where CoreDNS runs as a Deployment behind the
`kube-dns` Service, mini-k8s runs this as a host process started by `mini-k8s up`: pods of the
simulated runtime have no network to reach a pod-hosted DNS through, so a process on a host
port is the one arrangement that works with every runtime. It listens on --port (default
10053, not 53: that needs root, and the machine's own resolver often holds it) of every
--address. Pods reach it the Kubernetes way, through the `kube-dns` Service (10.96.0.10:53):
`mini-k8s up` gives that Service no selector and Endpoints naming the nodes' bridge addresses
(the host as pods see it), which the endpointslicemirroring controller turns into EndpointSlices
and kube-proxy into DNAT rules (cluster/dns_addon.py).

    dig @127.0.0.1 -p 10053 web.default.svc.cluster.local
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from api import cmdline
from client import SharedInformerFactory, index_by_service_name, new_client
from cluster_dns import health
from cluster_dns.records import ClusterRecords
from cluster_dns.server import Resolver, serve

log = logging.getLogger("cluster_dns")
app = typer.Typer(add_completion=False, help="mini-cluster-dns: the cluster's DNS (the role CoreDNS plays).")


def upstream_address(spec: str, resolv_conf: Path = Path("/etc/resolv.conf")) -> tuple[str, int] | None:
    """`none`, `HOST[:PORT]`, or `resolv.conf`: the first nameserver listed there."""
    if spec == "none":
        return None
    if spec == "resolv.conf":
        try:
            lines = resolv_conf.read_text().splitlines()
        except OSError:
            return None
        servers = [line.split()[1] for line in lines if line.startswith("nameserver") and len(line.split()) > 1]
        return (servers[0], 53) if servers else None
    host, _, port = spec.rpartition(":") if spec.count(":") == 1 else (spec, "", "")
    return (host or spec, int(port) if port else 53)


@app.command()
def run(
    master: Annotated[str, typer.Option("--master", help="The API server's address (overrides kubeconfig).")] = "",
    kubeconfig: Annotated[str, typer.Option("--kubeconfig", help="Path to a kubeconfig file.")] = "",
    address: Annotated[
        str, typer.Option("--address", help="The addresses to serve DNS on (comma-separated), as CoreDNS's bind.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="The DNS port (UDP and TCP).")] = 10053,
    cluster_domain: Annotated[str, typer.Option("--cluster-domain", help="The cluster's zone.")] = "cluster.local",
    ttl: Annotated[int, typer.Option("--ttl", help="TTL of the zone's answers, in seconds.")] = 5,
    upstream: Annotated[
        str, typer.Option("--upstream", help="Where other names go: resolv.conf, HOST[:PORT] or none.")
    ] = "resolv.conf",
    health_port: Annotated[int, typer.Option("--health-port", help="/healthz and /readyz; 0 disables.")] = 10054,
) -> None:
    try:
        forward = upstream_address(upstream)
    except ValueError as exc:
        typer.echo(f"error: --upstream {upstream!r}: {exc}", err=True)
        raise typer.Exit(2) from exc
    addresses = [a.strip() for a in address.split(",") if a.strip()] or ["127.0.0.1"]
    options = {"master": cmdline.server_url(master) if master else "", "kubeconfig": kubeconfig,
               "addresses": addresses, "port": port, "zone": cluster_domain, "ttl": ttl, "upstream": forward,
               "health_port": health_port}
    sys.exit(asyncio.run(_main(options)))


async def _main(options: dict[str, Any]) -> int:
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


async def _serve(options: dict[str, Any]) -> None:
    client = new_client(options["kubeconfig"] or None, master=options["master"] or None, user_agent="mini-cluster-dns")
    factory = SharedInformerFactory(client)
    services = factory.informer_for("services")
    slices = factory.informer_for("endpointslices.discovery.k8s.io")
    slices.add_indexers({"service": index_by_service_name})

    records = ClusterRecords(
        options["zone"],
        service=lambda ns, name: services.get(f"{ns}/{name}"),
        slices=lambda ns, name: slices.by_index("service", f"{ns}/{name}"),
    )
    resolver = Resolver(records, options["ttl"], options["upstream"])
    factory.start()
    listeners = await serve(resolver, options["addresses"], options["port"])
    ready = False
    first = options["addresses"][0]
    health_task = health.serve(first, options["health_port"], lambda: ready) if options["health_port"] else None
    log.info("serving DNS for %s on %s port %d", options["zone"], ", ".join(options["addresses"]), options["port"])
    try:
        synced = await factory.wait_for_cache_sync()
        ready = all(synced.values())
        await asyncio.Event().wait()
    finally:
        for listener in listeners:
            listener.close()
        if health_task is not None:
            health_task.cancel()
        await factory.shutdown()
        await client.aclose()


def main() -> None:
    cmdline.run(app, "mini-cluster-dns")
