"""autoscaling/v1 <-> autoscaling/v2 HorizontalPodAutoscalers: the conversion itself (hpa_v1.py serves it).

Why: Kubernetes stores one HPA and serves it in every version it knows. v1 has a single metric,
`spec.targetCPUUtilizationPercentage`, which is v2's `Resource` metric `cpu` with an
`averageUtilization` target; status carries `currentCPUUtilizationPercentage`. `kubectl autoscale`
(1.32) still POSTs autoscaling/v1, so this is what makes it work. What v1 cannot say (the other
metrics, `behavior`, the current metrics, the conditions) must survive a v1 client that GETs an HPA
and PUTs it back, so Kubernetes (pkg/apis/autoscaling/v1/conversion.go) carries it in annotations
of the v1 view, as compact JSON:

    autoscaling.alpha.kubernetes.io/metrics          spec.metrics but the CPU averageUtilization
                                                     one (a CPU averageValue target goes in here),
                                                     as v1 MetricSpecs: {"type": "Resource",
                                                     "resource": {"name": "memory",
                                                     "targetAverageValue": "100Mi"}}, ...
    autoscaling.alpha.kubernetes.io/behavior         spec.behavior with Go's field names
                                                     ({"ScaleUp": {"StabilizationWindowSeconds":
                                                     0, "SelectPolicy": "Max", "Policies": ...}})
    autoscaling.alpha.kubernetes.io/current-metrics  all of status.currentMetrics (CPU too), as
                                                     v1 MetricStatuses
    autoscaling.alpha.kubernetes.io/conditions       status.conditions

v1 -> v2 reads them back (the metrics they hold first, the CPU target last) and drops them: they
are never stored. One that is not JSON of the right shape is ignored and dropped, as Kubernetes
does. Annotations of those names already on the object are replaced, never shown as they were.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

Obj = dict[str, Any]
T = TypeVar("T")
V1, V2 = "autoscaling/v1", "autoscaling/v2"
METRICS = "autoscaling.alpha.kubernetes.io/metrics"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
ROUND_TRIP = (METRICS, BEHAVIOR, CURRENT_METRICS, CONDITIONS)


class _Unreadable(ValueError):
    """JSON that does not have the shape of what it stands for (a list where a map belongs...)."""


def _map(value: Any) -> Obj:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Unreadable(value)
    return value


def _maps(value: Any) -> list[Obj]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Unreadable(value)
    return [_map(item) for item in value]


def _dict(value: Any) -> Obj:
    """`value` if it is an object, else an empty one (for what validation has already seen)."""
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _set(fields: Obj) -> Obj:
    """The fields that have a value: Go's `omitempty`."""
    return {k: v for k, v in fields.items() if v is not None}


def _zero(quantity: Any) -> Any:
    """A Quantity v1 always writes (no `omitempty`): "0" when unset."""
    return "0" if quantity is None else quantity


def _ref(value: Any) -> Obj:
    """A CrossVersionObjectReference: the same in both versions."""
    ref = _map(value)
    return _set({"kind": ref.get("kind", ""), "name": ref.get("name", ""), "apiVersion": ref.get("apiVersion")})


def _metric_id(name: Any, selector: Any) -> Obj:
    """v2's MetricIdentifier from v1's `metricName` and selector."""
    return _set({"name": "" if name is None else name, "selector": selector})


# --- metric sources: v2 -> v1 (the annotation's shape) and back ------------------------------------

Convert = Callable[[Obj], Obj]


def _object_v1(src: Obj) -> Obj:
    target, metric = _map(src.get("target")), _map(src.get("metric"))
    return _set({"target": _ref(src.get("describedObject")), "metricName": metric.get("name", ""),
                 "targetValue": _zero(target.get("value")), "selector": metric.get("selector"),
                 "averageValue": target.get("averageValue")})  # fmt: skip


def _pods_v1(src: Obj) -> Obj:
    target, metric = _map(src.get("target")), _map(src.get("metric"))
    return _set({"metricName": metric.get("name", ""), "targetAverageValue": _zero(target.get("averageValue")),
                 "selector": metric.get("selector")})  # fmt: skip


