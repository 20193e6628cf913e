"""`mini-k8s`: up, down, status - a whole cluster on one machine, one process per component.

    mini-k8s up                      # API server + controller-manager + scheduler + 3 kubelets
    mini-k8s up -d --nodes 5         # in the background; PIDs in .mini-k8s/run/
    mini-k8s status
    mini-k8s down
    mini-k8s addons --kubeconfig admin.conf --master https://apiserver:6443 --cluster-dns cluster-dns:10053   # compose
    mini-k8s certs --dir /var/lib/mini-k8s/cluster --server https://apiserver:6443 --kubelet kubelet-1   # another

Timing flags (`--node-monitor-grace-period 10s`, `--node-status-update-frequency 2s`, …) are
passed to the component that owns them, so the node-failure lab takes seconds instead of
minutes; anything else goes through `--kube-apiserver-arg`, `--kube-controller-manager-arg`,
`--kube-scheduler-arg` and `--kubelet-arg` (k3s's names), e.g. `--kubelet-arg=--cpu=8`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from cluster.classroom import CLASSROOM, apiserver_args_with_preset, controller_manager_args_with_preset
from cluster.plan import CLUSTER_CIDR, SERVICE_CIDR, ClusterOptions, check_ranges
from cluster.ports import kubelet_ports, port_free
from cluster.processes import remove_containers, remove_proxy_rules, stop_all
from cluster.runtime_choice import RUNTIMES, choose_runtime
from cluster.state import RunState

# Plain click help (rich_markup_mode None), as the components have: typer's boxes cut long flag
# names at 80 columns (`--service-cluster-ip-r…`).
app = typer.Typer(
    add_completion=False, no_args_is_help=True, rich_markup_mode=None,
    help="mini-k8s: starts the whole stack locally as separate processes.",
)  # fmt: skip

DataDir = Annotated[str, typer.Option("--data-dir", help="Store (embedded SQLite), logs and PIDs.")]
Duration = str | None


def data_dir_path(text: str) -> Path:
    return Path(text).expanduser().absolute()


def _fail(msg: str) -> None:
    typer.echo(f"✗ {msg}", err=True)
    raise typer.Exit(1)


@app.command()
def up(
    data_dir: DataDir = "./.mini-k8s",
    etcd_servers: Annotated[
        str, typer.Option("--etcd-servers", help="Use etcd instead of the embedded store.")
    ] = "",
    etcd_prefix: Annotated[str, typer.Option("--etcd-prefix", help="Key prefix in etcd.")] = "",
    nodes: Annotated[int, typer.Option("--nodes", min=0, help="Kubelet processes, one node each.")] = 3,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            help="The API server's plain HTTP port: no authentication, no authorization [8080; with --secure "
            "none unless given].",
        ),
    ] = None,
    bind_address: Annotated[str, typer.Option("--bind-address", help="API server address.")] = "127.0.0.1",
    secure: Annotated[
        bool, typer.Option("--secure", help="HTTPS, certificates and RBAC; the kubeconfig gets an admin certificate.")
    ] = False,
    secure_port: Annotated[int, typer.Option("--secure-port", help="The HTTPS port with --secure.")] = 6443,
    controller_manager_port: Annotated[int, typer.Option("--controller-manager-port")] = 10252,
    scheduler_port: Annotated[int, typer.Option("--scheduler-port")] = 10251,
    dns_port: Annotated[
        int, typer.Option("--dns-port", help="The cluster DNS (UDP and TCP); 0: none.")
    ] = 10053,
    dns_health_port: Annotated[int, typer.Option("--dns-health-port", help="The cluster DNS's /healthz.")] = 10054,
    metrics_server_port: Annotated[
        int, typer.Option("--metrics-server-port", help="metrics-server (kubectl top, the HPA); 0: none.")
    ] = 10260,
    metric_resolution: Annotated[
        Duration, typer.Option("--metric-resolution", help="How often metrics-server scrapes the kubelets [15s].")
    ] = None,
    kube_proxy_port: Annotated[
        int, typer.Option("--kube-proxy-port", help="kube-proxy's /healthz (with --runtime process); 0: none.")
    ] = 10256,
    kubelet_port: Annotated[
        int, typer.Option("--kubelet-port", help="node-1's; the others the next free.")
    ] = 10250,
    node_monitor_period: Annotated[Duration, typer.Option("--node-monitor-period")] = None,
    node_monitor_grace_period: Annotated[Duration, typer.Option("--node-monitor-grace-period")] = None,
    node_status_update_frequency: Annotated[Duration, typer.Option("--node-status-update-frequency")] = None,
    node_lease_duration: Annotated[Duration, typer.Option("--node-lease-duration")] = None,
    pod_startup_delay: Annotated[Duration, typer.Option("--pod-startup-delay")] = None,
    cpu: Annotated[str | None, typer.Option("--cpu", help="Each node's cpu capacity.")] = None,
    memory: Annotated[str | None, typer.Option("--memory", help="Each node's memory capacity.")] = None,
    max_pods: Annotated[int | None, typer.Option("--max-pods")] = None,
    runtime: Annotated[
        str, typer.Option("--runtime", help="The kubelets' runtime: auto (process when root on Linux), simulated, "
                                            "or process (real containers; root).")
    ] = "auto",
    service_cluster_ip_range: Annotated[
        str, typer.Option("--service-cluster-ip-range", help="Services' addresses; the DNS Service gets the 10th.")
    ] = SERVICE_CIDR,
    cluster_cidr: Annotated[
        str, typer.Option("--cluster-cidr", help="Pods' addresses, a /24 per node.")
    ] = CLUSTER_CIDR,
    not_ready_toleration: Annotated[
        int | None, typer.Option("--default-not-ready-toleration-seconds")
    ] = None,
    unreachable_toleration: Annotated[
        int | None, typer.Option("--default-unreachable-toleration-seconds")
    ] = None,
    apiserver_arg: Annotated[list[str] | None, typer.Option("--kube-apiserver-arg")] = None,
    controller_manager_arg: Annotated[list[str] | None, typer.Option("--kube-controller-manager-arg")] = None,
    scheduler_arg: Annotated[list[str] | None, typer.Option("--kube-scheduler-arg")] = None,
    kubelet_arg: Annotated[list[str] | None, typer.Option("--kubelet-arg")] = None,
    metrics_server_arg: Annotated[list[str] | None, typer.Option("--metrics-server-arg")] = None,
    kube_proxy_arg: Annotated[list[str] | None, typer.Option("--kube-proxy-arg")] = None,
    kubeconfig: Annotated[
        str,
        typer.Option(
            "--kubeconfig", help="Write here (default: $KUBECONFIG's first file, else ~/.kube/config)."
        ),
    ] = "",
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds until every node must be Ready.")
    ] = 60.0,
    detach: Annotated[
        bool, typer.Option("-d", "--detach", help="Start in the background and return.")
    ] = False,
    verbosity: Annotated[int, typer.Option("-v", "--v", help="Log verbosity of every component.")] = 0,
    classroom: Annotated[
        bool,
        typer.Option(
            "--classroom",
            help="Lab timings: a dead node is noticed in 10 s, its pods move 5 s later, the HPA acts in seconds.",
        ),
    ] = False,
) -> None:
    """Start the cluster; with -d return once every node is Ready, else run until Ctrl-C."""
    if classroom:  # the preset fills in what the command line left unset (cluster/classroom.py)
        p = CLASSROOM
        node_status_update_frequency = node_status_update_frequency or p.node_status_update_frequency
        node_lease_duration = node_lease_duration or p.node_lease_duration
        node_monitor_period = node_monitor_period or p.node_monitor_period
        node_monitor_grace_period = node_monitor_grace_period or p.node_monitor_grace_period
        if not_ready_toleration is None:
            not_ready_toleration = p.default_not_ready_toleration_seconds
        if unreachable_toleration is None:
            unreachable_toleration = p.default_unreachable_toleration_seconds
        apiserver_arg = apiserver_args_with_preset(apiserver_arg or [], p)
        controller_manager_arg = controller_manager_args_with_preset(controller_manager_arg or [], p)
        metric_resolution = metric_resolution or p.metric_resolution
    if runtime not in RUNTIMES:
        _fail(f"invalid --runtime {runtime!r}: must be auto, simulated or process")
    runtime, runtime_sentence = choose_runtime(runtime)
    if port is None:  # the plain port bypasses authentication: a secure cluster has it only when asked
        port = 0 if secure else 8080
    if not port and not (secure and secure_port):
        _fail("--port 0 leaves the API server no port: give --secure (and a --secure-port), or a port")
    problem = check_ranges(service_cluster_ip_range, cluster_cidr, nodes)
    if problem:
        _fail(f"invalid address ranges: {problem}")
    path = data_dir_path(data_dir)
    _refuse_if_running(path)
    wanted = [
        ("--controller-manager-port", controller_manager_port, "the controller-manager", "127.0.0.1"),
        ("--scheduler-port", scheduler_port, "the scheduler", "127.0.0.1"),
    ]
    if port:
        wanted.insert(0, ("--port", port, "the API server", bind_address))
    if secure:
        wanted.append(("--secure-port", secure_port, "the API server's HTTPS", bind_address))
    if dns_port:
        wanted.append(("--dns-port", dns_port, "the cluster DNS", "127.0.0.1"))
        wanted.append(("--dns-health-port", dns_health_port, "the cluster DNS's /healthz", "127.0.0.1"))
    if metrics_server_port:
        wanted.append(("--metrics-server-port", metrics_server_port, "metrics-server", "127.0.0.1"))
    if kube_proxy_port and runtime == "process":
        wanted.append(("--kube-proxy-port", kube_proxy_port, "kube-proxy's /healthz", "127.0.0.1"))
    if nodes:
        wanted.append(("--kubelet-port", kubelet_port, "node-1's kubelet", "127.0.0.1"))
    taken = _refuse_busy_ports(wanted)
    opts = ClusterOptions(
        data_dir=path,
        port=port,
        bind_address=bind_address,
        secure_port=secure_port if secure else 0,
        nodes=nodes,
        etcd_servers=etcd_servers,
        etcd_prefix=etcd_prefix,
        controller_manager_port=controller_manager_port,
        scheduler_port=scheduler_port,
        dns_port=dns_port,
        dns_health_port=dns_health_port,
        metrics_server_port=metrics_server_port,
        kube_proxy_port=kube_proxy_port,
        metric_resolution=metric_resolution or ClusterOptions.metric_resolution,
        kubelet_ports=kubelet_ports(kubelet_port, nodes, reserved=taken) if nodes else [],
        node_monitor_period=node_monitor_period,
        node_monitor_grace_period=node_monitor_grace_period,
        node_status_update_frequency=node_status_update_frequency,
        node_lease_duration=node_lease_duration,
        pod_startup_delay=pod_startup_delay,
        cpu=cpu,
        memory=memory,
        max_pods=max_pods,
        runtime=runtime,
        service_cluster_ip_range=service_cluster_ip_range,
        cluster_cidr=cluster_cidr,
        default_not_ready_toleration_seconds=not_ready_toleration,
        default_unreachable_toleration_seconds=unreachable_toleration,
        verbosity=verbosity,
        apiserver_args=apiserver_arg or [],
        controller_manager_args=controller_manager_arg or [],
        scheduler_args=scheduler_arg or [],
        kubelet_args=kubelet_arg or [],
        metrics_server_args=metrics_server_arg or [],
        kube_proxy_args=kube_proxy_arg or [],
    )
    path.mkdir(parents=True, exist_ok=True)
    typer.echo(runtime_sentence)
    from cluster.up import run_up  # imports the client library: only `up` and `status` need it

    raise typer.Exit(asyncio.run(run_up(opts, detach=detach, timeout=timeout, kubeconfig=kubeconfig)))


@app.command()
def down(
    data_dir: DataDir = "./.mini-k8s",
    stop_timeout: Annotated[float, typer.Option("--timeout", help="Seconds before SIGKILL.")] = 10.0,
) -> None:
    """Stop every component started from this data dir (SIGTERM, then SIGKILL). Data is kept."""
    path = data_dir_path(data_dir)
    state = RunState.load(path)
    if state is None:
        typer.echo(f"nothing is running from {path}")
        return
    stop_all(state.running(), timeout=stop_timeout, report=typer.echo)
    remove_containers(path, report=typer.echo)
    remove_proxy_rules(state.components, report=typer.echo)
    state.clear()
    typer.echo(f"mini-k8s stopped (data kept in {path})")


@app.command()
def addons(
    master: Annotated[
        str, typer.Option("--master", help="The API server's address [the kubeconfig's, else http://127.0.0.1:8080].")
    ] = "",
    kubeconfig: Annotated[
        str, typer.Option("--kubeconfig", help="Whose credentials (and which server, unless --master) to use.")
    ] = "",
    cluster_dns: Annotated[
        str, typer.Option("--cluster-dns", metavar="HOST:PORT", help="Where the cluster DNS listens: kube-dns.")
    ] = "",
    metrics_server: Annotated[
        str, typer.Option("--metrics-server", metavar="HOST:PORT", help="Where metrics-server listens.")
    ] = "",
    service_cluster_ip_range: Annotated[
        str, typer.Option("--service-cluster-ip-range", help="The API server's; kube-dns takes its tenth address.")
    ] = SERVICE_CIDR,
    wait: Annotated[str, typer.Option("--wait", help="How long to wait for the API server (Go duration).")] = "60s",
) -> None:
    """Create the add-on objects (default StorageClass, kube-dns, the metrics API) for components
    running elsewhere, e.g. in docker compose (cluster/addons_command.py)."""
    from api.duration import parse_duration
    from client.kubeconfig import ClientConfig, ConfigError, client_config
    from cluster.addons_command import AddonError, install

    try:
        client = client_config(kubeconfig, master=master or None) if kubeconfig else ClientConfig(
            master or "http://127.0.0.1:8080"
        )
        lines = asyncio.run(install(client, cluster_dns, metrics_server, service_cluster_ip_range,
                                    parse_duration(wait)))  # fmt: skip
    except (AddonError, ConfigError, ValueError) as exc:
        _fail(str(exc))
    for line in lines:
        typer.echo(line if line.startswith("!") else f"✓ {line}")
    if not lines:
        typer.echo("✓ every add-on object is already as wanted")


@app.command()
def certs(
    directory: Annotated[str, typer.Option("--dir", help="Where pki/, kubeconfigs/, admin.conf go.")] = "./.mini-k8s",
    server: Annotated[
        str, typer.Option("--server", help="The API server's URL as the components reach it (their kubeconfigs).")
    ] = "https://127.0.0.1:6443",
    admin_server: Annotated[
        str, typer.Option("--admin-server", help="The API server's URL as users reach it (admin.conf) [--server].")
    ] = "",
    apiserver_name: Annotated[
        list[str] | None,
        typer.Option("--apiserver-name", help="Another DNS name or IP of the API server's certificate (repeatable)."),
    ] = None,
    kubelet: Annotated[
        list[str] | None,
        typer.Option("--kubelet", metavar="NODE[=ADDRESS]", help="A kubelet's node and address (repeatable)."),
    ] = None,
    service_cluster_ip_range: Annotated[
        str, typer.Option("--service-cluster-ip-range", help="The API server's; `kubernetes` has its first address.")
    ] = SERVICE_CIDR,
) -> None:
    """Make the cluster's certificates and kubeconfigs for components running elsewhere, e.g. in
    docker compose (cluster/certs_command.py); files that exist are kept."""
    from cluster.certs_command import CertsError, make_certs, parse_kubelet
    from cluster.plan import kubernetes_service_ip

    try:
        kubernetes_ip = kubernetes_service_ip(service_cluster_ip_range)
        lines = make_certs(data_dir_path(directory), server, admin_server or server, apiserver_name or [],
                           [parse_kubelet(k) for k in kubelet or []], kubernetes_ip)  # fmt: skip
    except (CertsError, ValueError) as exc:
        _fail(str(exc))
    for line in lines:
        typer.echo(f"✓ {line}")


@app.command()
def status(data_dir: DataDir = "./.mini-k8s") -> None:
    """Which components run (PID, port), and the nodes as the API server sees them."""
    path = data_dir_path(data_dir)
    state = RunState.load(path)
    if state is None:
        typer.echo(f"mini-k8s is not running from {path}")
        raise typer.Exit(1)
    alive = {h.name for h in state.running()}
    typer.echo(f"{'COMPONENT':<24}{'PID':<9}{'PORT':<7}STATUS")
    for c in state.components:
        typer.echo(
            f"{c['name']:<24}{c['pid']:<9}{c['port']:<7}{'running' if c['name'] in alive else 'exited'}"
        )
    from cluster.readiness import node_ready

    nodes = asyncio.run(_nodes(state.server, path))
    typer.echo(f"\nAPI server {state.server}: {len(nodes)} node(s)")
    for n in nodes:
        typer.echo(f"  {n['metadata']['name']:<22}{'Ready' if node_ready(n) else 'NotReady'}")


async def _nodes(server: str, data_dir: Path) -> list[dict[str, Any]]:
    from cluster.readiness import Prober, admin_credentials

    prober = Prober(server, admin_credentials(server, data_dir / "pki"))
    try:
        return await prober.nodes()
    finally:
        await prober.aclose()


def _refuse_if_running(path: Path) -> None:
    previous = RunState.load(path)
    if previous is None:
        return
    if alive := previous.running():
        pids = ", ".join(f"{h.name}={h.pid}" for h in alive)
        _fail(
            f"mini-k8s is already running from {path} ({pids}).\n"
            f"  Stop it first: mini-k8s down --data-dir {path}"
        )
    previous.clear()  # stale: its processes are gone


def _refuse_busy_ports(wanted: list[tuple[str, int, str, str]]) -> set[int]:
    """Every (flag, port, who, host) must be distinct and free; returns the ports."""
    seen: set[int] = set()
    for flag, port, who, host in wanted:
        if port in seen:
            _fail(f"port {port} is given to two components; choose another with {flag}")
        seen.add(port)
        if not port_free(port, "127.0.0.1" if host in ("0.0.0.0", "::", "") else host):
            _fail(
                f"port {port} is already in use, so {who} cannot listen on it. Is another mini-k8s or "
                f"API server running? Stop it, or choose another port with {flag}."
            )
    return seen


def main() -> None:
    app()
