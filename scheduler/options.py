"""The scheduler's settings, one per flag, named as kube-scheduler names them.

Durations accept seconds (`15`, `0.5`) or Go-style strings (`15s`, `5m`, `100ms`), so the flags
read as in Kubernetes' documentation and tests can still shrink every timer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SchedulerOptions:
    master: str = ""
    kubeconfig: str = ""
    kube_api_qps: float = 50.0
    kube_api_burst: int = 100
    port: int = 10251
    scheduler_name: str = "default-scheduler"
    leader_elect: bool = False
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
    leader_elect_resource_name: str = "kube-scheduler"
    leader_elect_resource_namespace: str = "kube-system"
    # 0 = Kubernetes' adaptive default (50% minus 1% per 125 nodes, at least 5%, at least 100 nodes).
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    # The safety net: a pod left unschedulable this long is retried even if no event woke it.
    pod_max_in_unschedulable_pods_duration: float = 300.0
    # How many bindings may be in flight at once (the binding cycle runs off the hot loop).
    parallel_binds: int = 64
    seed: int | None = None  # for reproducible tie-breaks between equally good nodes
    profiling: bool = True  # /debug/pprof/ on --port
    verbosity: int = 0
