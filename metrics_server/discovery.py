"""The discovery documents of the metrics.k8s.io group, as metrics-server serves them.

The API server's aggregation layer (an APIService `v1beta1.metrics.k8s.io` pointing here) merges
these into its own `/apis` and forwards `/apis/metrics.k8s.io/...` to us with the path unchanged;
`kubectl top` and the HPA controller find the group through them. Legacy (unaggregated)
discovery only, as the rest of mini-k8s serves it.
"""

from __future__ import annotations

from typing import Any

from metrics_server.objects import GROUP, GROUP_VERSION, VERSION

RESOURCES = [
    {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics", "verbs": ["get", "list"]},
    {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]},
]


def api_group() -> dict[str, Any]:
    """GET /apis/metrics.k8s.io"""
    version = {"groupVersion": GROUP_VERSION, "version": VERSION}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": GROUP, "versions": [version], "preferredVersion": version}


def api_group_list() -> dict[str, Any]:
    """GET /apis"""
    group = api_group()
    del group["kind"], group["apiVersion"]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [group]}


def api_resource_list() -> dict[str, Any]:
    """GET /apis/metrics.k8s.io/v1beta1"""
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION,
            "resources": [dict(r) for r in RESOURCES]}  # fmt: skip
