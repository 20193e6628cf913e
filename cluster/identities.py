"""Every component's own identity on a `--secure` cluster, as kubeadm gives them: a client
certificate signed by the cluster CA and a kubeconfig naming the API server's HTTPS address, the
CA and that certificate. The API server then knows who is calling, and RBAC (or, for kubelets, the
Node authorizer) grants each only what its job needs — a compromised kube-proxy cannot read Secrets.

    identity            certificate subject                     what authorizes it
    controller-manager  CN system:kube-controller-manager        ClusterRole system:kube-controller-manager;
                                                                 each controller runs as its own
                                                                 ServiceAccount (--use-service-account-credentials)
    scheduler           CN system:kube-scheduler                 system:kube-scheduler, system:volume-scheduler
    kube-proxy          CN system:kube-proxy                     system:node-proxier
    kubelet-<node>      CN system:node:<node>, O system:nodes    the Node authorizer and NodeRestriction
    cluster-dns         CN mini-k8s:cluster-dns                  system:coredns
    metrics-server      CN mini-k8s:metrics-server               system:metrics-server

Kubernetes runs CoreDNS and metrics-server as pods with ServiceAccounts; here they are host
processes, so they get certificates like the rest, and the bindings name these users.
The kubeconfigs are `<data-dir>/kubeconfigs/<identity>.conf` (kubeadm writes
/etc/kubernetes/controller-manager.conf, scheduler.conf, kubelet.conf the same way) and point at
the certificate files rather than embedding them: one CA rotation re-issues them in place.
Like everything in pki/, a file that exists is kept.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from api import component_users as users
from cluster.pki import CA

USERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "controller-manager": (users.KUBE_CONTROLLER_MANAGER, ()),
    "scheduler": (users.KUBE_SCHEDULER, ()),
    "kube-proxy": (users.KUBE_PROXY, ()),
    "cluster-dns": (users.CLUSTER_DNS, ()),
    "metrics-server": (users.METRICS_SERVER, ()),
}


def subject(identity: str) -> tuple[str, tuple[str, ...]]:
    """(user, groups) of a component identity; `kubelet-<node>` is that node's."""
    if identity.startswith("kubelet-"):
        return users.node_user(identity.removeprefix("kubelet-")), (users.NODES_GROUP,)
    return USERS[identity]


def kubeconfig(data_dir: Path, server: str, identity: str) -> Path:
    """The kubeconfig of `identity`, with its client certificate, made if missing."""
    pki = data_dir / "pki"
    user, groups = subject(identity)
    # `kubelet-<node>.crt` is the node's serving certificate (pki.kubelet_serving): clients are *-client
    pair = CA(pki).issue(f"{identity}-client", cn=user, groups=groups)
    path = data_dir / "kubeconfigs" / f"{identity}.conf"
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": identity, "preferences": {},
        "clusters": [{"name": "mini-k8s", "cluster": {"server": server,
                                                      "certificate-authority": str(pki / "ca.crt")}}],
        "users": [{"name": user, "user": {"client-certificate": str(pair.cert), "client-key": str(pair.key)}}],
        "contexts": [{"name": identity, "context": {"cluster": "mini-k8s", "user": user}}],
    }  # fmt: skip
    text = yaml.safe_dump(config, sort_keys=False)
    if not path.exists() or path.read_text() != text:  # the server's port may differ from the last `up`
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o600)
    return path
