"""`mini-k8s certs`: every certificate and kubeconfig of a cluster whose components run elsewhere.

`mini-k8s up --secure` makes its certificates itself (cluster/pki.py, cluster/identities.py), for
processes on this machine. When the components run in containers — docker compose, one each — the
API server is reached by another name (`apiserver`), each kubelet by its own, and the files must be
on a volume every container mounts at the same path. This command makes them there, run by compose
as a one-shot service before anything else starts: the role of `kubeadm init phase certs all` and
`kubeadm init phase kubeconfig all`.

    mini-k8s certs --dir /var/lib/mini-k8s/cluster --server https://apiserver:6443 \\
        --apiserver-name apiserver --admin-server https://127.0.0.1:6443 \\
        --kubelet kubelet-1 --kubelet kubelet-2 --kubelet node-3=10.0.0.13

What it writes into DIR:

    pki/ca.crt, ca.key                 the cluster CA
    pki/apiserver.crt/.key             the API server's serving certificate: cluster/pki.py's names
                                       (localhost, 127.0.0.1, kubernetes.default.svc…, the `kubernetes`
                                       Service's ClusterIP) plus every --apiserver-name (a DNS name
                                       or an IP address)
    pki/admin.crt/.key, sa.key, apiserver-kubelet-client.crt/.key   as cluster/pki.py makes them
    pki/kubelet-<node>.crt/.key        each --kubelet's serving certificate: NODE, its ADDRESS
                                       (a DNS name or an IP address), localhost and 127.0.0.1
    pki/<identity>-client.crt/.key     each component's client certificate, and
    kubeconfigs/<identity>.conf        its kubeconfig (--server, the CA, that certificate; the paths
                                       are DIR's, so DIR must be mounted at the same path everywhere):
                                       controller-manager, scheduler, kube-proxy, cluster-dns,
                                       metrics-server and kubelet-<node> (cluster/identities.py)
    admin.conf                         the administrator's kubeconfig for kubectl, with --admin-server
                                       (where users reach the API server from, e.g. the host's
                                       published port) and the CA and admin certificate embedded

`--kubelet NODE[=ADDRESS]`: NODE is the node's name (the kubelet's --node-name), ADDRESS where the
API server reaches it (the kubelet's --address; NODE when not given).

Running it again is harmless (a second `docker compose up`): files that exist are kept, so the CA
and every kubeconfig stay valid — except a serving certificate that lacks a name it is now asked
for, which is issued again by the same CA (clients trust the CA, not the certificate).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509

from cluster import identities
from cluster.dns_addon import CLUSTER_DOMAIN
from cluster.pki import CA, Pair, cluster_pki

COMPONENTS = ("controller-manager", "scheduler", "kube-proxy", "cluster-dns", "metrics-server")
# cluster/pki.py's cluster_pki names, which every client inside the cluster uses
APISERVER_DNS = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                 f"kubernetes.default.svc.{CLUSTER_DOMAIN}")  # fmt: skip
CONTEXT = "mini-k8s-compose"


class CertsError(Exception):
    """What the user is told, on one line, before `mini-k8s certs` exits 1."""


@dataclass(frozen=True)
class Kubelet:
    node: str
    address: str


def parse_kubelet(value: str) -> Kubelet:
    """`kubelet-1` → (kubelet-1, kubelet-1); `node-3=10.0.0.13` → (node-3, 10.0.0.13)."""
    node, _, address = value.partition("=")
    if not node or "/" in node:
        raise CertsError(f'invalid --kubelet "{value}": want NODE or NODE=ADDRESS, e.g. kubelet-1')
    return Kubelet(node, address or node)


def split_names(names: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(DNS names, IP addresses) of a list that holds both."""
    dns: list[str] = []
    ips: list[str] = []
    for name in names:
        try:
            ips.append(str(ipaddress.ip_address(name)))
        except ValueError:
            dns.append(name)
    return tuple(dict.fromkeys(dns)), tuple(dict.fromkeys(ips))


def _sans(path: Path) -> set[str]:
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {*ext.get_values_for_type(x509.DNSName), *(str(ip) for ip in ext.get_values_for_type(x509.IPAddress))}


def serving(ca: CA, name: str, cn: str, dns: tuple[str, ...], ips: tuple[str, ...]) -> Pair:
    """`<name>.crt/.key`, a serving certificate for `dns` and `ips`: kept when it names them all,
    issued again (same CA) when one is missing."""
    cert, key = ca.dir / f"{name}.crt", ca.dir / f"{name}.key"
    if cert.exists() and key.exists() and not {*dns, *ips} <= _sans(cert):
        cert.unlink()
        key.unlink()
    return ca.issue(name, cn=cn, server=True, dns=dns, ips=ips)


def make_certs(
    directory: Path, server: str, admin_server: str, apiserver_names: list[str], kubelets: list[Kubelet],
    kubernetes_service_ip: str,
) -> list[str]:  # fmt: skip
    """Everything of the module docstring, in `directory`; the lines to tell the user."""
    pki = directory / "pki"
    try:
        pki.mkdir(parents=True, exist_ok=True)
        ca = CA(pki)
    except PermissionError as exc:
        raise CertsError(f"cannot write in {directory}: {exc.strerror} (the user running this must own it)") from None
    extra_dns, extra_ips = split_names(apiserver_names)
    # the API server's certificate first, with the extra names: cluster_pki keeps a file that exists
    serving(ca, "apiserver", "kube-apiserver", tuple(dict.fromkeys((*APISERVER_DNS, *extra_dns))),
            tuple(dict.fromkeys(("127.0.0.1", kubernetes_service_ip, *extra_ips))))  # fmt: skip
    made = cluster_pki(pki, kubernetes_service_ip)
    lines = [f"CA {made.ca.cert}", f"API server {made.apiserver.cert}: {', '.join(sorted(_sans(made.apiserver.cert)))}"]
    for kubelet in kubelets:
        dns, ips = split_names([kubelet.node, kubelet.address, "localhost", "127.0.0.1"])
        pair = serving(ca, f"kubelet-{kubelet.node}", f"system:node:{kubelet.node}", dns, ips)
        lines.append(f"kubelet {kubelet.node} {pair.cert}: {', '.join(sorted(_sans(pair.cert)))}")
    for identity in (*COMPONENTS, *(f"kubelet-{k.node}" for k in kubelets)):
        path = identities.kubeconfig(directory, server, identity)
        lines.append(f"{identity}: {path} ({identities.subject(identity)[0]})")
    from cluster.up import write_secure_context  # imports the client library

    admin = write_secure_context(str(directory / "admin.conf"), CONTEXT, admin_server, pki)
    lines.append(f"admin: {admin} (kubernetes-admin, system:masters; server {admin_server})")
    return lines
