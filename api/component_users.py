"""The users the control-plane components authenticate as (the CN of their client certificates).

The first four are Kubernetes' well-known names, and its bootstrap RBAC policy binds roles to
them (apiserver/auth/bootstrap_components.py); a kubelet is `system:node:<name>` in the group
`system:nodes`. The last two have no Kubernetes counterpart as users: Kubernetes runs CoreDNS and
metrics-server as pods with ServiceAccounts (`kube-system/coredns`, `kube-system/metrics-server`),
which a certificate cannot name; mini-k8s runs them as host processes with certificates.
"""

from __future__ import annotations

KUBE_SCHEDULER = "system:kube-scheduler"
KUBE_CONTROLLER_MANAGER = "system:kube-controller-manager"
KUBE_PROXY = "system:kube-proxy"
NODE_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
CLUSTER_DNS = "mini-k8s:cluster-dns"
METRICS_SERVER = "mini-k8s:metrics-server"


def node_user(node_name: str) -> str:
    return f"{NODE_PREFIX}{node_name}"
