"""A kubelet's `/metrics/resource` page, decoded into metric points (one MetricsBatch per node).

What metrics-server reads of the page (pkg/scraper/client/resource/decode.go), and nothing else:

    node_cpu_usage_seconds_total                    -> the node's cumulative CPU, core-seconds
    node_memory_working_set_bytes                   -> the node's working set, bytes
    container_cpu_usage_seconds_total{c,ns,pod}     -> a container's cumulative CPU
    container_memory_working_set_bytes{c,ns,pod}    -> a container's working set
    container_start_time_seconds{c,ns,pod}          -> when it started (to notice restarts)

A point's time is the sample's own timestamp (milliseconds), or, when the kubelet sent none, the
time of the scrape. CPU is kept as an integer of nanocore-seconds, as upstream does, so rates are
computed on integers. A point that lacks its CPU or its memory is incomplete and dropped: a node
point on its own, a container point together with its whole pod (a pod is all or nothing).

One deviation: upstream also drops points whose CPU counter or working set is exactly zero (a real
cgroup never reports 0). Here 0 is a true value - an idle simulated container uses no CPU, and a
process-runtime `sleep` may not have used one clock tick yet - so only *missing* numbers drop a point.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

log = logging.getLogger("metrics_server.decode")

NODE_CPU = "node_cpu_usage_seconds_total"
NODE_MEMORY = "node_memory_working_set_bytes"
CONTAINER_CPU = "container_cpu_usage_seconds_total"
CONTAINER_MEMORY = "container_memory_working_set_bytes"
CONTAINER_START = "container_start_time_seconds"

PodRef = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True)
class MetricsPoint:
    """One measurement of a node or a container."""

    timestamp_ms: int  # when it was measured (the kubelet's clock)
    cpu: int  # cumulative CPU since the start, in nanocore-seconds (core-seconds x 10^9)
    memory: int  # working set, bytes
    start_time: float = 0.0  # a container's start (unix seconds); 0 for a node


@dataclass
class MetricsBatch:
    """What one scrape cycle learnt: points of nodes, and of pods' containers."""

    nodes: dict[str, MetricsPoint] = field(default_factory=dict)
    pods: dict[PodRef, dict[str, MetricsPoint]] = field(default_factory=dict)

    def merge(self, other: MetricsBatch) -> None:
        self.nodes.update(other.nodes)
        for ref, containers in other.pods.items():
            if ref in self.pods:
                log.error("pod %s/%s reported by two nodes; keeping the first", *ref)
                continue
            self.pods[ref] = containers


@dataclass
class _Partial:
    timestamp_ms: int | None = None
    cpu: int | None = None
    memory: int | None = None
    start_time: float = 0.0

    def point(self) -> MetricsPoint | None:
        if self.timestamp_ms is None or self.cpu is None or self.memory is None:
            return None
        return MetricsPoint(self.timestamp_ms, self.cpu, self.memory, self.start_time)


def decode_batch(text: str, node_name: str, default_ms: int) -> MetricsBatch:
    """Parse one page (ValueError when it is not the Prometheus text format)."""
    node = _Partial()
    containers: dict[PodRef, dict[str, _Partial]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            ms = round(float(sample.timestamp) * 1000) if sample.timestamp is not None else default_ms
            if sample.name == NODE_CPU:
                node.cpu, node.timestamp_ms = int(sample.value * 1e9), ms
            elif sample.name == NODE_MEMORY:
                node.memory, node.timestamp_ms = int(sample.value), ms
            elif sample.name in (CONTAINER_CPU, CONTAINER_MEMORY, CONTAINER_START):
                labels = sample.labels
                ref = (labels.get("namespace", ""), labels.get("pod", ""))
                c = containers.setdefault(ref, {}).setdefault(labels.get("container", ""), _Partial())
                if sample.name == CONTAINER_CPU:
                    c.cpu, c.timestamp_ms = int(sample.value * 1e9), ms
                elif sample.name == CONTAINER_MEMORY:
                    c.memory, c.timestamp_ms = int(sample.value), ms
                else:
                    c.start_time = sample.value
    batch = MetricsBatch()
    point = node.point()
    if point is None:
        log.info("incomplete node metrics from %s: %s", node_name, node)
    else:
        batch.nodes[node_name] = point
    for ref, partials in containers.items():
        points = {name: p.point() for name, p in partials.items()}
        complete = {name: p for name, p in points.items() if p is not None}
        if len(complete) != len(points):
            log.info("incomplete container metrics for pod %s/%s from %s", *ref, node_name)
            continue
        batch.pods[ref] = complete
    return batch
