"""Rows for the remaining groups: autoscaling (HPA), coordination (Lease) and RBAC bindings.

An HPA's TARGETS cell pairs each metric's current value with its target, `cpu: 20%/50%`, showing
`<unknown>` until the controller has measured something and at most two metrics
(`+ 1 more...`). A Lease shows who holds it, which is how you watch leader election happen:
`kubectl get leases -n kube-system`. Role bindings print their role as `Kind/name` and, wide,
their users, groups and service accounts (`namespace/name`).
Roles and ClusterRoles have no printer in Kubernetes; they get the default NAME / CREATED AT table.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers.columns import AGE, NAME, NONE, Cells, Column, TablePrinter, dig, items, number, wide
from apiserver.printers.duration import translate_timestamp_since

UNKNOWN = "<unknown>"


def _quantity(value: Any) -> str:
    """A resource.Quantity as its string; a missing one prints as Go prints a nil *Quantity."""
    return "<nil>" if value is None else str(value)


def _percent(value: Any) -> str | None:
    return None if value is None else f"{value}%"


def _value_metric(spec: dict[str, Any], status: dict[str, Any] | None) -> str:
    """External and Object metrics: an average value, or a plain value."""
    target = spec.get("target") or {}
    current = (status or {}).get("current") or {}
    if target.get("averageValue") is not None:
        now = UNKNOWN if status is None or current.get("averageValue") is None else current["averageValue"]
        return f"{now}/{target['averageValue']} (avg)"
    now = UNKNOWN if status is None else _quantity(current.get("value"))
    return f"{now}/{_quantity(target.get('value'))}"


def _resource_metric(spec: dict[str, Any], status: dict[str, Any] | None) -> str:
    """Resource and ContainerResource metrics: `cpu: 20%/50%` or `memory: 100Mi/200Mi`."""
    name = spec.get("name", "")
    target = spec.get("target") or {}
    current = (status or {}).get("current") or {}
    if target.get("averageValue") is not None:
        now = UNKNOWN if status is None else _quantity(current.get("averageValue"))
        return f"{name}: {now}/{target['averageValue']}"
    now = (_percent(current.get("averageUtilization")) if status is not None else None) or UNKNOWN
    wanted = _percent(target.get("averageUtilization")) or "<auto>"
    return f"{name}: {now}/{wanted}"


_SOURCE_FIELD = {
    "External": "external",
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "ContainerResource": "containerResource",
}


def format_hpa_metrics(hpa: dict[str, Any], limit: int = 2) -> str:
    specs = items(hpa, "spec", "metrics")
    statuses = items(hpa, "status", "currentMetrics")
    if not specs and dig(hpa, "spec", "targetCPUUtilizationPercentage") is not None:
        # autoscaling/v1 spells its single CPU metric as two fields.
        cpu = dig(hpa, "status", "currentCPUUtilizationPercentage")
        now = UNKNOWN if cpu is None else f"{cpu}%"
        return f"cpu: {now}/{hpa['spec']['targetCPUUtilizationPercentage']}%"
    if not specs:
        return NONE
    shown = []
    for index, spec in enumerate(specs):
        kind = spec.get("type", "")
        field = _SOURCE_FIELD.get(kind)
        if field is None:
            shown.append("<unknown type>")
            continue
        source = spec.get(field) or {}
        status = statuses[index].get(field) if index < len(statuses) else None
        if kind in ("Resource", "ContainerResource"):
            shown.append(_resource_metric(source, status))
        elif kind == "Pods":
            now = UNKNOWN if status is None else _quantity(dig(status, "current", "averageValue"))
            shown.append(f"{now}/{_quantity(dig(source, 'target', 'averageValue'))}")
        else:
            shown.append(_value_metric(source, status))
    text = ", ".join(shown[:limit])
    return f"{text} + {len(shown) - limit} more..." if len(shown) > limit else text


def hpa_cells(hpa: dict[str, Any], now: datetime) -> Cells:
    target = dig(hpa, "spec", "scaleTargetRef", default={})
    min_replicas = dig(hpa, "spec", "minReplicas")
    return [
        dig(hpa, "metadata", "name", default=""),
        f"{target.get('kind', '')}/{target.get('name', '')}",
        format_hpa_metrics(hpa),
        "<unset>" if min_replicas is None else str(min_replicas),
        number(hpa, "spec", "maxReplicas"),
        number(hpa, "status", "currentReplicas"),
        translate_timestamp_since(dig(hpa, "metadata", "creationTimestamp"), now),
    ]


def api_service_cells(svc: dict[str, Any], now: datetime) -> Cells:
    """kube-aggregator's columns: the backing Service ("Local" when the API server serves the
    group itself) and Available, with the reason when it is not True."""
    ref = dig(svc, "spec", "service")
    service = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if isinstance(ref, dict) else "Local"
    available = "Unknown"
    for cond in items(svc, "status", "conditions"):
        if cond.get("type") == "Available":
            status = str(cond.get("status", "Unknown"))
            available = status if status == "True" else f"{status} ({cond.get('reason', '')})"
    return [
        dig(svc, "metadata", "name", default=""),
        service,
        available,
        translate_timestamp_since(dig(svc, "metadata", "creationTimestamp"), now),
    ]


def lease_cells(lease: dict[str, Any], now: datetime) -> Cells:
    return [
        dig(lease, "metadata", "name", default=""),
        dig(lease, "spec", "holderIdentity", default=""),
        translate_timestamp_since(dig(lease, "metadata", "creationTimestamp"), now),
    ]


def binding_cells(binding: dict[str, Any], now: datetime) -> Cells:
    users: list[str] = []
    groups: list[str] = []
    service_accounts: list[str] = []
    for subject in items(binding, "subjects"):
        kind = subject.get("kind")
        if kind == "ServiceAccount":
            service_accounts.append(f"{subject.get('namespace', '')}/{subject.get('name', '')}")
        elif kind == "User":
            users.append(subject.get("name", ""))
        elif kind == "Group":
            groups.append(subject.get("name", ""))
    role = binding.get("roleRef") or {}
    return [
        dig(binding, "metadata", "name", default=""),
        f"{role.get('kind', '')}/{role.get('name', '')}",
        translate_timestamp_since(dig(binding, "metadata", "creationTimestamp"), now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(service_accounts),
    ]


def _binding_columns(kind: str) -> tuple[Column, ...]:
    return (
        NAME,
        Column(
            "Role",
            description="RoleRef can reference a Role in the current namespace or a ClusterRole "
            "in the global namespace.",
        ),
        AGE,
        wide("Users", f"Users in the {kind}"),
        wide("Groups", f"Groups in the {kind}"),
        wide("ServiceAccounts", f"ServiceAccounts in the {kind}"),
    )


PRINTERS = {
    "apiservices.apiregistration.k8s.io": TablePrinter(
        (
            NAME,
            Column("Service", description="The backing service for this API group."),
            Column("Available", description="Whether this service is available."),
            AGE,
        ),
        api_service_cells,
    ),
    "horizontalpodautoscalers.autoscaling": TablePrinter(
        (
            NAME,
            Column("Reference", description="scaleTargetRef points to the target resource to scale."),
            Column(
                "Targets",
                description="metrics contains the specifications for which to use to calculate "
                "the desired replica count.",
            ),
            Column("MinPods", description="minReplicas is the lower limit for the number of replicas."),
            Column("MaxPods", description="maxReplicas is the upper limit for the number of replicas."),
            Column(
                "Replicas",
                description="currentReplicas is current number of replicas of pods managed by "
                "this autoscaler.",
            ),
            AGE,
        ),
        hpa_cells,
    ),
    "leases.coordination.k8s.io": TablePrinter(
        (
            NAME,
            Column(
                "Holder", description="holderIdentity contains the identity of the holder of a current lease."
            ),
            AGE,
        ),
        lease_cells,
    ),
    "rolebindings.rbac.authorization.k8s.io": TablePrinter(_binding_columns("roleBinding"), binding_cells),
    "clusterrolebindings.rbac.authorization.k8s.io": TablePrinter(
        _binding_columns("clusterRoleBinding"), binding_cells
    ),
}
