"""The metrics API's registration: how the API server finds metrics-server.

Kubernetes' own metrics-server manifest (components.yaml) ships a Deployment, a Service in front
of it and the APIService `v1beta1.metrics.k8s.io` naming that Service. The API server's
aggregation layer then proxies `/apis/metrics.k8s.io/v1beta1/...` to whatever the Service's
endpoints are, so `kubectl top` and the HPA controller see one API.

`mini-k8s up` runs metrics-server as a host process on loopback, not as a pod, so the Service has
no selector and `up` writes its Endpoints itself (127.0.0.1 and --metrics-server-port), the way
one points a Service at something outside the cluster. Deviation from components.yaml: the
APIService carries no `insecureSkipTLSVerify` and no `caBundle`, which makes mini-k8s' aggregator
speak plain HTTP to it (apiserver/aggregator/endpoints.py); the port is named `http` to say so.

As in components.yaml, the ClusterRole `system:aggregated-metrics-reader` lets whoever has `view`,
`edit` or `admin` read the metrics (its aggregate-to-* labels join it to those roles), so
`kubectl top` works for a student's ServiceAccount on a --secure cluster, not only for the admin.

These objects belong to `up` (label addonmanager.kubernetes.io/mode: Reconcile): an `up` with
another --metrics-server-port puts the new port in them.
"""

from __future__ import annotations

from typing import Any

NAMESPACE = "kube-system"
NAME = "metrics-server"
LABELS = {"k8s-app": NAME, "addonmanager.kubernetes.io/mode": "Reconcile"}


def metrics_objects(port: int, addresses: tuple[str, ...] = ("127.0.0.1",)) -> list[tuple[str, dict[str, Any]]]:
    """(resource, object) in creation order; `addresses`: where metrics-server listens (`up`: on
    loopback; docker compose: its container's address, which `mini-k8s addons` looks up)."""
    meta = {"name": NAME, "namespace": NAMESPACE, "labels": LABELS}
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {"ports": [{"name": "http", "port": 443, "protocol": "TCP", "targetPort": port}]},
    }
    endpoints = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta,
        "subsets": [{"addresses": [{"ip": ip} for ip in addresses],
                     "ports": [{"name": "http", "port": port, "protocol": "TCP"}]}],
    }
    api_service = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1beta1.metrics.k8s.io", "labels": LABELS},
        "spec": {
            "group": "metrics.k8s.io",
            "version": "v1beta1",
            "service": {"name": NAME, "namespace": NAMESPACE, "port": 443},
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }
    reader = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "system:aggregated-metrics-reader", "labels": {
            **LABELS, **{f"rbac.authorization.k8s.io/aggregate-to-{r}": "true" for r in ("view", "edit", "admin")}}},
        "rules": [{"apiGroups": ["metrics.k8s.io"], "resources": ["pods", "nodes"], "verbs": ["get", "list", "watch"]}],
    }  # fmt: skip
    return [("services", service), ("endpoints", endpoints), ("apiservices.apiregistration.k8s.io", api_service),
            ("clusterroles.rbac.authorization.k8s.io", reader)]  # fmt: skip
