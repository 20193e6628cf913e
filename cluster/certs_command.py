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

from dataclasses import dataclass
from pathlib import Path

from cluster import identities
from cluster.pki import CA, cluster_pki, kubelet_serving, subject_alt_names

COMPONENTS = ("controller-manager", "scheduler", "kube-proxy", "cluster-dns", "metrics-server")
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


def make_certs(
    directory: Path, server: str, admin_server: str, apiserver_names: list[str], kubelets: list[Kubelet],
    kubernetes_service_ip: str,
) -> list[str]:  # fmt: skip
    """Everything of the module docstring, in `directory`; the lines to tell the user."""
    pki = directory / "pki"
    try:
        pki.mkdir(parents=True, exist_ok=True)
        CA(pki)
    except PermissionError as exc:
        raise CertsError(f"cannot write in {directory}: {exc.strerror} (the user running this must own it)") from None
    made = cluster_pki(pki, kubernetes_service_ip, tuple(apiserver_names))
    sans = ", ".join(sorted(subject_alt_names(made.apiserver.cert)))
    lines = [f"CA {made.ca.cert}", f"API server {made.apiserver.cert}: {sans}"]
    for kubelet in kubelets:
        pair = kubelet_serving(pki, kubelet.node, kubelet.address)
        lines.append(f"kubelet {kubelet.node} {pair.cert}: {', '.join(sorted(subject_alt_names(pair.cert)))}")
    for identity in (*COMPONENTS, *(f"kubelet-{k.node}" for k in kubelets)):
        path = identities.kubeconfig(directory, server, identity)
        lines.append(f"{identity}: {path} ({identities.subject(identity)[0]})")
    from cluster.up import write_secure_context  # imports the client library

    admin = write_secure_context(str(directory / "admin.conf"), CONTEXT, admin_server, pki)
    lines.append(f"admin: {admin} (kubernetes-admin, system:masters; server {admin_server})")
    return lines
