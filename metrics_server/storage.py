"""The last two points of every node and container, and the usage they imply.

metrics-server keeps no history: per node and per container it holds the newest point (`last`)
and the one before it (`prev`), as upstream's nodeStorage and podStorage do. Usage is then

    cpu     (last.cpu - prev.cpu) / (last.timestamp - prev.timestamp)   nanocores (truncated)
    memory  last.memory                                                 bytes
    window  last.timestamp - prev.timestamp
    timestamp  last.timestamp

so nothing is reported for a node or a container seen only once. A pod is reported only when
every container it has in `last` also has a `prev` (all or nothing); its timestamp and window are
those of its container with the earliest timestamp.

Each store() replaces everything with one scrape cycle's batch, moving points along:
- a node: the new point becomes `last`; the old `last` becomes `prev` when the new point is
  newer, else the old `prev` stays (when still older than the new point);
- a container: the same, but only while it is the same run: a new point whose start time is not
  before the old `last`'s timestamp is a restarted container, and starts again with no `prev`.
  A container started less than --metric-resolution ago (and at least 10 s ago) gets a `prev`
  made up at its start time with CPU 0, so a fresh pod shows up one cycle sooner (upstream's rule);
- a node or pod missing from the batch (its kubelet did not answer) is forgotten.
A counter that went down (or a start time that moved back) between `prev` and `last` is an error
for that node or container, logged and skipped, as upstream does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from metrics_server.decode import MetricsBatch, MetricsPoint, PodRef

log = logging.getLogger("metrics_server.storage")

FRESH_CONTAINER_MIN_MS = 10_000  # upstream's freshContainerMinMetricsResolution


@dataclass(frozen=True)
class Usage:
    timestamp_ms: int
    window_ms: int
    cpu_nanocores: int
    memory_bytes: int


def resource_usage(last: MetricsPoint, prev: MetricsPoint) -> Usage:
    """Usage between two points of one node or container run (ValueError on a decrease)."""
    if last.start_time < prev.start_time:
        raise ValueError("unexpected decrease in startTime of node/container")
    if last.cpu < prev.cpu:
        raise ValueError("unexpected decrease in cumulative CPU usage value")
    window_ms = last.timestamp_ms - prev.timestamp_ms
    rate = (last.cpu - prev.cpu) / (window_ms / 1000)
    return Usage(last.timestamp_ms, window_ms, int(rate), last.memory)


class Storage:
    def __init__(self, metric_resolution: float) -> None:
        self.resolution_ms = int(metric_resolution * 1000)
        self.nodes: dict[str, MetricsPoint] = {}
        self.prev_nodes: dict[str, MetricsPoint] = {}
        self.pods: dict[PodRef, dict[str, MetricsPoint]] = {}
        self.prev_pods: dict[PodRef, dict[str, MetricsPoint]] = {}

    # ------------------------------------------------------------------ writing

    def store(self, batch: MetricsBatch) -> None:
        self._store_nodes(batch.nodes)
        self._store_pods(batch.pods)

    def _store_nodes(self, points: dict[str, MetricsPoint]) -> None:
        prev: dict[str, MetricsPoint] = {}
        for name, new in points.items():
            old_last, old_prev = self.nodes.get(name), self.prev_nodes.get(name)
            if old_last is not None and new.timestamp_ms > old_last.timestamp_ms:
                prev[name] = old_last
            elif old_prev is not None and old_prev.timestamp_ms < new.timestamp_ms:
                prev[name] = old_prev
        self.nodes, self.prev_nodes = dict(points), prev

    def _store_pods(self, pods: dict[PodRef, dict[str, MetricsPoint]]) -> None:
        prev_pods: dict[PodRef, dict[str, MetricsPoint]] = {}
        for ref, containers in pods.items():
            old_last, old_prev = self.pods.get(ref, {}), self.prev_pods.get(ref, {})
            prev: dict[str, MetricsPoint] = {}
            for name, new in containers.items():
                age_ms = new.timestamp_ms - int(new.start_time * 1000)
                last = old_last.get(name)
                if 0 < age_ms < self.resolution_ms and age_ms >= FRESH_CONTAINER_MIN_MS:
                    prev[name] = replace(new, timestamp_ms=int(new.start_time * 1000), cpu=0)
                elif last is not None and new.start_time * 1000 < last.timestamp_ms:  # the same run
                    if new.timestamp_ms > last.timestamp_ms:
                        prev[name] = last
                    elif name in old_prev and old_prev[name].timestamp_ms < new.timestamp_ms:
                        prev[name] = old_prev[name]
            if prev:
                prev_pods[ref] = prev
        self.pods, self.prev_pods = dict(pods), prev_pods

    # ------------------------------------------------------------------ reading

    def node_usage(self, name: str) -> Usage | None:
        last, prev = self.nodes.get(name), self.prev_nodes.get(name)
        if last is None or prev is None:
            return None
        try:
            return resource_usage(last, prev)
        except ValueError as exc:
            log.error("skipping node usage metric of %s: %s", name, exc)
            return None

    def pod_usage(self, namespace: str, name: str) -> tuple[Usage, dict[str, Usage]] | None:
        """(the pod's timestamp and window, usage per container), or None when not complete."""
        ref = (namespace, name)
        last, prev = self.pods.get(ref), self.prev_pods.get(ref)
        if not last or prev is None or any(c not in prev for c in last):
            return None
        containers: dict[str, Usage] = {}
        for c, point in last.items():
            try:
                containers[c] = resource_usage(point, prev[c])
            except ValueError as exc:
                log.error("skipping container usage metric of %s in pod %s/%s: %s", c, namespace, name, exc)
        if not containers:
            return None
        earliest = min(containers.values(), key=lambda u: u.timestamp_ms)
        return earliest, containers
