"""spec.metrics: one replica proposal per metric, and the largest wins (pure).

Kubernetes' computeReplicasForMetrics, given what the controller read this sync (the target's pods
from the pod informer, the PodMetricsList from metrics.k8s.io or why it could not be read):

    metric type        mini-k8s                       proposal                  currentMetrics[i].current
    Resource           cpu/memory of the pods         averageUtilization: % of  averageUtilization: 62,
                                                      requests; averageValue:   averageValue: "124m"
                                                      usage per pod             (or averageValue only)
    ContainerResource  the same, of one container     the same                  the same
    Pods, Object,      not served: fail as Kubernetes -                         {type: ""}
    External           does without those APIs

Failures are per metric: each one records a Warning event named by its reason
(FailedGetResourceMetric, ...). If every metric failed, or some failed and the others would scale
*down* (a metric we cannot read might want more pods), there is no proposal (-1) and ScalingActive
becomes False with the first failure's reason; otherwise the largest proposal stands, ScalingActive
is True (ValidMetricFound) and the failures are still reported as one error:
"invalid metrics (1 invalid out of 2), first error is: ...".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from api.quantity import Quantity, QuantityError
from controller_manager.controllers.hpa_metrics import resource_metric
from controller_manager.controllers.hpa_replica_calculator import (
    ReplicaCalculationError,
    ReplicaCalculator,
    Tolerances,
)
from controller_manager.controllers.hpa_status import Condition, unable_to_compute, valid_metric_found

Obj = Mapping[str, Any]

RESOURCE, CONTAINER_RESOURCE, PODS, OBJECT, EXTERNAL = "Resource", "ContainerResource", "Pods", "Object", "External"
NO_CUSTOM_METRICS_API = "no custom metrics API (custom.metrics.k8s.io) registered"


@dataclass(frozen=True)
class MetricsSnapshot:
    """What the controller read for one sync of one HPA."""

    pods: Sequence[Obj]  # the pods the target's selector picks
    pod_metrics: Sequence[Obj] | None = None  # PodMetricsList items, None when not read
    metrics_error: str = ""  # why they could not be read
    now: float = 0.0


@dataclass
class MetricsResult:
    replicas: int  # -1: nothing can be done
    metric: str  # what the winning proposal came from, e.g. "cpu resource utilization (percentage of request)"
    statuses: list[Obj]  # status.currentMetrics, one per spec.metrics entry
    error: str = ""  # the failures, when there were any
    condition: Condition | None = None  # what ScalingActive should say
    events: list[tuple[str, str]] = field(default_factory=list)  # Warning events: (reason, message)


class MetricError(Exception):
    """One metric failed: `reason` names the condition and the event, `detail` is their message,
    `error` what the metric contributes to "invalid metrics (...), first error is: <error>"."""

    def __init__(self, reason: str, detail: str, error: str) -> None:
        super().__init__(error)
        self.reason, self.detail, self.error = reason, detail, error


def _milli(value: Any) -> int:
    try:
        return Quantity(value).milli_value()
    except (QuantityError, TypeError):
        return 0


def _resource_proposal(
    source: Obj, container: str, current: int, snap: MetricsSnapshot, calc: ReplicaCalculator, tolerances: Tolerances
) -> tuple[int, Obj, str]:
    """(proposal, current value, metric name) of a Resource or ContainerResource metric; raises
    ReplicaCalculationError with the text the condition carries."""
    name = str(source.get("name") or "")
    target = source.get("target") or {}
    if target.get("averageValue") is not None:
        try:
            metrics = resource_metric(snap.pod_metrics, snap.metrics_error, name, container)
            replicas, usage = calc.raw_resource_replicas(
                current, _milli(target["averageValue"]), name, tolerances, snap.pods, metrics, snap.now
            )
        except ReplicaCalculationError as exc:
            raise ReplicaCalculationError(f"failed to get {name} usage: {exc}") from exc
        return replicas, {"averageValue": str(Quantity.from_milli(usage))}, f"{name} resource"
    if target.get("averageUtilization") is None:
        raise ReplicaCalculationError(
            "invalid resource metric source: neither an average utilization target nor an average value (usage) "
            "target was set"
        )
    try:
        metrics = resource_metric(snap.pod_metrics, snap.metrics_error, name, container)
        replicas, utilization, raw = calc.resource_replicas(
            current, int(target["averageUtilization"]), name, tolerances, snap.pods, metrics, snap.now, container
        )
    except ReplicaCalculationError as exc:
        raise ReplicaCalculationError(f"failed to get {name} utilization: {exc}") from exc
    kind = "container resource" if container else "resource"
    value = {"averageUtilization": utilization, "averageValue": str(Quantity.from_milli(raw))}
    return replicas, value, f"{name} {kind} utilization (percentage of request)"


def go_label_selector(selector: Obj | None) -> str:
    """A *metav1.LabelSelector as Go's %+v prints it (Kubernetes puts it in external metric errors)."""
    if selector is None:
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    exprs = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key')},Operator:{e.get('operator')},"
        f"Values:[]string{{{','.join(e.get('values') or [])}}},}},"
        for e in selector.get("matchExpressions") or []
    )
    expressions = f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},"
    return f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},{expressions}}}"


