"""`mini-controller-manager`: flags as kube-controller-manager spells them (seed 000), then run.

Seed 000's command line works as written: `--log_dir` and `--root_ca_file` are read as
`--log-dir` and `--root-ca-file`, `--logtostderr=false` is a bool with a value, and
`--master=172.17.8.100:8080` means http (api/cmdline.py). The logging flags come from api/klog.py.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer

from api import cmdline
from api.duration import parse_duration
from controller_manager import registry
from controller_manager.controllers.servicelb_pool import parse_pool
from controller_manager.credentials import Credentials
from controller_manager.options import ManagerOptions

cli = typer.Typer(add_completion=False, help="Runs the control loops: replication, deployment, node lifecycle, GC, …")

Duration = Annotated[str, typer.Option(help="Seconds, or a Go duration such as 40s, 5m, 100ms.")]
CONTROLLERS_HELP = (
    "'*' (all on by default), names, '-name' to disable. All controllers: "
    + ", ".join(sorted(registry.CONTROLLERS))
    + ". Aliases: "
    + ", ".join(f"{alias} = {name}" for alias, name in sorted(registry.ALIASES.items()))
    + "."
)


@cli.command()
def run(
    master: Annotated[str, typer.Option("--master", help="API server URL (overrides kubeconfig).")] = "",
    kubeconfig: Annotated[str, typer.Option("--kubeconfig")] = "",
    controllers: Annotated[str, typer.Option("--controllers", help=CONTROLLERS_HELP)] = "*",
    kube_api_qps: Annotated[float, typer.Option("--kube-api-qps")] = 20.0,
    kube_api_burst: Annotated[int, typer.Option("--kube-api-burst")] = 30,
    port: Annotated[int, typer.Option("--port", help="Serve /healthz, /metrics, /debug here; 0 disables.")] = 10252,
    address: Annotated[
        str, typer.Option("--address", "--bind-address", help="The IP address --port listens on.")
    ] = "0.0.0.0",
    profiling: Annotated[
        bool, typer.Option("--profiling/--no-profiling", help="Serve /debug/pprof/ (task stacks) on --port.")
    ] = True,
    cluster_name: Annotated[
        str, typer.Option("--cluster-name", help="Cluster prefix, e.g. for cloud load balancer names (Service ctrl).")
    ] = "kubernetes",
    load_balancer_ip_pool: Annotated[
        str,
        typer.Option(
            "--load-balancer-ip-pool",
            help="CIDR LoadBalancer Services get addresses from (mini-k8s: stands in for the cloud provider).",
        ),
    ] = "127.1.0.0/24",
    controller_start_interval: Annotated[
        str, typer.Option("--controller-start-interval", help="Pause between starting controllers.")
    ] = "0s",
    root_ca_file: Annotated[
        str, typer.Option("--root-ca-file", help="CA cert put in token Secrets and kube-root-ca.crt ConfigMaps.")
    ] = "",
    service_account_private_key_file: Annotated[
        str, typer.Option("--service-account-private-key-file", help="PEM RSA/EC key that signs SA tokens.")
    ] = "",
    use_service_account_credentials: Annotated[
        bool,
        typer.Option("--use-service-account-credentials", help="Each controller acts as its own ServiceAccount."),
    ] = False,
    leader_elect: Annotated[bool, typer.Option("--leader-elect/--no-leader-elect")] = False,
    leader_elect_lease_duration: Annotated[str, typer.Option("--leader-elect-lease-duration")] = "15s",
    leader_elect_renew_deadline: Annotated[str, typer.Option("--leader-elect-renew-deadline")] = "10s",
    leader_elect_retry_period: Annotated[str, typer.Option("--leader-elect-retry-period")] = "2s",
    node_monitor_period: Annotated[str, typer.Option("--node-monitor-period")] = "5s",
    node_monitor_grace_period: Annotated[str, typer.Option("--node-monitor-grace-period")] = "40s",
    node_startup_grace_period: Annotated[str, typer.Option("--node-startup-grace-period")] = "60s",
    deleting_pods_qps: Annotated[float, typer.Option("--deleting-pods-qps", help="Evictions per second.")] = 0.1,
    deleting_pods_burst: Annotated[int, typer.Option("--deleting-pods-burst")] = 1,
    secondary_node_eviction_rate: Annotated[float, typer.Option("--secondary-node-eviction-rate")] = 0.01,
    unhealthy_zone_threshold: Annotated[float, typer.Option("--unhealthy-zone-threshold")] = 0.55,
    large_cluster_size_threshold: Annotated[int, typer.Option("--large-cluster-size-threshold")] = 50,
    deployment_controller_sync_period: Annotated[str, typer.Option("--deployment-controller-sync-period")] = "30s",
    resource_quota_sync_period: Annotated[
        str, typer.Option("--resource-quota-sync-period", help="Recount every quota this often.")
    ] = "5m",
    terminated_pod_gc_threshold: Annotated[int, typer.Option("--terminated-pod-gc-threshold")] = 12500,
    job_pod_failure_backoff_base: Annotated[
        str,
        typer.Option(
            "--job-pod-failure-backoff-base",
            help="Job: wait after a pod failure, doubling per failure (mini-k8s only; Kubernetes: fixed 10s).",
        ),
    ] = "10s",
    job_pod_failure_backoff_max: Annotated[
        str,
        typer.Option(
            "--job-pod-failure-backoff-max",
            help="Job: cap on that wait (mini-k8s only, so tests can be fast; Kubernetes: fixed 10m).",
        ),
    ] = "10m",
    pvclaimbinder_sync_period: Annotated[
        str, typer.Option("--pvclaimbinder-sync-period", help="Look at every volume and claim again this often.")
    ] = "15s",
    enable_hostpath_provisioner: Annotated[
        bool, typer.Option("--enable-hostpath-provisioner", help="Provision kubernetes.io/host-path volumes.")
    ] = False,
    hostpath_provisioner_root: Annotated[
        str, typer.Option("--hostpath-provisioner-root", help="Where host-path volumes are made (mini-k8s only).")
    ] = "/tmp/hostpath_pv",
    horizontal_pod_autoscaler_sync_period: Annotated[
        str, typer.Option("--horizontal-pod-autoscaler-sync-period", help="Look at every HPA this often.")
    ] = "15s",
    horizontal_pod_autoscaler_downscale_stabilization: Annotated[
        str,
        typer.Option(
            "--horizontal-pod-autoscaler-downscale-stabilization", help="Scale down to the highest recent proposal."
        ),
    ] = "5m0s",
    horizontal_pod_autoscaler_tolerance: Annotated[
        float, typer.Option("--horizontal-pod-autoscaler-tolerance", help="Usage/target ratio off 1.0 to act on.")
    ] = 0.1,
    horizontal_pod_autoscaler_cpu_initialization_period: Annotated[
        str,
        typer.Option(
            "--horizontal-pod-autoscaler-cpu-initialization-period", help="CPU samples of new pods are distrusted."
        ),
    ] = "5m0s",
    horizontal_pod_autoscaler_initial_readiness_delay: Annotated[
        str,
        typer.Option(
            "--horizontal-pod-autoscaler-initial-readiness-delay", help="Readiness changes of new pods count as start."
        ),
    ] = "30s",
    concurrent_rc_syncs: Annotated[int, typer.Option("--concurrent-rc-syncs")] = 5,
    concurrent_replicaset_syncs: Annotated[int, typer.Option("--concurrent-replicaset-syncs")] = 5,
    concurrent_deployment_syncs: Annotated[int, typer.Option("--concurrent-deployment-syncs")] = 5,
    concurrent_endpoint_syncs: Annotated[int, typer.Option("--concurrent-endpoint-syncs")] = 5,
    concurrent_service_endpoint_syncs: Annotated[int, typer.Option("--concurrent-service-endpoint-syncs")] = 5,
    max_endpoints_per_slice: Annotated[int, typer.Option("--max-endpoints-per-slice")] = 100,
    mirroring_concurrent_service_endpoint_syncs: Annotated[
        int, typer.Option("--mirroring-concurrent-service-endpoint-syncs")
    ] = 5,
    mirroring_max_endpoints_per_subset: Annotated[
        int, typer.Option("--mirroring-max-endpoints-per-subset", help="Addresses of a subset mirrored to slices.")
    ] = 1000,
    mirroring_endpointslice_updates_batch_period: Annotated[
        str,
        typer.Option(
            "--mirroring-endpointslice-updates-batch-period", help="Delay a sync after a mirrored slice changes."
        ),
    ] = "0s",
    concurrent_gc_syncs: Annotated[int, typer.Option("--concurrent-gc-syncs")] = 20,
    concurrent_namespace_syncs: Annotated[int, typer.Option("--concurrent-namespace-syncs")] = 10,
    concurrent_job_syncs: Annotated[int, typer.Option("--concurrent-job-syncs")] = 5,
    concurrent_cron_job_syncs: Annotated[int, typer.Option("--concurrent-cron-job-syncs")] = 5,
    concurrent_ttl_syncs: Annotated[int, typer.Option("--concurrent-ttl-after-finished-syncs")] = 5,
    concurrent_daemonset_syncs: Annotated[int, typer.Option("--concurrent-daemonset-syncs")] = 2,
    concurrent_statefulset_syncs: Annotated[int, typer.Option("--concurrent-statefulset-syncs")] = 5,
    concurrent_resource_quota_syncs: Annotated[int, typer.Option("--concurrent-resource-quota-syncs")] = 5,
    concurrent_horizontal_pod_autoscaler_syncs: Annotated[
        int, typer.Option("--concurrent-horizontal-pod-autoscaler-syncs")
    ] = 5,
    concurrent_service_syncs: Annotated[int, typer.Option("--concurrent-service-syncs")] = 1,
    informer_backoff_max: Annotated[
        str, typer.Option("--informer-backoff-max", help="Cap on watch reconnect back-off.")
    ] = "30s",
    verbosity: Annotated[int, typer.Option("-v", "--v", help="Log verbosity (0-4).")] = 0,
) -> None:
    try:
        opts = ManagerOptions(
            master=cmdline.server_url(master),
            kubeconfig=kubeconfig,
            controllers=[controllers],
            kube_api_qps=kube_api_qps,
            kube_api_burst=kube_api_burst,
            port=port,
            address=address,
            profiling=profiling,
            cluster_name=cluster_name,
            load_balancer_ip_pool=load_balancer_ip_pool,
            controller_start_interval=parse_duration(controller_start_interval),
            root_ca_file=root_ca_file,
            use_service_account_credentials=use_service_account_credentials,
            service_account_private_key_file=service_account_private_key_file,
            leader_elect=leader_elect,
            leader_elect_lease_duration=parse_duration(leader_elect_lease_duration),
            leader_elect_renew_deadline=parse_duration(leader_elect_renew_deadline),
            leader_elect_retry_period=parse_duration(leader_elect_retry_period),
            node_monitor_period=parse_duration(node_monitor_period),
            node_monitor_grace_period=parse_duration(node_monitor_grace_period),
            node_startup_grace_period=parse_duration(node_startup_grace_period),
            deleting_pods_qps=deleting_pods_qps,
            deleting_pods_burst=deleting_pods_burst,
            secondary_node_eviction_rate=secondary_node_eviction_rate,
            unhealthy_zone_threshold=unhealthy_zone_threshold,
            large_cluster_size_threshold=large_cluster_size_threshold,
            deployment_controller_sync_period=parse_duration(deployment_controller_sync_period),
            resource_quota_sync_period=parse_duration(resource_quota_sync_period),
            terminated_pod_gc_threshold=terminated_pod_gc_threshold,
            job_pod_failure_backoff_base=parse_duration(job_pod_failure_backoff_base),
            job_pod_failure_backoff_max=parse_duration(job_pod_failure_backoff_max),
            pvclaimbinder_sync_period=parse_duration(pvclaimbinder_sync_period),
            enable_hostpath_provisioner=enable_hostpath_provisioner,
            horizontal_pod_autoscaler_sync_period=parse_duration(horizontal_pod_autoscaler_sync_period),
            horizontal_pod_autoscaler_downscale_stabilization=parse_duration(
                horizontal_pod_autoscaler_downscale_stabilization
            ),
            horizontal_pod_autoscaler_tolerance=horizontal_pod_autoscaler_tolerance,
            horizontal_pod_autoscaler_cpu_initialization_period=parse_duration(
                horizontal_pod_autoscaler_cpu_initialization_period
            ),
            horizontal_pod_autoscaler_initial_readiness_delay=parse_duration(
                horizontal_pod_autoscaler_initial_readiness_delay
            ),
            hostpath_provisioner_root=hostpath_provisioner_root,
            concurrent_syncs={
                "replicationcontroller": concurrent_rc_syncs,
                "replicaset": concurrent_replicaset_syncs,
                "deployment": concurrent_deployment_syncs,
                "endpoints": concurrent_endpoint_syncs,
                "endpointslice": concurrent_service_endpoint_syncs,
                "endpointslicemirroring": mirroring_concurrent_service_endpoint_syncs,
                "garbagecollector": concurrent_gc_syncs,
                "namespace": concurrent_namespace_syncs,
                "job": concurrent_job_syncs,
                "cronjob": concurrent_cron_job_syncs,
                "ttl-after-finished": concurrent_ttl_syncs,
                "daemonset": concurrent_daemonset_syncs,
                "statefulset": concurrent_statefulset_syncs,
                "resourcequota": concurrent_resource_quota_syncs,
                "horizontalpodautoscaling": concurrent_horizontal_pod_autoscaler_syncs,
                "service-lb-controller": concurrent_service_syncs,
            },
            max_endpoints_per_slice=max_endpoints_per_slice,
            mirroring_max_endpoints_per_subset=mirroring_max_endpoints_per_subset,
            mirroring_endpointslice_updates_batch_period=parse_duration(mirroring_endpointslice_updates_batch_period),
            informer_backoff_max=parse_duration(informer_backoff_max),
            verbosity=verbosity,
        )
        if not 1 <= max_endpoints_per_slice <= 1000:
            raise ValueError(f"--max-endpoints-per-slice must be between 1 and 1000, not {max_endpoints_per_slice}")
        if not 1 <= mirroring_max_endpoints_per_subset <= 1000:
            raise ValueError(
                "--mirroring-max-endpoints-per-subset must be between 1 and 1000, "
                f"not {mirroring_max_endpoints_per_subset}"
            )
        if not 1 <= mirroring_concurrent_service_endpoint_syncs <= 50:
            raise ValueError(
                "--mirroring-concurrent-service-endpoint-syncs must be between 1 and 50, "
                f"not {mirroring_concurrent_service_endpoint_syncs}"
            )
        from controller_manager import credentials

        registry.selected(opts.controllers)
        parse_pool(load_balancer_ip_pool)
        creds = credentials.load(root_ca_file, service_account_private_key_file)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    # Logging is already set up from -v/--logtostderr/--log-dir (api/klog.py, via cmdline.run).
    asyncio.run(_main(opts, creds))


async def _main(opts: ManagerOptions, creds: Credentials) -> None:
    from controller_manager.manager import run as run_manager

    task = asyncio.create_task(run_manager(opts, creds))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    try:
        await task
    except asyncio.CancelledError:
        pass


def main() -> None:
    cmdline.run(cli, "mini-controller-manager")
