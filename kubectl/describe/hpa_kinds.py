"""`describe hpa`: a HorizontalPodAutoscaler in kubectl 1.32's layout (autoscaling/v2).

    Metrics:                                               ( current / target )
      resource cpu on pods  (as a percentage of request):  62% (124m) / 50%
    Min replicas:                                          1
    Max replicas:                                          3
    Behavior:
      Scale Up:
        Select Policy: Max
        Policies:
          - Type: Pods  Value: 1  Period: 2 seconds
    Deployment pods:    3 current / 3 desired

Each `spec.metrics[i]` is printed with `status.currentMetrics[i]`, matched by position as kubectl
matches them; a current value the controller could not compute (no entry, or the empty `{type: ""}`
Kubernetes writes for a failed metric) is `<unknown>`. A Resource metric's label and its target are
written as two cells of one line, which is where the double space after "on pods" comes from.
Quantities are printed in their canonical form (`0.5` → `500m`), as Go's Quantity.String() does.
The Behavior lines have no tab, so they end the tabwriter's block: the lines after them align
among themselves, hence the narrower "Deployment pods:".

kubectl reads the object as autoscaling/v2 whatever version was asked for. This describer is given
the object as it was fetched: an autoscaling/v1 one (`describe horizontalpodautoscalers.v1.autoscaling`)
is shown with what v1 can say, its CPU target and utilization, so the average value that only v2
carries is missing there ("62% (<nil>)" where kubectl prints "62% (124m)").
"""

from __future__ import annotations

import json
from typing import Any

from api.quantity import QuantityError, parse_quantity
from kubectl.describe.common import annotations_multiline, describe_events, labels_multiline, rfc1123z
from kubectl.describe.writer import LEVEL_0, LEVEL_1, LEVEL_2, LEVEL_3, PrefixWriter

Obj = dict[str, Any]
UNKNOWN = "<unknown>"


def quantity(value: Any) -> str:
    """Go's (*Quantity).String(): canonical, and `<nil>` for a quantity that is not there."""
    if value is None:
        return "<nil>"
    try:
        return str(parse_quantity(value))
    except (QuantityError, TypeError):
        return str(value)


def go_quote(text: str) -> str:
    """Go's %q for a metric name (JSON's escaping agrees for what a name can hold)."""
    return json.dumps(text, ensure_ascii=False)


def _current(statuses: list[Obj], i: int, field: str) -> Obj | None:
    """`status.currentMetrics[i].<field>.current`, if the controller computed it."""
    if len(statuses) <= i or not isinstance(statuses[i].get(field), dict):
        return None
    return statuses[i][field].get("current") or {}


def _resource_lines(w: PrefixWriter, label: str, source: Obj, current: Obj | None) -> None:
    """A Resource or ContainerResource metric: a value target, or a utilization target."""
    target = source.get("target") or {}
    w.write(LEVEL_1, label)
    if target.get("averageValue") is not None:
        now = UNKNOWN if current is None else quantity(current.get("averageValue"))
        w.write(LEVEL_0, f":\t{now} / {quantity(target['averageValue'])}\n")
        return
    now = UNKNOWN
    if current is not None and current.get("averageUtilization") is not None:
        now = f"{current['averageUtilization']}% ({quantity(current.get('averageValue'))})"
    wanted = "<auto>" if target.get("averageUtilization") is None else f"{target['averageUtilization']}%"
    w.write(LEVEL_1, f"(as a percentage of request):\t{now} / {wanted}\n")


def _metric(w: PrefixWriter, metric: Obj, statuses: list[Obj], i: int) -> None:
    kind = metric.get("type") or ""
    if kind == "External":
        source = metric.get("external") or {}
        name, target = go_quote(str((source.get("metric") or {}).get("name") or "")), source.get("target") or {}
        current = _current(statuses, i, "external")
        if target.get("averageValue") is not None:
            now = UNKNOWN if current is None or current.get("averageValue") is None else quantity(
                current["averageValue"])  # fmt: skip
            w.write(LEVEL_1, f"{name} (target average value):\t{now} / {quantity(target['averageValue'])}\n")
        else:
            now = UNKNOWN if current is None else quantity(current.get("value"))
            w.write(LEVEL_1, f"{name} (target value):\t{now} / {quantity(target.get('value'))}\n")
    elif kind == "Pods":
        source = metric.get("pods") or {}
        current = _current(statuses, i, "pods")
        now = UNKNOWN if current is None else quantity(current.get("averageValue"))
        name = go_quote(str((source.get("metric") or {}).get("name") or ""))
        w.write(LEVEL_1, f"{name} on pods:\t{now} / {quantity((source.get('target') or {}).get('averageValue'))}\n")
    elif kind == "Object":
        source = metric.get("object") or {}
        described, target = source.get("describedObject") or {}, source.get("target") or {}
        name = (source.get("metric") or {}).get("name") or ""
        w.write(LEVEL_1, f'"{name}" on {described.get("kind", "")}/{described.get("name", "")} ')
        current = _current(statuses, i, "object")
        if target.get("type") == "AverageValue":
            now = UNKNOWN if current is None else quantity(current.get("averageValue"))
            w.write(LEVEL_0, f"(target average value):\t{now} / {quantity(target.get('averageValue'))}\n")
        else:
            now = UNKNOWN if current is None else quantity(current.get("value"))
            w.write(LEVEL_0, f"(target value):\t{now} / {quantity(target.get('value'))}\n")
    elif kind == "Resource":
        source = metric.get("resource") or {}
        label = f"resource {source.get('name', '')} on pods"
        _resource_lines(w, label, source, _current(statuses, i, "resource"))
    elif kind == "ContainerResource":
        source = metric.get("containerResource") or {}
        label = f'resource {source.get("name", "")} of container "{source.get("container", "")}" on pods'
        _resource_lines(w, label, source, _current(statuses, i, "containerResource"))
    else:
        w.write(LEVEL_1, f"<unknown metric type {go_quote(kind)}>\n")


