"""`mini-kube-proxy`: makes Services carry traffic, in nftables mode.

It reads the API server through two informers only (Services, EndpointSlices) and programs one
nftables table, `ip mini-kube-proxy` by default:

    sudo nft list table ip mini-kube-proxy          # what it wrote, live
    mini-kube-proxy --master http://127.0.0.1:8080 --dump   # what it would write (no root needed)

One per machine, not one per node: every node of a mini-k8s cluster is a process on this machine
sharing the host's network stack, so per-node proxies would write the same rules into the same
kernel. A proxy that should treat only one node's endpoints as local (externalTrafficPolicy and
internalTrafficPolicy `Local`) is given `--hostname-override <node>`; without it every node is
local, which on one machine is true.

When it stops (SIGTERM, Ctrl-C) it deletes its table and, if it is the last mini-kube-proxy on
the host, restores the sysctls and routes it changed (host.py). After a SIGKILL,
`mini-kube-proxy --cleanup` does the same; `mini-k8s down` calls it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import signal
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any

import typer

from api import cmdline
from api.duration import parse_duration
from client import Informer, RESTClient, SharedInformerFactory, new_client
from kube_proxy import host, nft
from kube_proxy.health import serve_health
from kube_proxy.proxier import Proxier
from kube_proxy.ruleset import TABLE_COMMENT, ProxyConfig, build, transaction

log = logging.getLogger("kube_proxy")
app = typer.Typer(add_completion=False, help="mini-kube-proxy: Service traffic through nftables (kube-proxy's role).")


def _cidr(flag: str, value: str) -> str:
    try:
        return str(ipaddress.ip_network(value, strict=False))
    except ValueError as exc:
        typer.echo(f"error: {flag} {value!r}: {exc}", err=True)
        raise typer.Exit(2) from exc


@app.command()
def run(
    master: Annotated[str, typer.Option("--master", help="The API server's address (overrides kubeconfig).")] = "",
    kubeconfig: Annotated[str, typer.Option("--kubeconfig", help="Path to a kubeconfig file.")] = "",
    hostname_override: Annotated[str, typer.Option(
        "--hostname-override", help="Only this node's endpoints are local; empty: every node is on this host.")] = "",
    cluster_cidr: Annotated[str, typer.Option(
        "--cluster-cidr", help="The pods' range: Service clients outside it are masqueraded.")] = "",
    service_cidr: Annotated[str, typer.Option(
        "--service-cluster-ip-range", help="ClusterIPs: unallocated ones are dropped here.")] = "10.96.0.0/12",
    nodeport_addresses: Annotated[str, typer.Option(
        "--nodeport-addresses", help="CIDRs (comma-separated) answering NodePorts; empty: all local addresses.")] = "",
    masquerade_all: Annotated[bool, typer.Option(
        "--masquerade-all", help="SNAT all traffic sent through Service addresses.")] = False,
    min_sync_period: Annotated[str, typer.Option(
        "--min-sync-period", help="At most one rule sync per period (a change after a quiet spell: at once).")] = "1s",
    sync_period: Annotated[str, typer.Option(
        "--sync-period", help="How often the whole table is rewritten, repairing manual edits.")] = "30s",
    healthz_bind_address: Annotated[str, typer.Option(
        "--healthz-bind-address", help="ADDR:PORT of /healthz and /livez (port 0: none).")] = "127.0.0.1:10256",
    table: Annotated[str, typer.Option("--nftables-table", help="The `ip` table to own.")] = "mini-kube-proxy",
    cleanup: Annotated[bool, typer.Option(
        "--cleanup", help="Remove the table, routes and sysctl changes, then exit.")] = False,
    dump: Annotated[bool, typer.Option(
        "--dump", help="Print the nftables script for the cluster's Services now, then exit.")] = False,
) -> None:  # fmt: skip
    cfg = ProxyConfig(
        table=table, cluster_cidr=_cidr("--cluster-cidr", cluster_cidr) if cluster_cidr else "",
        service_cidr=_cidr("--service-cluster-ip-range", service_cidr),
        nodeport_addresses=tuple(_cidr("--nodeport-addresses", c) for c in nodeport_addresses.split(",") if c),
        masquerade_all=masquerade_all)  # fmt: skip
    if cleanup:
        _cleanup(cfg)
        return
    address, _, port = healthz_bind_address.rpartition(":")
    options = {"master": cmdline.server_url(master) if master else "", "kubeconfig": kubeconfig,
               "node": hostname_override, "min_sync": parse_duration(min_sync_period),
               "sync": parse_duration(sync_period), "health": (address or "127.0.0.1", int(port or 0))}  # fmt: skip
    if dump:
        sys.exit(asyncio.run(_dump(cfg, options)))
    why = nft.available()
    if why:
        typer.echo(f"error: mini-kube-proxy cannot program the kernel: {why}", err=True)
        raise typer.Exit(1)
    with host.host_lock():  # our table first: a proxy stopping now must see that we are here
        nft.apply(f'add table ip {cfg.table} {{ comment "{TABLE_COMMENT}" ; }}')
        host.prepare(cfg.service_cidr, cfg.cluster_cidr)  # pyroute2's sync API: outside the event loop
    try:
        code = asyncio.run(_main(cfg, options))
    finally:
        _cleanup(cfg)
        log.info("table ip %s removed", cfg.table)
    sys.exit(code)


def _cleanup(cfg: ProxyConfig) -> None:
    with host.host_lock():
        nft.delete_table(cfg.table)
        if not nft.tables_with_comment(TABLE_COMMENT):
            host.restore()


def _is_local(node: str) -> Callable[[str], bool]:
    return (lambda name: name == node) if node else (lambda name: True)


async def _informers(options: dict[str, Any]) -> tuple[RESTClient, SharedInformerFactory, Informer, Informer]:
    client = new_client(options["kubeconfig"] or None, master=options["master"] or None, user_agent="mini-kube-proxy")
    factory = SharedInformerFactory(client)
    return client, factory, factory.informer_for("services"), factory.informer_for("endpointslices.discovery.k8s.io")


async def _dump(cfg: ProxyConfig, options: dict[str, Any]) -> int:
    client, factory, services, slices = await _informers(options)
    proxier = Proxier(services, slices, cfg, _is_local(options["node"]), 0, 0)
    factory.start()
    try:
        await factory.wait_for_cache_sync()
        typer.echo(transaction(build(proxier.service_ports(), cfg, proxier.is_local), None, cfg), nl=False)
    finally:
        await factory.shutdown()
        await client.aclose()
    return 0


async def _main(cfg: ProxyConfig, options: dict[str, Any]) -> int:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    client, factory, services, slices = await _informers(options)
    proxier = Proxier(services, slices, cfg, _is_local(options["node"]), options["min_sync"], options["sync"])
    health_address, health_port = options["health"]
    health = serve_health(health_address, health_port, lambda: _healthz(proxier)) if health_port else None
    factory.start()
    try:
        await factory.wait_for_cache_sync()
        log.info("caches synced; programming table ip %s", cfg.table)
        await proxier.run()
    except asyncio.CancelledError:
        pass
    finally:
        if health is not None:
            health.cancel()
        await factory.shutdown()
        await client.aclose()
    return 0


def _healthz(proxier: Proxier) -> tuple[int, str]:
    """kube-proxy's /healthz: healthy once it has synced and not stale (no sync for two periods)."""
    now = time.monotonic()
    wall = time.time()
    healthy = proxier.last_sync > 0 and now - proxier.last_sync < 2 * max(proxier.sync_period, 1.0)
    last = wall - (now - proxier.last_sync) if proxier.last_sync else 0
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(last)) if last else ""
    body = {"lastUpdated": stamp, "currentTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(wall)),
            "nodeEligible": True}  # fmt: skip
    return (200 if healthy else 503), json.dumps(body)


def main() -> None:
    cmdline.run(app, "mini-kube-proxy")
