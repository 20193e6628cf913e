"""LimitRange rules as pure functions: the defaults it fills in and the bounds it enforces.

`item_defaults` is Kubernetes' defaulting of a Container item (applied when the LimitRange is
stored, so `kubectl get limits -o yaml` shows it): a missing `default` limit is the `max`, a missing
`defaultRequest` is the `default`, else the `min`. `fill_container_defaults` is what the
LimitRanger admission plugin does to a pod, and `violations` what it refuses, in Kubernetes' words:

    minimum cpu usage per Container is 100m, but request is 50m
    maximum memory usage per Container is 1Gi, but limit is 2Gi
    maximum cpu usage per Container is 1.  No limit is specified
    cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.quantity import Quantity, parse_quantity

Obj = dict[str, Any]


def item_defaults(item: Obj) -> None:
    """Kubernetes' SetDefaults_LimitRangeItem, in place."""
    if item.get("type") != "Container":
        return
    default = item.setdefault("default", {})
    request = item.setdefault("defaultRequest", {})
    for name, value in (item.get("max") or {}).items():
        default.setdefault(name, value)
    for name, value in default.items():
        request.setdefault(name, value)
    for name, value in (item.get("min") or {}).items():
        request.setdefault(name, value)


def _all_containers(pod: Obj) -> list[tuple[str, Obj]]:
    spec = pod.get("spec") or {}
    return [("init container", c) for c in spec.get("initContainers") or []] + [
        ("container", c) for c in spec.get("containers") or []]


def fill_container_defaults(pod: Obj, items: list[Obj]) -> str | None:
    """Give each container the defaults it lacks; returns the pod annotation's text, or None."""
    notes: list[str] = []
    for item in items:
        if item.get("type") != "Container":
            continue
        item = {**item}
        item_defaults(item)
        for kind, container in _all_containers(pod):
            resources = container.setdefault("resources", {})
            set_requests, set_limits = [], []
            for name, value in (item.get("default") or {}).items():
                if name not in (resources.get("limits") or {}):
                    resources.setdefault("limits", {})[name] = value
                    set_limits.append(name)
            for name, value in (item.get("defaultRequest") or {}).items():
                if name not in (resources.get("requests") or {}):
                    resources.setdefault("requests", {})[name] = value
                    set_requests.append(name)
            if set_requests:
                notes.append(f"{', '.join(sorted(set_requests))} request for {kind} {container.get('name', '')}")
            if set_limits:
                notes.append(f"{', '.join(sorted(set_limits))} limit for {kind} {container.get('name', '')}")
            if not resources:
                container.pop("resources")
    return f"LimitRanger plugin set: {'; '.join(notes)}" if notes else None


def _bounds(kind: str, item: Obj, requests: Mapping[str, Any], limits: Mapping[str, Any]) -> list[str]:
    errs: list[str] = []
    req = {name: parse_quantity(v) for name, v in requests.items()}
    lim = {name: parse_quantity(v) for name, v in limits.items()}
    for name, bound in (item.get("min") or {}).items():
        enforced = parse_quantity(bound)
        head = f"minimum {name} usage per {kind} is {enforced}"
        if name not in req:
            errs.append(f"{head}.  No request is specified")
        elif req[name] < enforced:
            errs.append(f"{head}, but request is {req[name]}")
        elif name in lim and lim[name] < enforced:
            errs.append(f"{head}, but limit is {lim[name]}")
    for name, bound in (item.get("max") or {}).items():
        enforced = parse_quantity(bound)
        head = f"maximum {name} usage per {kind} is {enforced}"
        if name not in lim:
            errs.append(f"{head}.  No limit is specified")
        elif lim[name] > enforced:
            errs.append(f"{head}, but limit is {lim[name]}")
        elif name in req and req[name] > enforced:
            errs.append(f"{head}, but request is {req[name]}")
    for name, bound in (item.get("maxLimitRequestRatio") or {}).items():
        enforced = parse_quantity(bound)
        request, limit = req.get(name, Quantity(0)), lim.get(name, Quantity(0))
        head = f"{name} max limit to request ratio per {kind} is {enforced}"
        if request.is_zero():
            errs.append(f"{head}, but no request is specified or request is 0")
        elif limit.is_zero():
            errs.append(f"{head}, but no limit is specified or limit is 0")
        elif limit.as_decimal() / request.as_decimal() > enforced.as_decimal():
            errs.append(f"{head}, but provided ratio is {float(limit.as_decimal() / request.as_decimal()):f}")
    return errs


def _pod_total(pod: Obj, field: str) -> dict[str, Quantity]:
    total: dict[str, Quantity] = {}
    for _, c in _all_containers(pod):
        for name, value in ((c.get("resources") or {}).get(field) or {}).items():
            total[name] = total.get(name, Quantity(0)) + parse_quantity(value)
    return total


def violations(resource_key: str, obj: Obj, items: list[Obj]) -> list[str]:
    """Every bound of `items` that `obj` (a pod or a claim) breaks."""
    errs: list[str] = []
    for item in items:
        kind = item.get("type")
        if resource_key == "pods" and kind == "Container":
            for _, c in _all_containers(obj):
                resources = c.get("resources") or {}
                errs += _bounds("Container", item, resources.get("requests") or {}, resources.get("limits") or {})
        elif resource_key == "pods" and kind == "Pod":
            errs += _bounds("Pod", item, _pod_total(obj, "requests"), _pod_total(obj, "limits"))
        elif resource_key == "persistentvolumeclaims" and kind == "PersistentVolumeClaim":
            errs += _claim_bounds(item, ((obj.get("spec") or {}).get("resources") or {}).get("requests") or {})
    return errs


def _claim_bounds(item: Obj, requests: Mapping[str, Any]) -> list[str]:
    """A claim has no limit: both bounds apply to its request."""
    errs: list[str] = []
    for name, value in requests.items():
        asked = parse_quantity(value)
        low, high = (item.get("min") or {}).get(name), (item.get("max") or {}).get(name)
        per = f"{name} usage per PersistentVolumeClaim is"
        if low is not None and asked < parse_quantity(low):
            errs.append(f"minimum {per} {parse_quantity(low)}, but request is {asked}")
        if high is not None and asked > parse_quantity(high):
            errs.append(f"maximum {per} {parse_quantity(high)}, but request is {asked}")
    return errs
