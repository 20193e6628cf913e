"""Prometheus metrics for the controllers: queue depth, reconciles and their latency, per controller.

Names follow client-go's workqueue metrics (`workqueue_depth`, `workqueue_adds_total`) and
controller-runtime's (`controller_runtime_reconcile_total`), so familiar dashboards read right.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class ControllerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.depth = Gauge("workqueue_depth", "Keys waiting in a controller's queue.", ["name"], registry=self.registry)
        self.adds = Counter(
            "workqueue_adds_total", "Keys added to a controller's queue.", ["name"], registry=self.registry
        )
        self.reconciles = Counter(
            "controller_runtime_reconcile_total",
            "Reconciles by result.",
            ["controller", "result"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Reconcile latency.",
            ["controller"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.leader = Gauge(
            "leader_election_master_status", "1 while this process leads.", ["name"], registry=self.registry
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
