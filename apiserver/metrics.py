"""Prometheus metrics, named as kube-apiserver names them so familiar dashboards read right.

Each APIServer owns its own CollectorRegistry (not the global one), so several servers in one
test process never collide.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "apiserver_request_total",
            "Requests by verb, resource and HTTP code.",
            ["verb", "resource", "subresource", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "apiserver_request_duration_seconds",
            "Request latency by verb and resource (watch excluded).",
            ["verb", "resource"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.watchers = Gauge(
            "apiserver_registered_watchers", "Open client watches by resource.", ["resource"], registry=self.registry
        )
        self.consistent_reads = Counter(  # exposed as apiserver_watch_cache_consistent_read_total
            "apiserver_watch_cache_consistent_read",
            "Consistent LISTs served from the watch cache (fallback: read from storage instead).",
            ["resource", "success", "fallback"],
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
