"""Pods and PodMetrics as the API server and metrics-server send them, for the HPA tests.

Times are seconds relative to NOW, a fixed instant, so every test states the ages it means.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

NOW = 1_700_000_000.0
Obj = dict[str, Any]


def at(seconds_ago: float) -> str:
    return datetime.fromtimestamp(NOW - seconds_ago, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(
    name: str,
    cpu: str | None = "1",
    *,
    memory: str | None = None,
    phase: str = "Running",
    ready: str | None = "True",
    started: float | None = 3600.0,
    ready_since: float = 3600.0,
    deleting: bool = False,
    containers: list[Obj] | None = None,
    init_containers: list[Obj] | None = None,
) -> Obj:
    """A pod requesting `cpu` (and `memory`) in one container, started `started` seconds ago and
    with its Ready condition `ready` since `ready_since` seconds ago."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    spec: Obj = {"containers": containers or [{"name": "app", "resources": {"requests": requests}}]}
    if init_containers:
        spec["initContainers"] = init_containers
    status: Obj = {"phase": phase}
    if started is not None:
        status["startTime"] = at(started)
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": ready, "lastTransitionTime": at(ready_since)}]
    md: Obj = {"name": name, "namespace": "ns"}
    if deleting:
        md["deletionTimestamp"] = at(1)
    return {"metadata": md, "spec": spec, "status": status}


def pod_metrics(name: str, *, taken: float = 10.0, window: str = "15s", **usage_by_container: Obj) -> Obj:
    """A metrics.k8s.io PodMetrics item: `pod_metrics("web-1", app={"cpu": "250m"})`."""
    containers = [{"name": c, "usage": u} for c, u in (usage_by_container or {"app": {}}).items()]
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "timestamp": at(taken),
        "window": window,
        "containers": containers,
    }