def _resource_v1(src: Obj) -> Obj:
    target = _map(src.get("target"))
    return _set({"name": src.get("name", ""), "targetAverageUtilization": target.get("averageUtilization"),
                 "targetAverageValue": target.get("averageValue")})  # fmt: skip


def _container_resource_v1(src: Obj) -> Obj:
    return {**_resource_v1(src), "container": src.get("container", "")}


def _external_v1(src: Obj) -> Obj:
    target, metric = _map(src.get("target")), _map(src.get("metric"))
    return _set({"metricName": metric.get("name", ""), "metricSelector": metric.get("selector"),
                 "targetValue": target.get("value"), "targetAverageValue": target.get("averageValue")})  # fmt: skip


def _object_v2(src: Obj) -> Obj:
    average = src.get("averageValue")
    value = src.get("targetValue") if average is None else None  # Kubernetes also writes "0" here
    target = _set({"type": "Value" if average is None else "AverageValue", "value": value, "averageValue": average})
    return {"describedObject": _ref(src.get("target")), "target": target,
            "metric": _metric_id(src.get("metricName"), src.get("selector"))}  # fmt: skip


def _pods_v2(src: Obj) -> Obj:
    return {"metric": _metric_id(src.get("metricName"), src.get("selector")),
            "target": {"type": "AverageValue", "averageValue": _zero(src.get("targetAverageValue"))}}  # fmt: skip


def _resource_v2(src: Obj) -> Obj:
    utilization = src.get("targetAverageUtilization")
    target = _set({"type": "AverageValue" if utilization is None else "Utilization",
                   "averageValue": src.get("targetAverageValue"), "averageUtilization": utilization})  # fmt: skip
    return {"name": src.get("name", ""), "target": target}


def _container_resource_v2(src: Obj) -> Obj:
    return {**_resource_v2(src), "container": src.get("container", "")}


def _external_v2(src: Obj) -> Obj:
    value = src.get("targetValue")
    target = _set({"type": "AverageValue" if value is None else "Value", "value": value,
                   "averageValue": src.get("targetAverageValue")})  # fmt: skip
    return {"metric": _metric_id(src.get("metricName"), src.get("metricSelector")), "target": target}


# --- metric statuses: the same, for status.currentMetrics -------------------------------------------


def _object_status_v1(src: Obj) -> Obj:
    current, metric = _map(src.get("current")), _map(src.get("metric"))
    return _set({"target": _ref(src.get("describedObject")), "metricName": metric.get("name", ""),
                 "currentValue": _zero(current.get("value")), "selector": metric.get("selector"),
                 "averageValue": current.get("averageValue")})  # fmt: skip


def _pods_status_v1(src: Obj) -> Obj:
    current, metric = _map(src.get("current")), _map(src.get("metric"))
    return _set({"metricName": metric.get("name", ""), "currentAverageValue": _zero(current.get("averageValue")),
                 "selector": metric.get("selector")})  # fmt: skip


def _resource_status_v1(src: Obj) -> Obj:
    current = _map(src.get("current"))
    return _set({"name": src.get("name", ""), "currentAverageUtilization": current.get("averageUtilization"),
                 "currentAverageValue": _zero(current.get("averageValue"))})  # fmt: skip


def _container_resource_status_v1(src: Obj) -> Obj:
    return {**_resource_status_v1(src), "container": src.get("container", "")}


def _external_status_v1(src: Obj) -> Obj:
    current, metric = _map(src.get("current")), _map(src.get("metric"))
    return _set({"metricName": metric.get("name", ""), "metricSelector": metric.get("selector"),
                 "currentValue": _zero(current.get("value")),
                 "currentAverageValue": current.get("averageValue")})  # fmt: skip


def _object_status_v2(src: Obj) -> Obj:
    current = _set({"value": _zero(src.get("currentValue")), "averageValue": src.get("averageValue")})
    return {"metric": _metric_id(src.get("metricName"), src.get("selector")), "current": current,
            "describedObject": _ref(src.get("target"))}  # fmt: skip


