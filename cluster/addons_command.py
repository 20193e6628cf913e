"""`mini-k8s addons`: a cluster's add-on objects for components that run somewhere else.

`mini-k8s up` creates the kube-dns Service, the default StorageClass and the metrics API's
registration itself (addons.py), pointing them at processes on this machine. When the components
run elsewhere — docker compose, one container each — something must do the same with *their*
addresses, once the API server answers: that is this command, run by compose as a one-shot service,
the role of `kubeadm init phase addon` in a kubeadm cluster:

    mini-k8s addons --kubeconfig /var/lib/mini-k8s/cluster/admin.conf --master https://apiserver:6443 \\
        --cluster-dns cluster-dns:10053 --metrics-server metrics-server:10260

It talks to the API server as the kubeconfig's user (compose gives it `admin.conf`, whose server is
the host's address of the API server, so `--master` names the one the containers use), or, with
`--master` alone, through a plain port.

Endpoints hold IP addresses, never names, so each HOST is looked up (in compose, Docker's DNS
answers with the container's address). Running it again is harmless: the objects are brought to
what it is told (an address that changed after `docker compose up --force-recreate`, say).
"""

from __future__ import annotations

import asyncio
import socket
import time

from api.errors import StatusError
from client import ConnectionFailed
from client.kubeconfig import ClientConfig
from cluster.addons import ensure_addons
from cluster.plan import cluster_dns_ip
from cluster.readiness import Prober


class AddonError(Exception):
    """What the user is told, on one line, before `mini-k8s addons` exits 1."""


def split_target(flag: str, target: str) -> tuple[str, int]:
    """`cluster-dns:10053` → ("cluster-dns", 10053); the flag is named when it is not HOST:PORT."""
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise AddonError(f'invalid {flag} "{target}": want HOST:PORT, e.g. cluster-dns:10053')
    return host.strip("[]"), int(port)


def ipv4_addresses(host: str) -> tuple[str, ...]:
    """Every IPv4 address of `host`, sorted (an Endpoints' addresses must be IPs)."""
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise AddonError(f'cannot look up "{host}": {exc.strerror}') from None
    return tuple(sorted({str(info[4][0]) for info in infos}))


async def install(
    client: ClientConfig, cluster_dns: str, metrics_server: str, service_cluster_ip_range: str, wait: float
) -> list[str]:
    """Wait for the API server (up to `wait` seconds), then create or update the add-on objects."""
    dns = None
    if cluster_dns:
        host, port = split_target("--cluster-dns", cluster_dns)
        dns = (cluster_dns_ip(service_cluster_ip_range), list(ipv4_addresses(host)), port)
    ms_port, ms_addresses = 0, ("127.0.0.1",)
    if metrics_server:
        host, ms_port = split_target("--metrics-server", metrics_server)
        ms_addresses = ipv4_addresses(host)
    master = client.server
    prober = Prober(master, client.credentials)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                return await ensure_addons(prober.api, ms_port, dns, ms_addresses)
            except ConnectionFailed as exc:
                if time.monotonic() > deadline:
                    raise AddonError(f"the API server at {master} does not answer: {exc}") from None
                await asyncio.sleep(0.5)
            except StatusError as exc:
                raise AddonError(f"the API server refused an add-on object: {exc}") from None
    finally:
        await prober.aclose()
