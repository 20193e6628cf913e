"""`GET /metrics/resource` (and `/stats/summary`): the kubelet's resource usage, for metrics-server.

Kubernetes' kubelet serves its resource metrics in the Prometheus text format from a custom
collector (pkg/kubelet/metrics/collectors/resource_metrics.go); metrics-server scrapes them from
every node every --metric-resolution and turns the counters into rates. Same names, labels and
help texts here, each sample stamped with the time it was taken (milliseconds), because
metrics-server divides by the difference of those timestamps, not by when it asked:

    # HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
    # TYPE container_cpu_usage_seconds_total counter
    container_cpu_usage_seconds_total{container="c",namespace="default",pod="web"} 12.5 1718000000123
    ...
    node_cpu_usage_seconds_total 40.1 1718000000123
    resource_scrape_error 0.0

A family with no samples is left out, as Go's registry does; `resource_scrape_error` is always
there (1 when the stats could not be read). The numbers come from stats.py.

One deviation, because one mini-kubelet process can host many simulated nodes on one port:
the endpoint answers for the process's only node, and when the process hosts several the
client must name one, `/metrics/resource?node=<name>` (400 without it, 404 for a node not
hosted here). A single-node kubelet accepts `?node=` naming its own node too, so a scraper can
always send it - metrics-server does. `/stats/summary` (the Summary API: node and pods, CPU in
usageCoreNanoSeconds, memory in workingSetBytes; no rates, no file systems, no network) follows
the same rule.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from api.timestamps import rfc3339
from kubelet.stats import NodeStats

if TYPE_CHECKING:
    from kubelet.kubelet import Kubelet

log = logging.getLogger("kubelet.resourcemetrics")

CONTAINER = ["container", "namespace", "pod"]
POD = ["namespace", "pod"]
HELP = {
    "container_cpu_usage_seconds_total": "Cumulative cpu time consumed by the container in core-seconds",
    "container_memory_working_set_bytes": "Current working set of the container in bytes",
    "container_start_time_seconds": "Start time of the container since unix epoch in seconds",
    "node_cpu_usage_seconds_total": "Cumulative cpu time consumed by the node in core-seconds",
    "node_memory_working_set_bytes": "Current working set of the node in bytes",
    "pod_cpu_usage_seconds_total": "Cumulative cpu time consumed by the pod in core-seconds",
    "pod_memory_working_set_bytes": "Current working set of the pod in bytes",
    "resource_scrape_error": "1 if there was an error while getting container metrics, 0 otherwise",
}


def _help(name: str) -> str:
    return "[STABLE] " + HELP[name]  # component-base prefixes the stability level


class ResourceMetricsCollector:
    """A one-shot collector over one NodeStats (None: reading the stats failed)."""

    def __init__(self, stats: NodeStats | None) -> None:
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        s = self.stats
        families: list[Metric] = []
        if s is not None:
            ts = s.timestamp
            c_cpu = CounterMetricFamily("container_cpu_usage_seconds_total",
                                        _help("container_cpu_usage_seconds_total"), labels=CONTAINER)  # fmt: skip
            c_mem = GaugeMetricFamily("container_memory_working_set_bytes",
                                      _help("container_memory_working_set_bytes"), labels=CONTAINER)  # fmt: skip
            c_start = GaugeMetricFamily("container_start_time_seconds",
                                        _help("container_start_time_seconds"), labels=CONTAINER)  # fmt: skip
            p_cpu = CounterMetricFamily("pod_cpu_usage_seconds_total", _help("pod_cpu_usage_seconds_total"),
                                        labels=POD)  # fmt: skip
            p_mem = GaugeMetricFamily("pod_memory_working_set_bytes", _help("pod_memory_working_set_bytes"),
                                      labels=POD)  # fmt: skip
            rows = sorted(((p, c) for p in s.pods for c in p.containers),
                          key=lambda r: (r[1].name, r[0].namespace, r[0].name))  # fmt: skip
            for p, c in rows:
                labels = [c.name, p.namespace, p.name]
                c_cpu.add_metric(labels, c.cpu_seconds, timestamp=ts)
                c_mem.add_metric(labels, c.memory_bytes, timestamp=ts)
                c_start.add_metric(labels, c.start_time)  # no timestamp, as upstream
            for p in sorted(s.pods, key=lambda p: (p.namespace, p.name)):
                p_cpu.add_metric([p.namespace, p.name], p.cpu_seconds, timestamp=ts)
                p_mem.add_metric([p.namespace, p.name], p.memory_bytes, timestamp=ts)
            n_cpu = CounterMetricFamily("node_cpu_usage_seconds_total", _help("node_cpu_usage_seconds_total"))
            n_cpu.add_metric([], s.cpu_seconds, timestamp=ts)
            n_mem = GaugeMetricFamily("node_memory_working_set_bytes", _help("node_memory_working_set_bytes"))
            n_mem.add_metric([], s.memory_bytes, timestamp=ts)
            families += [c_cpu, c_mem, c_start, n_cpu, n_mem, p_cpu, p_mem]
        error = GaugeMetricFamily("resource_scrape_error", _help("resource_scrape_error"))
        error.add_metric([], 0 if s is not None else 1)
        families.append(error)
        yield from (f for f in families if f.samples)


def pick_node(kubelet: Kubelet, request: Request) -> str | Response:
    """The node a request is about (see the module docstring), or the error response."""
    names = kubelet.node_names
    wanted = request.query_params.get("node")
    if not wanted:
        if len(names) == 1:
            return names[0]
        return PlainTextResponse(f"this kubelet hosts {len(names)} nodes: name one with ?node=<name> "
                                 f"(e.g. ?node={names[0]})", status_code=400)  # fmt: skip
    if wanted not in kubelet.nodes and wanted not in names:
        return PlainTextResponse(f'node "{wanted}" is not hosted by this kubelet', status_code=404)
    return wanted


def _stats(kubelet: Kubelet, node: str) -> NodeStats | None:
    try:
        return kubelet.stats.node(node)
    except Exception:  # reported as resource_scrape_error 1, as the kubelet does
        log.exception("reading the resource usage of node %s failed", node)
        return None


async def metrics_resource(kubelet: Kubelet, request: Request) -> Response:
    node = pick_node(kubelet, request)
    if isinstance(node, Response):
        return node
    body = generate_latest(ResourceMetricsCollector(_stats(kubelet, node)))  # type: ignore[arg-type]
    return Response(body, media_type=CONTENT_TYPE_LATEST)


def _usage(cpu: float, memory: int, ts: float) -> dict[str, Any]:
    return {"cpu": {"time": rfc3339(ts), "usageCoreNanoSeconds": int(cpu * 1e9)},
            "memory": {"time": rfc3339(ts), "workingSetBytes": memory}}  # fmt: skip


async def stats_summary(kubelet: Kubelet, request: Request) -> Response:
    node = pick_node(kubelet, request)
    if isinstance(node, Response):
        return node
    s = _stats(kubelet, node)
    if s is None:
        return PlainTextResponse("failed to get node stats", status_code=500)
    ts = s.timestamp
    return JSONResponse({
        "node": {"nodeName": s.name, "startTime": rfc3339(s.start_time), **_usage(s.cpu_seconds, s.memory_bytes, ts)},
        "pods": [{
            "podRef": {"name": p.name, "namespace": p.namespace, "uid": p.uid},
            "startTime": rfc3339(p.start_time),
            "containers": [{"name": c.name, "startTime": rfc3339(c.start_time),
                            **_usage(c.cpu_seconds, c.memory_bytes, ts)} for c in p.containers],
            **_usage(p.cpu_seconds, p.memory_bytes, ts),
        } for p in s.pods],
    })  # fmt: skip