def _pods_status_v2(src: Obj) -> Obj:
    return {"metric": _metric_id(src.get("metricName"), src.get("selector")),
            "current": {"averageValue": _zero(src.get("currentAverageValue"))}}  # fmt: skip


def _resource_status_v2(src: Obj) -> Obj:
    current = _set({"averageValue": _zero(src.get("currentAverageValue")),
                    "averageUtilization": src.get("currentAverageUtilization")})  # fmt: skip
    return {"name": src.get("name", ""), "current": current}


def _container_resource_status_v2(src: Obj) -> Obj:
    return {**_resource_status_v2(src), "container": src.get("container", "")}


def _external_status_v2(src: Obj) -> Obj:
    current = _set({"value": _zero(src.get("currentValue")), "averageValue": src.get("currentAverageValue")})
    return {"metric": _metric_id(src.get("metricName"), src.get("metricSelector")), "current": current}


SPEC_TO_V1: dict[str, Convert] = {"object": _object_v1, "pods": _pods_v1, "resource": _resource_v1,
                                  "containerResource": _container_resource_v1, "external": _external_v1}  # fmt: skip
SPEC_TO_V2: dict[str, Convert] = {"object": _object_v2, "pods": _pods_v2, "resource": _resource_v2,
                                  "containerResource": _container_resource_v2, "external": _external_v2}  # fmt: skip
STATUS_TO_V1: dict[str, Convert] = {
    "object": _object_status_v1, "pods": _pods_status_v1, "resource": _resource_status_v1,
    "containerResource": _container_resource_status_v1, "external": _external_status_v1}  # fmt: skip
STATUS_TO_V2: dict[str, Convert] = {
    "object": _object_status_v2, "pods": _pods_status_v2, "resource": _resource_status_v2,
    "containerResource": _container_resource_status_v2, "external": _external_status_v2}  # fmt: skip


def _metric(metric: Obj, sources: dict[str, Convert]) -> Obj:
    """A MetricSpec or MetricStatus with each of its sources converted; `type` is the same in both."""
    out: Obj = {"type": metric.get("type", "")}
    for field, convert in sources.items():
        if metric.get(field) is not None:
            out[field] = convert(_map(metric[field]))
    return out


# --- behavior: Kubernetes writes its internal type, which has no JSON names but Go's ----------------


def _go_field(obj: Obj, name: str) -> Any:
    """Field `name` of `obj` as Go's encoding/json finds it: the exact key, else one equal but for case."""
    if name in obj:
        return obj[name]
    return next((value for key, value in obj.items() if key.lower() == name.lower()), None)


def _go_policy(policy: Obj) -> Obj:
    return {"Type": policy.get("type", ""), "Value": policy.get("value", 0),
            "PeriodSeconds": policy.get("periodSeconds", 0)}  # fmt: skip


def _go_rules(value: Any) -> Obj | None:
    if value is None:
        return None
    rules = _map(value)
    policies = rules.get("policies")
    out = {"StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds"),
           "SelectPolicy": rules.get("selectPolicy"),
           "Policies": None if policies is None else [_go_policy(p) for p in _maps(policies)]}  # fmt: skip
    return out | _set({"Tolerance": rules.get("tolerance")})  # a newer field: written only when set


def _go_behavior(behavior: Obj) -> Obj:
    return {"ScaleUp": _go_rules(behavior.get("scaleUp")), "ScaleDown": _go_rules(behavior.get("scaleDown"))}


def _policy_v2(policy: Obj) -> Obj:
    return _set({"type": _go_field(policy, "Type"), "value": _go_field(policy, "Value"),
                 "periodSeconds": _go_field(policy, "PeriodSeconds")})  # fmt: skip


