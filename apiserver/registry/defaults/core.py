"""Defaults for the core/v1 kinds that are not Pods: Service, Namespace, Secret, Node, Endpoints.

Service defaults are the interesting ones. A Service left without `type` is a ClusterIP service;
a port without `targetPort` forwards to the same port number on the pod; NodePort and
LoadBalancer services route external traffic through any node (`externalTrafficPolicy:
Cluster`). `clusterIP`/`clusterIPs` themselves are *not* defaults: the registry allocates them
(see apiserver/registry/allocators.py) after defaulting and validation.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

SESSION_AFFINITY_CLIENT_IP_TIMEOUT_SECONDS = 10800  # three hours


def default_service(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    svc_type = spec["type"]
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    if spec["sessionAffinity"] == "ClientIP":
        config = spec.setdefault("sessionAffinityConfig", {})
        client_ip = config.setdefault("clientIP", {})
        client_ip.setdefault("timeoutSeconds", SESSION_AFFINITY_CLIENT_IP_TIMEOUT_SECONDS)
    if svc_type in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if svc_type != "ExternalName":
        if not spec.get("internalTrafficPolicy"):
            spec["internalTrafficPolicy"] = "Cluster"
        # mini-k8s is single-stack IPv4: what Kubernetes fills in on such a cluster.
        if not spec.get("ipFamilyPolicy"):
            spec["ipFamilyPolicy"] = "SingleStack"
        if not spec.get("ipFamilies"):
            spec["ipFamilies"] = ["IPv4"]
    if svc_type == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True
    # `clusterIP` is the old single-value field, `clusterIPs` the new list; keep them in step.
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    elif spec.get("clusterIPs") and not spec.get("clusterIP"):
        spec["clusterIP"] = spec["clusterIPs"][0]


def default_namespace(obj: Obj) -> None:
    # The "kubernetes" finalizer keeps a deleted namespace around (Terminating) until the
    # namespace controller has deleted everything in it.
    spec = obj.setdefault("spec", {})
    if not spec.get("finalizers"):
        spec["finalizers"] = ["kubernetes"]
    status = obj.setdefault("status", {})
    if not status.get("phase"):
        status["phase"] = "Active"


def default_secret(obj: Obj) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"


def default_node(obj: Obj) -> None:
    # Allocatable defaults to capacity: nothing reserved for the system unless the kubelet says.
    status = obj.get("status")
    if isinstance(status, dict) and status.get("capacity") and not status.get("allocatable"):
        status["allocatable"] = dict(status["capacity"])


def default_endpoints(obj: Obj) -> None:
    for subset in obj.get("subsets") or []:
        for port in (subset or {}).get("ports") or []:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


def carry_over_service_allocations(new: Obj, old: Obj) -> None:
    """On update, a Service body that omits its clusterIP or nodePorts keeps the allocated ones.

    `kubectl replace -f svc.yaml` sends the manifest, which has no clusterIP; Kubernetes copies
    the allocated values from the stored object instead of treating that as a change (which
    validation would reject: a cluster IP "may not change once set").
    """
    new_spec = new.setdefault("spec", {})
    old_spec = old.get("spec") or {}
    if "ExternalName" in (new_spec.get("type"), old_spec.get("type")):
        return
    if not new_spec.get("clusterIP") and not new_spec.get("clusterIPs") and old_spec.get("clusterIP"):
        new_spec["clusterIP"] = old_spec["clusterIP"]
        new_spec["clusterIPs"] = list(old_spec.get("clusterIPs") or [old_spec["clusterIP"]])
    if new_spec.get("type") in ("NodePort", "LoadBalancer"):
        old_ports = {(p.get("protocol") or "TCP", p.get("port")): p.get("nodePort")
                     for p in old_spec.get("ports") or [] if isinstance(p, dict)}
        for port in new_spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort"):
                previous = old_ports.get((port.get("protocol") or "TCP", port.get("port")))
                if previous:
                    port["nodePort"] = previous
