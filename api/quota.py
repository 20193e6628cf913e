"""What an object costs against a ResourceQuota: Kubernetes' quota evaluators, as pure functions.

Both the API server's ResourceQuota admission (which charges a quota before an object is stored)
and the resourcequota controller (which recounts what really exists) use these, so the two agree
on every number. The resource names are Kubernetes':

    pods, services, configmaps, secrets, replicationcontrollers, resourcequotas,
    persistentvolumeclaims                          one per object (pods: only while not finished)
    count/<plural>[.<group>]                        one per object of that kind (count/deployments.apps)
    requests.cpu, requests.memory (cpu, memory)     the pod's requests: sum of its containers, or an
    limits.cpu, limits.memory                       init container's if larger (as the scheduler counts)
    services.nodeports, services.loadbalancers      per Service of that type
    requests.storage                                a claim's requested size

Scopes restrict a quota to some pods: BestEffort / NotBestEffort (QoS), Terminating /
NotTerminating (activeDeadlineSeconds set or not), PriorityClass (scopeSelector on the pod's
priorityClassName). A scoped quota counts pods only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from api.quantity import Quantity, parse_quantity

Obj = Mapping[str, Any]

# Object counts with a legacy name, by resource key (api.registry's ResourceType.key).
LEGACY_COUNTS = {
    "pods": "pods", "services": "services", "configmaps": "configmaps", "secrets": "secrets",
    "replicationcontrollers": "replicationcontrollers", "resourcequotas": "resourcequotas",
    "persistentvolumeclaims": "persistentvolumeclaims",
}
# If a quota sets one of these, every container of a pod must state it (Kubernetes' old rule).
MUST_SPECIFY = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")
ONE = Quantity(1)


def pod_is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _containers_total(pod: Obj, field: str) -> dict[str, Quantity]:
    """requests or limits of the pod: its containers' sum, or the largest init container's."""
    spec = pod.get("spec") or {}
    total: dict[str, Quantity] = {}
    for c in spec.get("containers") or []:
        for name, value in ((c.get("resources") or {}).get(field) or {}).items():
            total[name] = total.get(name, Quantity(0)) + parse_quantity(value)
    for c in spec.get("initContainers") or []:
        for name, value in ((c.get("resources") or {}).get(field) or {}).items():
            q = parse_quantity(value)
            if q > total.get(name, Quantity(0)):
                total[name] = q
    return total


def pod_usage(pod: Obj) -> dict[str, Quantity]:
    if pod_is_terminal(pod):
        return {}
    usage: dict[str, Quantity] = {"pods": ONE, "count/pods": ONE}
    requests, limits = _containers_total(pod, "requests"), _containers_total(pod, "limits")
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            usage[f"requests.{name}"] = requests[name]
            if name != "ephemeral-storage":
                usage[name] = requests[name]
        if name in limits:
            usage[f"limits.{name}"] = limits[name]
    return usage


def usage(resource_key: str, obj: Obj) -> dict[str, Quantity]:
    """Every quota resource `obj` (an object of the resource `resource_key`) consumes."""
    if resource_key == "pods":
        return pod_usage(obj)
    out = {f"count/{resource_key}": ONE}
    if resource_key in LEGACY_COUNTS:
        out[LEGACY_COUNTS[resource_key]] = ONE
    spec = obj.get("spec") or {}
    if resource_key == "services":
        kind = spec.get("type") or "ClusterIP"
        if kind in ("NodePort", "LoadBalancer"):  # every port of such a Service takes a node port
            out["services.nodeports"] = Quantity(len(spec.get("ports") or []))
        if kind == "LoadBalancer":
            out["services.loadbalancers"] = ONE
    if resource_key == "persistentvolumeclaims":
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        if storage is not None:
            out["requests.storage"] = parse_quantity(storage)
    return out


def _qos(pod: Obj) -> str:
    for c in (pod.get("spec") or {}).get("containers") or []:
        resources = c.get("resources") or {}
        if resources.get("requests") or resources.get("limits"):
            return "NotBestEffort"
    return "BestEffort"


def _scope_matches(scope: str, pod: Obj, operator: str = "Exists", values: Iterable[str] = ()) -> bool:
    spec = pod.get("spec") or {}
    if scope == "BestEffort":
        return _qos(pod) == "BestEffort"
    if scope == "NotBestEffort":
        return _qos(pod) == "NotBestEffort"
    if scope == "Terminating":
        return spec.get("activeDeadlineSeconds") is not None
    if scope == "NotTerminating":
        return spec.get("activeDeadlineSeconds") is None
    if scope == "PriorityClass":
        name = spec.get("priorityClassName")
        if operator == "Exists":
            return bool(name)
        if operator == "DoesNotExist":
            return not name
        if operator == "In":
            return name in set(values)
        if operator == "NotIn":
            return name not in set(values)
    return False


def quota_covers(quota: Obj, resource_key: str, obj: Obj) -> bool:
    """Does `quota` count `obj` at all (its scopes)? A scoped quota counts pods only."""
    spec = quota.get("spec") or {}
    scopes = list(spec.get("scopes") or [])
    expressions = list((spec.get("scopeSelector") or {}).get("matchExpressions") or [])
    if not scopes and not expressions:
        return True
    if resource_key != "pods":
        return False
    if not all(_scope_matches(s, obj) for s in scopes):
        return False
    return all(_scope_matches(e.get("scopeName", ""), obj, e.get("operator", "Exists"), e.get("values") or [])
               for e in expressions)


def missing_requests_or_limits(pod: Obj, hard: Iterable[str]) -> str | None:
    """`must specify limits.cpu for: app; requests.cpu for: app`, or None when nothing is missing."""
    required = [r for r in MUST_SPECIFY if r in set(hard)]
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        resources = c.get("resources") or {}
        for r in required:
            field, _, name = r.rpartition(".")
            stated = resources.get("limits" if field == "limits" else "requests") or {}
            if (name or r) not in stated:
                missing.setdefault(r, set()).add(str(c.get("name") or ""))
    if not missing:
        return None
    return "must specify " + "; ".join(f"{r} for: {','.join(sorted(missing[r]))}" for r in sorted(missing))


def pretty(resources: Mapping[str, Quantity]) -> str:
    """`limits.cpu=2,pods=1`: Kubernetes' prettyPrint of a ResourceList (sorted by name)."""
    return ",".join(f"{name}={resources[name]}" for name in sorted(resources))
