"""The controller-manager's settings, one per flag, named as kube-controller-manager names them.

Durations accept seconds (`40`, `0.5`) or Go-style strings (`40s`, `5m`, `100ms`, `1h30m`), the
way the flags in seed 000 are written, so `--node-monitor-grace-period=40s` works as in the book.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ManagerOptions:
    master: str = ""
    kubeconfig: str = ""
    controllers: list[str] = field(default_factory=lambda: ["*"])
    kube_api_qps: float = 20.0
    kube_api_burst: int = 30
    port: int = 10252
    address: str = "0.0.0.0"  # --address / --bind-address: where --port listens
    profiling: bool = True  # /debug/pprof/ on --port
    # Kubernetes prefixes cloud resources with it (the Service controller's load balancer names,
    # the route controller's routes); mini-k8s has no cloud to name things in, so it is only
    # carried in the context.
    cluster_name: str = "kubernetes"
    # mini-k8s only: where service-lb-controller takes LoadBalancer addresses from. It stands in
    # for the cloud provider kube-controller-manager would ask (--cloud-provider), as kind's and
    # minikube's load balancer helpers do; network and broadcast addresses are never handed out.
    load_balancer_ip_pool: str = "127.1.0.0/24"
    controller_start_interval: float = 0.0  # pause (with up to 100% jitter) between controller starts
    # the security controllers: each runs only when its file is given
    root_ca_file: str = ""  # → root-ca-cert-publisher, and ca.crt in token Secrets
    use_service_account_credentials: bool = False  # each controller as kube-system/<its account>
    service_account_private_key_file: str = ""  # → serviceaccount-token
    leader_elect: bool = False
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
    # node lifecycle (seed 003)
    node_monitor_period: float = 5.0
    node_monitor_grace_period: float = 40.0
    node_startup_grace_period: float = 60.0
    deleting_pods_qps: float = 0.1
    deleting_pods_burst: int = 1
    secondary_node_eviction_rate: float = 0.01
    unhealthy_zone_threshold: float = 0.55
    large_cluster_size_threshold: int = 50
    # workloads and housekeeping
    deployment_controller_sync_period: float = 30.0
    resource_quota_sync_period: float = 300.0
    terminated_pod_gc_threshold: int = 12500
    # mini-k8s only: the Job controller's pod failure back-off (Kubernetes' DefaultJobPodFailureBackOff
    # and MaxJobPodFailureBackOff, constants there), flags here so that tests need not wait 10 s a failure
    job_pod_failure_backoff_base: float = 10.0
    job_pod_failure_backoff_max: float = 600.0
    # persistent volumes: the binder's resync, and kube-controller-manager's development provisioner
    # (Kubernetes makes its volumes under /tmp/hostpath_pv; the root is a flag here so that
    # `mini-k8s up` can keep them in its data directory)
    pvclaimbinder_sync_period: float = 15.0
    enable_hostpath_provisioner: bool = False
    hostpath_provisioner_root: str = "/tmp/hostpath_pv"
    # horizontal pod autoscaler: how often every HPA is looked at, how long a scale-down waits for
    # the highest recent recommendation, how far from the target usage counts as "on target", and
    # for how long a starting pod's CPU samples are not trusted
    horizontal_pod_autoscaler_sync_period: float = 15.0
    horizontal_pod_autoscaler_downscale_stabilization: float = 300.0
    horizontal_pod_autoscaler_tolerance: float = 0.1
    horizontal_pod_autoscaler_cpu_initialization_period: float = 300.0
    horizontal_pod_autoscaler_initial_readiness_delay: float = 30.0
    # how many keys each controller reconciles at once (--concurrent-<name>-syncs)
    concurrent_syncs: dict[str, int] = field(default_factory=dict)
    # endpointslice controller: endpoints per slice (--max-endpoints-per-slice)
    max_endpoints_per_slice: int = 100
    # endpointslicemirroring controller: addresses mirrored per Endpoints subset (and per slice), and how
    # long a sync waits after a change to a mirrored slice, to take several changes in one go
    mirroring_max_endpoints_per_subset: int = 1000
    mirroring_endpointslice_updates_batch_period: float = 0.0
    # informer reconnect back-off cap (client-go's default is 30 s)
    informer_backoff_max: float = 30.0
    verbosity: int = 0

    def workers(self, controller: str, default: int = 5) -> int:
        return self.concurrent_syncs.get(controller, default)