def _rules_v2(rules: Obj) -> Obj:
    out = _set({"stabilizationWindowSeconds": _go_field(rules, "StabilizationWindowSeconds"),
                "selectPolicy": _go_field(rules, "SelectPolicy"),
                "tolerance": _go_field(rules, "Tolerance")})  # fmt: skip
    policies = _go_field(rules, "Policies")
    if policies is not None:
        out["policies"] = [_policy_v2(p) for p in _maps(policies)]
    return out


def _behavior_v2(value: Any) -> Obj | None:
    """The v2 `behavior` the annotation holds; None if it sets neither direction (Kubernetes' test)."""
    behavior = _map(value)
    directions = {ours: _go_field(behavior, go) for ours, go in (("scaleUp", "ScaleUp"), ("scaleDown", "ScaleDown"))}
    out = {ours: _rules_v2(_map(rules)) for ours, rules in directions.items() if rules is not None}
    return out or None  # given, the API server's v2 defaults fill in the rest


# --- conditions -----------------------------------------------------------------------------------


def _condition_v1(condition: Obj) -> Obj:
    optional = {"reason": condition.get("reason") or None, "message": condition.get("message") or None}
    return {"type": condition.get("type", ""), "status": condition.get("status", ""),
            "lastTransitionTime": condition.get("lastTransitionTime"),  # Go writes a zero time as null
            **_set(optional)}  # fmt: skip


def _condition_v2(condition: Obj) -> Obj:
    fields = ("type", "status", "lastTransitionTime", "reason", "message")
    return {k: condition[k] for k in fields if condition.get(k) not in (None, "")}


# --- the annotations --------------------------------------------------------------------------------


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)  # as Go's json.Marshal


def _cpu(metric: Any) -> Obj | None:
    """The `resource` of a Resource metric (spec or status) for cpu, else None."""
    if not isinstance(metric, dict) or metric.get("type") != "Resource":
        return None
    resource = metric.get("resource")
    return resource if isinstance(resource, dict) and resource.get("name") == "cpu" else None


def _cpu_utilization(metric: Any) -> Any:
    """The percentage v1's targetCPUUtilizationPercentage says, if `metric` is that one: Kubernetes
    takes a cpu Resource metric whose target has an averageUtilization."""
    target = (_cpu(metric) or {}).get("target")
    return target.get("averageUtilization") if isinstance(target, dict) else None


def _annotations_for(spec: Obj, status: Obj) -> dict[str, str]:
    """What v1 cannot say of a stored v2 HPA's `spec` and `status`, as the annotations Kubernetes writes."""
    behavior = spec.get("behavior")
    build: dict[str, Callable[[], Any]] = {
        METRICS: lambda: [_metric(m, SPEC_TO_V1) for m in _maps(spec.get("metrics")) if _cpu_utilization(m) is None],
        BEHAVIOR: lambda: None if behavior is None else _go_behavior(_map(behavior)),
        CURRENT_METRICS: lambda: [_metric(m, STATUS_TO_V1) for m in _maps(status.get("currentMetrics"))],
        CONDITIONS: lambda: [_condition_v1(c) for c in _maps(status.get("conditions"))],
    }
    out: dict[str, str] = {}
    for key, value in build.items():
        try:
            encoded = value()
        except _Unreadable:  # not what validation lets through: nothing to show
            continue
        if encoded:
            out[key] = _dump(encoded)
    return out


def _read(annotations: Obj, key: str, parse: Callable[[Any], T]) -> T | None:
    """Annotation `key` read back; None if absent, or not JSON of the right shape (Kubernetes ignores it)."""
    text = annotations.get(key)
    if not isinstance(text, str):
        return None
    try:
        return parse(json.loads(text))
    except (ValueError, RecursionError):
        return None


def _metrics_v2(value: Any) -> list[Obj]:
    return [_metric(m, SPEC_TO_V2) for m in _maps(value)]


def _metric_statuses_v2(value: Any) -> list[Obj]:
    return [_metric(m, STATUS_TO_V2) for m in _maps(value)]


def _conditions_v2(value: Any) -> list[Obj]:
    return [_condition_v2(c) for c in _maps(value)]


