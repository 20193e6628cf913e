"""The scheduler's Prometheus metrics, with kube-scheduler's names, in a private registry.

scheduler_schedule_attempts_total{result,profile}              scheduled | unschedulable | error
scheduler_scheduling_attempt_duration_seconds{result,profile}  one attempt: filter + score + assume
scheduler_pod_scheduling_sli_duration_seconds{attempts}        first attempt -> bound, per pod
scheduler_pending_pods{queue}                                  active | backoff | unschedulable
scheduler_cache_size{type}                                     nodes | pods | assumed_pods
scheduler_queue_incoming_pods_total{queue,event}               why pods (re)entered a queue
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

disable_created_metrics()  # no *_created series: Kubernetes' metrics have none

_BUCKETS = tuple(0.001 * 2**i for i in range(15))  # 1 ms .. 16 s


class SchedulerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding decision).",
            ["result", "profile"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the first attempt to the binding.",
            ["attempts"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods", "Number of pending pods, by the queue type.", ["queue"], registry=r
        )
        self.cache_size = Gauge(
            "scheduler_cache_size", "Number of nodes, pods, and assumed pods.", ["type"], registry=r
        )
        self.incoming_pods = Counter(
            "scheduler_queue_incoming_pods_total",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=r,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 master.",
            ["name"],
            registry=r,
        )
