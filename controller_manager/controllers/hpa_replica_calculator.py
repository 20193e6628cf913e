"""ReplicaCalculator: how many pods would bring a resource metric to its target (pure, no I/O).

Kubernetes' answer (pkg/controller/podautoscaler/replica_calculator.go), for a target of 50% CPU:

    utilization = sum(usage) / sum(requests)          over the pods that have a metric: 62%
    usageRatio  = utilization / target                62 / 50 = 1.24
    within tolerance (|1 - ratio| <= 0.1)?            no: act
    desired     = ceil(usageRatio * ready pods)       ceil(1.24 * 3) = 4

Which pods count is the interesting part. `group_pods` sorts them into four piles:

    ignored   being deleted, or Failed                          left out entirely
    unready   Pending; for cpu also: never Ready, or still in   no sample is trusted (start-up cpu
              its --horizontal-pod-autoscaler-cpu-initialization-   spikes would scale up for nothing)
              period with a sample older than its readiness
    missing   no metric yet                                     counted, conservatively (below)
    ready     everything else                                   its sample is used as is

If there are missing pods, or unready pods while the ratio says "up", the ratio is computed again
pessimistically, so that the pods we cannot see never push the scale further in the direction the
visible ones point: a missing pod counts as using 100% of its request (or the target, if that is
higher) when scaling down, and 0% when scaling up; an unready pod 0% when scaling up. If the
second ratio is within tolerance or points the other way, nothing changes.

Values are integers of milli-units (millicores, millibytes) as Kubernetes' MilliValue() gives
them, and divisions round as Go's integer division does, so the percentages match a real cluster.
Time comes in as `now`: nothing here reads a clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from api.quantity import Quantity, QuantityError
from api.timestamps import parse_time

Obj = Mapping[str, Any]
CPU = "cpu"


class ReplicaCalculationError(Exception):
    """No proposal can be made; the message is Kubernetes' own."""


@dataclass(frozen=True)
class PodMetric:
    """One pod's usage of one resource, summed over its containers (metrics.k8s.io PodMetrics)."""

    value: int  # milli-units
    timestamp: float = 0.0  # when it was sampled, seconds since the epoch
    window: float = 0.0  # over how many seconds


PodMetricsInfo = dict[str, PodMetric]  # pod name → its metric


@dataclass(frozen=True)
class Tolerances:
    """How far the usage ratio may stray from 1.0 before anything is done (--horizontal-pod-
    autoscaler-tolerance, or a behavior's per-direction `tolerance`)."""

    scale_down: float = 0.1
    scale_up: float = 0.1

    def is_within(self, usage_ratio: float) -> bool:
        return 1.0 - self.scale_down <= usage_ratio <= 1.0 + self.scale_up


@dataclass
class PodGroups:
    ready_count: int = 0
    unready: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    ignored: set[str] = field(default_factory=set)


def _ready_condition(pod: Obj) -> Obj | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), None)


