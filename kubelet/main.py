"""`mini-kubelet`: flags as the real kubelet spells them (plus the fake runtime's knobs), then run.

    mini-kubelet --master http://127.0.0.1:8080 --node-name node-1
    mini-kubelet --master http://127.0.0.1:8080 --node-name sim --nodes 1000 --port 10250

SIGTERM / SIGINT stop it cleanly. The Node and its Lease stay behind, as with a real kubelet:
the node lifecycle controller notices the Lease going stale and marks the node NotReady.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import signal
import socket
import sys
from typing import Annotated

import typer

from api import cmdline
from api.duration import parse_duration
from kubelet.config import AUTHORIZATION_MODES, RUNTIMES, KubeletConfig, parse_ips, parse_labels, parse_taints

cli = typer.Typer(
    add_completion=False,
    help="Registers nodes, heartbeats, and runs the pods bound to them (simulated or real processes).",
)

Duration = Annotated[str, typer.Option(help="Seconds, or a Go duration such as 10s, 5m, 100ms.")]


@cli.command()
def run(
    master: Annotated[str, typer.Option("--master", help="API server URL (overrides kubeconfig).")] = "",
    kubeconfig: Annotated[str, typer.Option("--kubeconfig")] = "",
    node_name: Annotated[str, typer.Option("--node-name", "--hostname-override", help="Default: the hostname.")] = "",
    nodes: Annotated[int, typer.Option("--nodes", help="Simulate N nodes <node-name>-0..N-1 in this process.")] = 1,
    cpu: Annotated[str, typer.Option("--cpu", help="Node capacity: cpu.")] = "4",
    memory: Annotated[str, typer.Option("--memory", help="Node capacity: memory.")] = "8Gi",
    max_pods: Annotated[int, typer.Option("--max-pods")] = 110,
    node_labels: Annotated[str, typer.Option("--node-labels", help="k=v,k2=v2")] = "",
    register_with_taints: Annotated[str, typer.Option("--register-with-taints", help="key=value:Effect,...")] = "",
    node_status_update_frequency: Annotated[str, typer.Option("--node-status-update-frequency")] = "10s",
    node_status_report_frequency: Annotated[
        str, typer.Option("--node-status-report-frequency", help="Post an unchanged node status this often.")
    ] = "5m",
    node_lease_duration: Annotated[
        str, typer.Option("--node-lease-duration", help="Lease leaseDurationSeconds; renewed every quarter.")
    ] = "40s",
    pod_startup_delay: Annotated[
        str, typer.Option("--pod-startup-delay", help="Simulated ContainerCreating time.")
    ] = "1s",
    port: Annotated[int, typer.Option("--port", help="The kubelet API (exec, logs, metrics); 0 disables.")] = 10250,
    address: Annotated[str, typer.Option("--address", "--node-ip", help="The node's InternalIP.")] = "127.0.0.1",
    cluster_cidr: Annotated[
        str, typer.Option("--cluster-cidr", help="Pod CIDRs (/24 per node) come from here.")
    ] = "10.244.0.0/14",
    pod_cidr: Annotated[str, typer.Option("--pod-cidr", help="Fixed podCIDR (single node only).")] = "",
    kube_api_qps: Annotated[float, typer.Option("--kube-api-qps", help="Per simulated node.")] = 50.0,
    kube_api_burst: Annotated[int, typer.Option("--kube-api-burst", help="Per simulated node.")] = 100,
    crashloop_backoff_base: Annotated[str, typer.Option("--crashloop-backoff-base")] = "10s",
    crashloop_backoff_max: Annotated[str, typer.Option("--crashloop-backoff-max")] = "5m",
    job_run_time: Annotated[
        str, typer.Option("--job-run-time", help="How long a Job's unmodelled command runs before exit 0.")
    ] = "2s",
    log_line_interval: Annotated[
        str, typer.Option("--log-line-interval", help="A synthetic 'alive' log line this often; 0: none.")
    ] = "10s",
    container_stop_delay: Annotated[
        str, typer.Option("--container-stop-delay", help="Simulated SIGTERM handling time (capped by grace).")
    ] = "0s",
    runtime: Annotated[
        str, typer.Option("--runtime", help="simulated (modelled containers) or process (real child processes).")
    ] = "simulated",
    root_dir: Annotated[
        str, typer.Option("--root-dir", help="The process runtime's state: containers, logs, exit codes.")
    ] = "/var/lib/mini-kubelet",
    pod_network: Annotated[
        str,
        typer.Option("--pod-network", help="Process runtime: bridge (a network namespace per pod) or host."),
    ] = "bridge",
    cluster_dns: Annotated[
        str, typer.Option("--cluster-dns", help="The cluster DNS's IPs (comma-separated) for ClusterFirst pods.")
    ] = "",
    cluster_domain: Annotated[
        str, typer.Option("--cluster-domain", help="The cluster's DNS zone, e.g. cluster.local.")
    ] = "",
    resolv_conf: Annotated[
        str, typer.Option("--resolv-conf", help="The node's resolver configuration, for dnsPolicy Default.")
    ] = "/etc/resolv.conf",
    tls_cert_file: Annotated[
        str, typer.Option("--tls-cert-file", help="Serving certificate: --port then also speaks HTTPS (PEM).")
    ] = "",
    tls_private_key_file: Annotated[str, typer.Option("--tls-private-key-file", help="Its private key (PEM).")] = "",
    client_ca_file: Annotated[
        str,
        typer.Option("--client-ca-file", help="CA of client certificates; exec/attach need a caller it verifies."),
    ] = "",
    authorization_mode: Annotated[
        str, typer.Option("--authorization-mode", help="AlwaysAllow or Webhook (SubjectAccessReview).")
    ] = "AlwaysAllow",
    verbosity: Annotated[int, typer.Option("-v", "--v", help="Log verbosity (0-4).")] = 0,
) -> None:
    try:
        if runtime not in RUNTIMES:
            raise ValueError(f"invalid --runtime {runtime!r}: must be one of {', '.join(RUNTIMES)}")
        if authorization_mode not in AUTHORIZATION_MODES:
            raise ValueError(f"invalid --authorization-mode {authorization_mode!r}: must be AlwaysAllow or Webhook")
        if bool(tls_cert_file) != bool(tls_private_key_file):
            raise ValueError("--tls-cert-file and --tls-private-key-file go together")
        if client_ca_file and not tls_cert_file:
            raise ValueError("--client-ca-file needs --tls-cert-file and --tls-private-key-file (HTTPS)")
        if pod_network not in ("bridge", "host"):
            raise ValueError(f"invalid --pod-network {pod_network!r}: must be bridge or host")
        if runtime == "process" and (sys.platform != "linux" or os.geteuid() != 0):
            raise ValueError(
                "--runtime process needs Linux and root (cgroups, namespaces): run it with sudo, "
                "or use --runtime simulated"
            )
        config = KubeletConfig(
            master=cmdline.server_url(master),
            kubeconfig=kubeconfig,
            node_name=(node_name or socket.gethostname()).lower(),
            nodes=max(nodes, 1),
            cpu=cpu,
            memory=memory,
            max_pods=max_pods,
            node_labels=parse_labels(node_labels),
            register_with_taints=parse_taints(register_with_taints),
            node_status_update_frequency=parse_duration(node_status_update_frequency),
            node_status_report_frequency=parse_duration(node_status_report_frequency),
            node_lease_duration=parse_duration(node_lease_duration),
            pod_startup_delay=parse_duration(pod_startup_delay),
            port=port,
            address=address,
            cluster_cidr=cluster_cidr,
            pod_cidr=pod_cidr,
            kube_api_qps=kube_api_qps,
            kube_api_burst=kube_api_burst,
            crashloop_backoff_base=parse_duration(crashloop_backoff_base),
            crashloop_backoff_max=parse_duration(crashloop_backoff_max),
            job_run_time=parse_duration(job_run_time),
            log_line_interval=parse_duration(log_line_interval),
            container_stop_delay=parse_duration(container_stop_delay),
            runtime=runtime,
            root_dir=root_dir,
            pod_network=pod_network,
            cluster_dns=parse_ips(cluster_dns),
            cluster_domain=cluster_domain.strip("."),
            resolv_conf=resolv_conf,
            verbosity=verbosity,
            tls_cert_file=tls_cert_file,
            tls_private_key_file=tls_private_key_file,
            client_ca_file=client_ca_file,
            authorization_mode=authorization_mode,
        )
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    # logging is set up from -v/--logtostderr/--log-dir already (api/klog.py, via cmdline.run)
    asyncio.run(_main(config))


async def _main(config: KubeletConfig) -> None:
    from kubelet.kubelet import Kubelet

    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>` prints every thread's stack: debugging aid

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    kubelet = Kubelet(config)
    runner = asyncio.create_task(kubelet.run(stop))
    await stop.wait()
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    await kubelet.shutdown()


def main() -> None:
    cmdline.run(cli, "mini-kubelet")
