"""Per-resource behaviour on create and update — Kubernetes calls these "strategies".

Two rules every teaching cluster should show clearly:
- The spec/status split. The main resource (`PUT /pods/x`) is how users say what they want; the
  `/status` subresource is how controllers and kubelets report what is. A write to one never
  changes the other, so a user's `kubectl apply` can never clobber what a kubelet reported.
- `metadata.generation` counts changes to what the user wants (everything but metadata and
  status). Controllers echo it back as `status.observedGeneration` so anyone can tell whether
  the latest spec has been acted on yet. As in Kubernetes 1.32, only the kinds a controller
  reconciles carry it (GENERATION_KINDS): a ConfigMap, Secret, Service or Pod has none.
"""

from __future__ import annotations

from typing import Any

from api.quantity import parse_quantity
from api.registry import ResourceType
from api.timestamps import now_rfc3339
from api.wirejson import clone
from apiserver.objectmeta import new_uid, spec_of

# The kinds whose Kubernetes strategy sets metadata.generation (1 on create, +1 per spec change).
GENERATION_KINDS = frozenset({
    "deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps", "replicationcontrollers",
    "jobs.batch", "cronjobs.batch", "horizontalpodautoscalers.autoscaling", "poddisruptionbudgets.policy",
    "ingresses.networking.k8s.io", "ingressclasses.networking.k8s.io", "networkpolicies.networking.k8s.io",
    "endpointslices.discovery.k8s.io",
})


def has_status(rt: ResourceType) -> bool:
    return "status" in rt.subresources


# ObjectMeta fields Go serialises with `omitempty`: an empty one is the same as an absent one, and
# Kubernetes never shows `ownerReferences: []` (e.g. after a controller released a pod).
_OMIT_WHEN_EMPTY = ("labels", "annotations", "ownerReferences", "finalizers")


def _prune_empty_meta(md: dict[str, Any]) -> None:
    for field in _OMIT_WHEN_EMPTY:
        if field in md and not md[field]:
            del md[field]


def prepare_for_create(rt: ResourceType, obj: dict[str, Any]) -> None:
    md = obj["metadata"]
    _prune_empty_meta(md)
    md["uid"] = new_uid()
    md["creationTimestamp"] = now_rfc3339()
    if rt.key in GENERATION_KINDS:
        md["generation"] = 1
    else:
        md.pop("generation", None)
    for field in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
        md.pop(field, None)
    if rt.key == "pods":
        obj["status"] = {"phase": "Pending", "qosClass": qos_class(obj)}
    elif rt.key == "namespaces":
        obj["status"] = {"phase": "Active"}
    elif rt.key == "services":
        obj["status"] = {"loadBalancer": {}}
    elif rt.key == "nodes":
        pass  # a kubelet registers its node with status already filled in, as in Kubernetes
    elif has_status(rt):
        obj["status"] = {}


def prepare_for_update(
    rt: ResourceType, new: dict[str, Any], old: dict[str, Any], subresource: str | None
) -> dict[str, Any]:
    """Merge what the client may change into the stored object; returns the object to validate."""
    if subresource == "status":
        result = clone(old)
        result["status"] = new.get("status", {})
        return result
    if has_status(rt):
        if "status" in old:
            new["status"] = clone(old["status"])
        else:
            new.pop("status", None)
    md, old_md = new.setdefault("metadata", {}), old["metadata"]
    _prune_empty_meta(md)
    for field in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
        if field in old_md:
            md[field] = old_md[field]
        else:
            md.pop(field, None)
    if rt.key in GENERATION_KINDS and spec_of(new) != spec_of(old):
        md["generation"] = int(old_md.get("generation") or 0) + 1
    return new


def qos_class(pod: dict[str, Any]) -> str:
    """Guaranteed: every container limits = requests for cpu and memory; BestEffort: none set."""
    containers = (pod.get("spec") or {}).get("containers") or []
    any_set, guaranteed = False, True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim:
                guaranteed = False
            elif r in req and _q(req[r]) != _q(lim[r]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _q(v: Any) -> Any:
    try:
        return parse_quantity(v)
    except ValueError:
        return str(v)