def group_pods(
    pods: Iterable[Obj],
    metrics: Mapping[str, PodMetric],
    resource: str,
    cpu_initialization_period: float,
    delay_of_initial_readiness_status: float,
    now: float,
) -> PodGroups:
    """Sort pods into ready / unready / missing / ignored, as Kubernetes' groupPods does."""
    groups = PodGroups()
    for pod in pods:
        name = pod["metadata"]["name"]
        status = pod.get("status") or {}
        if pod["metadata"].get("deletionTimestamp") or status.get("phase") == "Failed":
            groups.ignored.add(name)
            continue
        if status.get("phase") == "Pending":
            groups.unready.add(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            groups.missing.add(name)
            continue
        if resource == CPU and _cpu_sample_untrusted(pod, metric, cpu_initialization_period,
                                                     delay_of_initial_readiness_status, now):  # fmt: skip
            groups.unready.add(name)
            continue
        groups.ready_count += 1
    return groups


def _cpu_sample_untrusted(pod: Obj, metric: PodMetric, init_period: float, readiness_delay: float, now: float) -> bool:
    """A CPU sample from a pod that is starting up says little about its load. Within the
    initialization period, the sample must be Ready and taken a whole window after the pod became
    Ready; after it, only a pod that went unready right at start (never was Ready) is left out."""
    condition = _ready_condition(pod)
    started = parse_time((pod.get("status") or {}).get("startTime"))
    if condition is None or started is None:
        return True
    transition = parse_time(condition.get("lastTransitionTime")) or 0.0
    if started + init_period > now:
        return condition.get("status") == "False" or metric.timestamp < transition + metric.window
    return condition.get("status") == "False" and started + readiness_delay > transition


def _milli(value: Any) -> int:
    try:
        return Quantity(value).milli_value()
    except (QuantityError, TypeError):
        return 0


def calculate_requests(pods: Iterable[Obj], container: str, resource: str) -> dict[str, int]:
    """Each pod's request of `resource` in milli-units: the sum over its containers (and sidecars,
    init containers that restart Always), or that of the one `container` named."""
    requests: dict[str, int] = {}
    for pod in pods:
        name = pod["metadata"]["name"]
        spec = pod.get("spec") or {}
        containers = list(spec.get("containers") or [])
        containers += [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
        total, found = 0, False
        for c in containers:
            if container and c.get("name") != container:
                continue
            wanted = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if wanted is None:
                raise ReplicaCalculationError(
                    f"missing request for {resource} in container {c.get('name')} of Pod {name}"
                )
            total += _milli(wanted)
            found = True
            if container:
                break
        if container and not found:
            raise ReplicaCalculationError(f"container {container} not found in Pod {name}")
        requests[name] = total
    return requests


def resource_utilization_ratio(
    metrics: Mapping[str, PodMetric], requests: Mapping[str, int], target_utilization: int
) -> tuple[float, int, int]:
    """(usage ratio, utilization percent, average raw value) over the pods with both a metric and
    a request; pods with only a metric are extraneous and skipped."""
    metrics_total = requests_total = entries = 0
    for pod, metric in metrics.items():
        if pod not in requests:
            continue
        metrics_total += metric.value
        requests_total += requests[pod]
        entries += 1
    if requests_total == 0:
        raise ReplicaCalculationError("no metrics returned matched known pods")
    utilization = metrics_total * 100 // requests_total
    return utilization / target_utilization, utilization, metrics_total // entries


def metric_usage_ratio(metrics: Mapping[str, PodMetric], target_usage: int) -> tuple[float, int]:
    """(usage ratio, average usage) of a plain per-pod value against its target average."""
    usage = sum(m.value for m in metrics.values()) // len(metrics)
    return usage / target_usage, usage


@dataclass(frozen=True)
class ReplicaCalculator:
    """The calculation with its flags; each method takes the pods (from the pod informer, already
    matched against the target's selector) and their metrics (from metrics.k8s.io)."""

    cpu_initialization_period: float = 300.0  # --horizontal-pod-autoscaler-cpu-initialization-period
    delay_of_initial_readiness_status: float = 30.0  # --horizontal-pod-autoscaler-initial-readiness-delay

    def _groups(self, pods: Sequence[Obj], metrics: PodMetricsInfo, resource: str, now: float) -> PodGroups:
        if not pods:
            raise ReplicaCalculationError("no pods returned by selector while calculating replica count")
        groups = group_pods(pods, metrics, resource, self.cpu_initialization_period,
                            self.delay_of_initial_readiness_status, now)  # fmt: skip
        for name in groups.ignored | groups.unready:
            metrics.pop(name, None)
        if not metrics:
            raise ReplicaCalculationError("did not receive metrics for targeted pods (pods might be unready)")
        return groups

    def resource_replicas(
        self,
        current_replicas: int,
        target_utilization: int,
        resource: str,
        tolerances: Tolerances,
        pods: Sequence[Obj],
        pod_metrics: Mapping[str, PodMetric],
        now: float,
        container: str = "",
    ) -> tuple[int, int, int]:
        """(replicas, utilization percent, raw average) for a `target.averageUtilization`."""
        metrics = dict(pod_metrics)
        groups = self._groups(pods, metrics, resource, now)
        requests = calculate_requests(pods, container, resource)
        ratio, utilization, raw = resource_utilization_ratio(metrics, requests, target_utilization)

        def fallback(pod: str) -> int:  # a missing pod when scaling down: its request, or the target
            return requests.get(pod, 0) * max(100, target_utilization) // 100

        replicas = self._settle(current_replicas, ratio, tolerances, groups, metrics, fallback,
                                lambda m: resource_utilization_ratio(m, requests, target_utilization)[0])  # fmt: skip
        return replicas, utilization, raw

    def raw_resource_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        resource: str,
        tolerances: Tolerances,
        pods: Sequence[Obj],
        pod_metrics: Mapping[str, PodMetric],
        now: float,
    ) -> tuple[int, int]:
        """(replicas, average usage in milli-units) for a `target.averageValue`."""
        metrics = dict(pod_metrics)
        groups = self._groups(pods, metrics, resource, now)
        ratio, usage = metric_usage_ratio(metrics, target_usage)
        replicas = self._settle(current_replicas, ratio, tolerances, groups, metrics, lambda _pod: target_usage,
                                lambda m: metric_usage_ratio(m, target_usage)[0])  # fmt: skip
        return replicas, usage

    @staticmethod
    def _settle(
        current: int,
        ratio: float,
        tolerances: Tolerances,
        groups: PodGroups,
        metrics: PodMetricsInfo,
        missing_value: Callable[[str], int],
        ratio_of: Callable[[PodMetricsInfo], float],
    ) -> int:
        scale_up_with_unready = bool(groups.unready) and ratio > 1.0
        if not scale_up_with_unready and not groups.missing:
            if tolerances.is_within(ratio):
                return current
            return math.ceil(ratio * groups.ready_count)
        # Assume the worst of the pods we cannot see, then look again.
        for pod in groups.missing:
            if ratio < 1.0:
                metrics[pod] = PodMetric(missing_value(pod))
            elif ratio > 1.0:
                metrics[pod] = PodMetric(0)
        if scale_up_with_unready:
            for pod in groups.unready:
                metrics[pod] = PodMetric(0)
        new_ratio = ratio_of(metrics)
        if tolerances.is_within(new_ratio) or (ratio < 1.0 < new_ratio) or (new_ratio < 1.0 < ratio):
            return current  # too small a change, or the unseen pods turned the direction round
        replicas = math.ceil(new_ratio * len(metrics))
        if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
            return current  # counting more pods would turn the direction round
        return replicas