def _direction(w: PrefixWriter, title: str, rules: Obj | None) -> None:
    """kubectl's printDirectionBehavior: what is set of one direction's rules."""
    if rules is None:
        return
    w.write(LEVEL_1, f"{title}:\n")
    if rules.get("stabilizationWindowSeconds") is not None:
        w.write(LEVEL_2, f"Stabilization Window: {rules['stabilizationWindowSeconds']} seconds\n")
    policies = rules.get("policies") or []
    if policies:
        w.write(LEVEL_2, f"Select Policy: {rules.get('selectPolicy') or 'Max'}\n")
        w.write(LEVEL_2, "Policies:\n")
        for p in policies:
            w.write(LEVEL_3, f"- Type: {p.get('type', '')}\tValue: {p.get('value', 0)}\t"
                             f"Period: {p.get('periodSeconds', 0)} seconds\n")  # fmt: skip


def as_v2(hpa: Obj) -> Obj:
    """An autoscaling/v1 HPA as v2 says it (its one CPU target); a v2 one as it is."""
    spec, status = dict(hpa.get("spec") or {}), dict(hpa.get("status") or {})
    if hpa.get("apiVersion") != "autoscaling/v1" and "targetCPUUtilizationPercentage" not in spec:
        return hpa
    cpu = spec.pop("targetCPUUtilizationPercentage", None)
    if cpu is not None:
        target = {"type": "Utilization", "averageUtilization": cpu}
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    used = status.pop("currentCPUUtilizationPercentage", None)
    if used is not None:
        current = {"averageUtilization": used}
        status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": current}}]
    return {**hpa, "spec": spec, "status": status}


def horizontal_pod_autoscaler(obj: Obj, events: list[Obj] | None) -> str:
    hpa = as_v2(obj)
    w = PrefixWriter()
    meta, spec, status = hpa["metadata"], hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    w.write(LEVEL_0, f"Name:\t{meta['name']}\n")
    w.write(LEVEL_0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(LEVEL_0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}\n")
    w.write(LEVEL_0, f"Reference:\t{ref.get('kind', '')}/{ref.get('name', '')}\n")
    w.write(LEVEL_0, "Metrics:\t( current / target )\n")
    statuses = [s for s in status.get("currentMetrics") or [] if isinstance(s, dict)]
    for i, metric in enumerate(spec.get("metrics") or []):
        _metric(w, metric, statuses, i)
    min_replicas = "<unset>" if spec.get("minReplicas") is None else str(spec["minReplicas"])
    w.write(LEVEL_0, f"Min replicas:\t{min_replicas}\n")
    w.write(LEVEL_0, f"Max replicas:\t{spec.get('maxReplicas', 0)}\n")
    behavior = spec.get("behavior")
    if behavior is not None:
        w.write(LEVEL_0, "Behavior:\n")
        _direction(w, "Scale Up", behavior.get("scaleUp"))
        _direction(w, "Scale Down", behavior.get("scaleDown"))
    w.write(LEVEL_0, f"{ref.get('kind', '')} pods:\t")
    w.write(LEVEL_0, f"{status.get('currentReplicas', 0)} current / {status.get('desiredReplicas', 0)} desired\n")
    conditions = status.get("conditions") or []
    if conditions:
        w.write(LEVEL_0, "Conditions:\n")
        w.write(LEVEL_1, "Type\tStatus\tReason\tMessage\n")
        w.write(LEVEL_1, "----\t------\t------\t-------\n")
        for c in conditions:
            w.write(LEVEL_1, f"{c.get('type', '')}\t{c.get('status', '')}\t{c.get('reason', '')}\t"
                             f"{c.get('message', '')}\n")  # fmt: skip
    describe_events(w, events)
    return w.text()