def _with_annotations(metadata: Obj, extra: dict[str, str]) -> Obj:
    """`metadata` with the round-trip annotations it has dropped and `extra` added."""
    current = metadata.get("annotations")
    if current is not None and not isinstance(current, dict):
        return metadata  # not annotations at all: validation says so
    annotations = {k: v for k, v in (current or {}).items() if k not in ROUND_TRIP} | extra
    out = dict(metadata)
    if annotations:
        out["annotations"] = annotations
    else:
        out.pop("annotations", None)
    return out


# --- whole objects ----------------------------------------------------------------------------------


def _spec_v2(spec: Obj, annotations: Obj) -> Obj:
    v1_only = ("targetCPUUtilizationPercentage", "metrics", "behavior")  # the last two: not v1 fields
    out = {k: v for k, v in spec.items() if k not in v1_only}
    metrics = _read(annotations, METRICS, _metrics_v2) or []
    cpu = spec.get("targetCPUUtilizationPercentage")
    if cpu is not None:
        metrics.append({"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}})
    if metrics:
        out["metrics"] = metrics
    behavior = _read(annotations, BEHAVIOR, _behavior_v2)
    if behavior is not None:
        out["behavior"] = behavior
    return out


def _status_v2(status: Any, annotations: Obj) -> Any:
    current = _read(annotations, CURRENT_METRICS, _metric_statuses_v2)
    conditions = _read(annotations, CONDITIONS, _conditions_v2)
    if status is not None and not isinstance(status, dict):
        return status  # not an object: validation says so
    if status is None and current is None and conditions is None:
        return None
    src = status or {}
    out = {k: v for k, v in src.items() if k not in ("currentCPUUtilizationPercentage", "currentMetrics", "conditions")}
    cpu = src.get("currentCPUUtilizationPercentage")
    if current is None and cpu is not None:  # else the annotation's, which has the CPU's raw value too
        current = [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": cpu}}}]
    if current:
        out["currentMetrics"] = current
    if conditions:
        out["conditions"] = conditions
    return out


def to_v2(obj: Obj) -> Obj:
    """A v1 HPA as autoscaling/v2 (what is stored): the annotations read back into fields, then dropped."""
    metadata = obj.get("metadata")
    annotations = _dict(_dict(metadata).get("annotations"))
    out = {k: v for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = V2
    if isinstance(metadata, dict):
        out["metadata"] = _with_annotations(metadata, {})
    out["spec"] = _spec_v2(_dict(obj.get("spec")), annotations)
    status = _status_v2(obj.get("status"), annotations)
    if status is not None:
        out["status"] = status
    return out


def _spec_v1(spec: Obj) -> Obj:
    out = {k: v for k, v in spec.items() if k not in ("metrics", "behavior")}
    cpu = next((p for p in map(_cpu_utilization, _list(spec.get("metrics"))) if p is not None), None)
    if cpu is not None:
        out["targetCPUUtilizationPercentage"] = cpu
    return out


def _status_v1(status: Obj) -> Obj:
    out = {k: v for k, v in status.items() if k not in ("currentMetrics", "conditions")}
    for metric in _list(status.get("currentMetrics")):
        current = (_cpu(metric) or {}).get("current")
        value = current.get("averageUtilization") if isinstance(current, dict) else None
        if value is not None:
            out["currentCPUUtilizationPercentage"] = value  # the last one, as Kubernetes
    return out


def to_v1(obj: Obj) -> Obj:
    """A stored v2 HPA as autoscaling/v1: the CPU utilization target, the rest in annotations."""
    if obj.get("kind") != "HorizontalPodAutoscaler":
        return obj
    spec, status = _dict(obj.get("spec")), _dict(obj.get("status"))
    out = {k: v for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = V1
    if isinstance(obj.get("metadata"), dict):
        out["metadata"] = _with_annotations(obj["metadata"], _annotations_for(spec, status))
    out["spec"] = _spec_v1(spec)
    if "status" in obj:
        out["status"] = _status_v1(status)
    return out
