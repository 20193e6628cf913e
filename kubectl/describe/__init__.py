"""`kubectl describe`: one object, with what surrounds it, in a human layout.

Where `get` shows a row, `describe` gathers context: a pod's events, an RC's pods (counted by
phase), a Deployment's ReplicaSets, a node's Lease and the pods it runs, a service's endpoints.
Events are found the way kubectl finds them: `fieldSelector=involvedObject.uid=<uid>`, so events
about an older object of the same name are not mixed in.

    fetch.py-like code lives here; the layouts are in kinds.py, the alignment in writer.py.
"""

from __future__ import annotations

import copy
from typing import Any

from api.errors import NotFoundError, StatusError
from api.registry import ResourceType
from kubectl.cli import Session
from kubectl.describe import cluster_kinds, hpa_kinds, kinds, quota_kinds

Obj = dict[str, Any]


async def events_for(s: Session, obj: Obj) -> list[Obj]:
    meta = obj["metadata"]
    lst = await s.client.list(
        "events", meta.get("namespace") or None, field_selector=f"involvedObject.uid={meta.get('uid', '')}"
    )
    return list(lst.get("items") or [])


def _selector_string(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


async def _pod_phases(s: Session, owner: Obj, labels: dict[str, str]) -> dict[str, int]:
    uid = owner["metadata"]["uid"]
    pods = (
        await s.client.list("pods", owner["metadata"]["namespace"], label_selector=_selector_string(labels))
    ).get("items") or []
    counts: dict[str, int] = {}
    for p in pods:
        refs = p["metadata"].get("ownerReferences") or []
        if any(r.get("uid") == uid and r.get("controller") for r in refs):
            phase = (p.get("status") or {}).get("phase") or "Pending"
            counts[phase] = counts.get(phase, 0) + 1
    return counts


def _strip_hash(template: Obj) -> Obj:
    t = copy.deepcopy(template)
    ((t.get("metadata") or {}).get("labels") or {}).pop("pod-template-hash", None)
    return t


async def _replica_sets(s: Session, d: Obj) -> tuple[list[Obj], Obj | None]:
    uid = d["metadata"]["uid"]
    items = (await s.client.list("replicasets.apps", d["metadata"]["namespace"])).get("items") or []
    owned = [
        rs
        for rs in items
        if any(
            r.get("uid") == uid and r.get("controller") for r in rs["metadata"].get("ownerReferences") or []
        )
    ]
    owned.sort(key=lambda rs: (rs["metadata"].get("creationTimestamp", ""), rs["metadata"]["name"]))
    template = _strip_hash((d.get("spec") or {}).get("template") or {})
    new = next((rs for rs in owned if _strip_hash(rs["spec"].get("template") or {}) == template), None)
    old = [rs for rs in owned if rs is not new]
    return old, new


async def describe(s: Session, rt: ResourceType, obj: Obj, show_events: bool = True) -> str:
    events = await events_for(s, obj) if show_events else None
    key = rt.key
    if key == "pods":
        return kinds.pod(obj, events)
    if key == "replicationcontrollers":
        return kinds.replication_controller(
            obj, await _pod_phases(s, obj, obj["spec"].get("selector") or {}), events
        )
    if key == "replicasets.apps":
        labels = (obj["spec"].get("selector") or {}).get("matchLabels") or {}
        return kinds.replica_set(obj, await _pod_phases(s, obj, labels), events)
    if key == "deployments.apps":
        try:
            sets: tuple[list[Obj], Obj | None] | None = await _replica_sets(s, obj)
        except StatusError:
            sets = None
        return kinds.deployment(obj, sets, events)
    if key == "nodes":
        name = obj["metadata"]["name"]
        lease, lease_error = None, ""
        try:
            lease = await s.client.get("leases.coordination.k8s.io", name, "kube-node-lease")
        except NotFoundError as exc:
            lease_error = exc.message
        selector = f"spec.nodeName={name},status.phase!=Failed,status.phase!=Succeeded"
        pods = (await s.client.list("pods", None, field_selector=selector)).get("items") or []
        return kinds.node(obj, lease, lease_error, pods, events)
    if key == "services":
        # As kubectl 1.32: the Service's EndpointSlices; its Endpoints only if slices cannot be listed.
        name, ns = obj["metadata"]["name"], obj["metadata"]["namespace"]
        ep: Obj | None
        try:
            slices = await s.client.list("endpointslices.discovery.k8s.io", ns,
                                         label_selector=f"kubernetes.io/service-name={name}")
            ep = cluster_kinds.slices_as_endpoints(list(slices.get("items") or []))
        except StatusError:
            try:
                ep = await s.client.get("endpoints", name, ns)
            except NotFoundError:
                ep = None
        return kinds.service(obj, ep, events)
    if key == "persistentvolumeclaims":
        pods = (await s.client.list("pods", obj["metadata"]["namespace"])).get("items") or []
        used_by = [
            p["metadata"]["name"] for p in pods
            if any((v.get("persistentVolumeClaim") or {}).get("claimName") == obj["metadata"]["name"]
                   for v in (p.get("spec") or {}).get("volumes") or [])
        ]
        return cluster_kinds.persistent_volume_claim(obj, used_by, events)
    simple = {
        "persistentvolumes": cluster_kinds.persistent_volume,
        "storageclasses.storage.k8s.io": cluster_kinds.storage_class,
        "poddisruptionbudgets.policy": cluster_kinds.pod_disruption_budget,
        "priorityclasses.scheduling.k8s.io": cluster_kinds.priority_class,
        "endpointslices.discovery.k8s.io": cluster_kinds.endpoint_slice,
        "ingressclasses.networking.k8s.io": cluster_kinds.ingress_class,
        "resourcequotas": quota_kinds.resource_quota,
        "limitranges": quota_kinds.limit_range,
        "horizontalpodautoscalers.autoscaling": hpa_kinds.horizontal_pod_autoscaler,
    }.get(key)
    if simple is not None:
        return simple(obj, events)
    if key == "namespaces":
        name = obj["metadata"]["name"]
        quotas = (await s.client.list("resourcequotas", name)).get("items") or []
        limits = (await s.client.list("limitranges", name)).get("items") or []
        return kinds.namespace(obj, quotas, limits)
    obj = {"apiVersion": rt.api_version, "kind": rt.kind, **obj}
    return kinds.generic(obj, events)