def _unserved(kind: str, spec: Obj, namespace: str) -> MetricError:
    """Pods and Object metrics come from custom.metrics.k8s.io, External from
    external.metrics.k8s.io; mini-k8s serves neither, so these fail with what Kubernetes says then."""
    if kind == PODS:
        name = ((spec.get("pods") or {}).get("metric") or {}).get("name")
        detail = (
            f"unable to get metric {name}: unable to fetch metrics from custom metrics API: {NO_CUSTOM_METRICS_API}"
        )
        return MetricError("FailedGetPodsMetric", detail, f"failed to get pods metric value: {detail}")
    if kind == OBJECT:
        source = spec.get("object") or {}
        name = (source.get("metric") or {}).get("name")
        target, described = source.get("target") or {}, source.get("describedObject") or {}
        detail = (
            f"unable to get metric {name}: unable to fetch metrics from custom metrics API: {NO_CUSTOM_METRICS_API}"
            f" on {described.get('kind')} {namespace}/{described.get('name')}"
        )
        if target.get("type") == "Value" and target.get("value") is not None:
            return MetricError("FailedGetObjectMetric", detail, f"failed to get object metric value: {detail}")
        if target.get("type") == "AverageValue" and target.get("averageValue") is not None:
            error = f"failed to get object metric value: failed to get {name} object metric: {detail}"
            return MetricError("FailedGetObjectMetric", detail, error)
        detail = "invalid object metric source: neither a value target nor an average value target was set"
        return MetricError("FailedGetObjectMetric", detail, f"failed to get object metric value: {detail}")
    if kind == EXTERNAL:
        source = spec.get("external") or {}
        metric, target = source.get("metric") or {}, source.get("target") or {}
        name = metric.get("name")
        detail = (f"unable to get external metric {namespace}/{name}/{go_label_selector(metric.get('selector'))}: "
                  f"unable to fetch metrics from external metrics API: the server could not find the requested "
                  f"resource (get {name}.external.metrics.k8s.io)")  # fmt: skip
        if target.get("averageValue") is not None:
            inner = f"failed to get {name} external metric: {detail}"
        elif target.get("value") is not None:
            inner = f"failed to get external metric {name}: {detail}"
        else:
            detail = inner = (
                "invalid external metric source: neither a value target nor an average value target was set"
            )
        return MetricError("FailedGetExternalMetric", detail, f"failed to get {name} external metric value: {inner}")
    detail = f'unknown metric source type "{kind}"'
    return MetricError("InvalidMetricSourceType", detail, detail)


def compute_replicas_for_metric(
    spec: Obj, current: int, namespace: str, snap: MetricsSnapshot, calc: ReplicaCalculator, tolerances: Tolerances
) -> tuple[int, str, Obj]:
    """(proposal, metric name, currentMetrics entry) of one spec.metrics entry; MetricError if it fails."""
    kind = str(spec.get("type") or "")
    if kind not in (RESOURCE, CONTAINER_RESOURCE):
        raise _unserved(kind, spec, namespace)
    field_name = "resource" if kind == RESOURCE else "containerResource"
    source = spec.get(field_name) or {}
    container = str(source.get("container") or "") if kind == CONTAINER_RESOURCE else ""
    try:
        replicas, value, metric = _resource_proposal(source, container, current, snap, calc, tolerances)
    except ReplicaCalculationError as exc:
        if kind == RESOURCE:
            reason, error = (
                "FailedGetResourceMetric",
                f"failed to get {source.get('name')} resource metric value: {exc}",
            )
        else:
            reason, error = (
                "FailedGetContainerResourceMetric",
                f"failed to get {container} container metric value: {exc}",
            )
        raise MetricError(reason, str(exc), error) from exc
    status: dict[str, Any] = {"name": source.get("name"), "current": value}
    if container:
        status = {"name": source.get("name"), "container": container, "current": value}
    return replicas, metric, {"type": kind, field_name: status}


def compute_replicas_for_metrics(
    specs: Sequence[Obj],
    spec_replicas: int,
    namespace: str,
    snap: MetricsSnapshot,
    calc: ReplicaCalculator,
    tolerances: Tolerances,
) -> MetricsResult:
    replicas, metric = 0, ""
    statuses: list[Obj] = [{"type": ""} for _ in specs]  # a failed metric leaves an empty status, as in Kubernetes
    failures: list[MetricError] = []
    for i, spec in enumerate(specs):
        try:
            proposal, name, statuses[i] = compute_replicas_for_metric(spec, spec_replicas, namespace, snap, calc,
                                                                      tolerances)  # fmt: skip
        except MetricError as exc:
            failures.append(exc)
            continue
        if replicas == 0 or proposal > replicas:
            replicas, metric = proposal, name
    events = [(f.reason, f.detail) for f in failures]
    error = ""
    if failures:
        error = f"invalid metrics ({len(failures)} invalid out of {len(specs)}), first error is: {failures[0].error}"
    if failures and (len(failures) >= len(specs) or replicas < spec_replicas):
        first = failures[0]
        return MetricsResult(-1, "", statuses, error, unable_to_compute(first.reason, first.detail), events)
    if not specs:
        return MetricsResult(-1, "", [], "no metrics to scale on", None, events)
    return MetricsResult(replicas, metric, statuses, error, valid_metric_found(metric), events)
