"""Resource quantities in their canonical form, as Kubernetes stores and shows them.

Kubernetes keeps a quantity as a number, not as the text it was given, and writes it back in one
form: `cpu: 0.5` comes back as `500m`, `memory: 1024Mi` as `1Gi`, `cpu: 2` (a JSON number) as
the string `"2"`. `kubectl get -o yaml`, `describe` and every client then read one spelling, and
two requests that mean the same amount compare equal. So the API server rewrites every quantity
field of what it stores (`api.quantity` parses and prints them); a value that does not parse is
left as written for validation to refuse with Kubernetes' message.

The fields: containers' `resources.requests/limits` and the pod's `overhead` (in pods and in the
pod templates of every workload), ResourceQuota `spec.hard`, LimitRange limits, claims' and
volumes' storage, a Node's `capacity`/`allocatable`, and an HPA's metric targets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from api.quantity import QuantityError, parse_quantity

Obj = dict[str, Any]


def canonical_list(resources: Any) -> None:
    """Rewrite each value of a ResourceList (name -> quantity) in place."""
    if not isinstance(resources, dict):
        return
    for name, value in resources.items():
        resources[name] = canonical(value)


def canonical(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return value
    try:
        return str(parse_quantity(value))
    except (QuantityError, ValueError, ArithmeticError):
        return value


def _dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _items(value: Any) -> Iterator[Obj]:
    return (item for item in (value if isinstance(value, list) else []) if isinstance(item, dict))


def pod_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in _items(spec.get(field)):
            resources = container.get("resources")
            if isinstance(resources, dict):
                canonical_list(resources.get("requests"))
                canonical_list(resources.get("limits"))
    canonical_list(spec.get("overhead"))


def _claim_spec(spec: Any) -> None:
    resources = _dig(spec, "resources")
    if isinstance(resources, dict):
        canonical_list(resources.get("requests"))
        canonical_list(resources.get("limits"))


def _workload(obj: Obj) -> None:
    pod_spec(_dig(obj, "spec", "template", "spec"))
    for claim in _items(_dig(obj, "spec", "volumeClaimTemplates")):  # StatefulSets
        _claim_spec(claim.get("spec"))


def _limit_range(obj: Obj) -> None:
    for item in _items(_dig(obj, "spec", "limits")):
        for field in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            canonical_list(item.get(field))


def _hpa(obj: Obj) -> None:
    for metric in _items(_dig(obj, "spec", "metrics")):
        for source in metric.values():
            target = _dig(source, "target")
            if isinstance(target, dict):
                for field in ("value", "averageValue"):
                    if field in target:
                        target[field] = canonical(target[field])


def _node(obj: Obj) -> None:
    canonical_list(_dig(obj, "status", "capacity"))
    canonical_list(_dig(obj, "status", "allocatable"))


CANONICALIZERS: dict[str, Callable[[Obj], None]] = {
    "pods": lambda o: pod_spec(o.get("spec")),
    "podtemplates": lambda o: pod_spec(_dig(o, "template", "spec")),
    "replicationcontrollers": _workload,
    "replicasets.apps": _workload,
    "deployments.apps": _workload,
    "daemonsets.apps": _workload,
    "statefulsets.apps": _workload,
    "jobs.batch": _workload,
    "cronjobs.batch": lambda o: pod_spec(_dig(o, "spec", "jobTemplate", "spec", "template", "spec")),
    "resourcequotas": lambda o: canonical_list(_dig(o, "spec", "hard")),
    "limitranges": _limit_range,
    "persistentvolumeclaims": lambda o: _claim_spec(o.get("spec")),
    "persistentvolumes": lambda o: canonical_list(_dig(o, "spec", "capacity")),
    "nodes": _node,
    "horizontalpodautoscalers.autoscaling": _hpa,
}


def canonicalize(resource: str, obj: Obj) -> None:
    """Every quantity field of `obj` (a `resource` object) in canonical form, in place."""
    rewrite = CANONICALIZERS.get(resource)
    if rewrite is not None:
        rewrite(obj)
