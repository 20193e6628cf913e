"""The plan of a local cluster: which processes `mini-k8s up` starts, with which flags.

Data, so it can be printed, tested and reasoned about; the one I/O is with `--secure`, where the
certificates and kubeconfigs a component's flags name are made if missing (cluster/pki.py,
cluster/identities.py), so no flag ever points at a file that is not there. The order of the list is the
start order; `down` and Ctrl-C stop in the reverse order (kubelets first, API server last), the
way you would drain a real control plane: nothing talks to an API server that is already gone.

Every component gets `--master http://127.0.0.1:<port>` (the plain port, as `system:unsecured`) or,
with `--secure`, its own kubeconfig in `<data-dir>/kubeconfigs/` (HTTPS, its own certificate and
identity: cluster/identities.py) — never the user's kubeconfig: a component must keep talking to
*this* cluster even if the user switches kubectl's current context.

Ports (each must be free; `up` refuses to start otherwise):
- API server: `--port` (8080, the old insecure port that kubectl falls back to: no authentication,
  no authorization; with `--secure` none unless given) and, with `--secure`, `--secure-port` 6443;
- controller-manager 10252 and scheduler 10251 (their historical /healthz ports);
- the cluster DNS (`mini-cluster-dns`) on `--dns-port` 10053 (UDP and TCP) of 127.0.0.1 and, with
  real pods, of every node's bridge address, where the `kube-dns` Service (10.96.0.10:53, which
  the kubelets' `--cluster-dns` names) sends pods (cluster/dns_addon.py); /healthz on 10054;
- metrics-server (`mini-metrics-server`) on `--metrics-server-port` 10260, reached by the API
  server's aggregation layer through the APIService `v1beta1.metrics.k8s.io` (cluster/addons.py);
- with `--runtime process`, `mini-kube-proxy` with its /healthz on `--kube-proxy-port` 10256: one
  for the machine, since every node shares the host's network stack (kube_proxy/main.py says
  more); the simulated runtime's pods have no network for it to reach, so it is not started there;
- kubelets: node-1 on `--kubelet-port` (10250), the others on the next free ports above it,
  skipping the ports above. Each kubelet reports InternalIP 127.0.0.1 and its own port in
  `status.daemonEndpoints`, so `kubectl logs` through the API server reaches the right one.
  With `--secure` each also serves HTTPS there (its own certificate, callers checked against the
  cluster CA, authorized by a SubjectAccessReview), which `kubectl exec`/`cp` need, and the API
  server reaches it with its apiserver-kubelet-client certificate (cluster/pki.py).

Pod networks: node-i gets `--pod-cidr 10.244.<i-1>.0/24` (the i-th /24 of `--cluster-cidr`), so pod
IPs are unique cluster-wide, all inside the cluster CIDR, which kube-proxy is told (clients outside
it are masqueraded). Services get addresses from `--service-cluster-ip-range` (10.96.0.0/12), the
DNS Service the tenth (10.96.0.10).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from cluster import identities
from cluster.dns_addon import CLUSTER_DOMAIN
from cluster.pki import KUBELET_CLIENT, kubelet_serving

# (component kind, python package) - the package is what runs as `python -m <package>`.
MODULES = {
    "apiserver": "apiserver",
    "controller-manager": "controller_manager",
    "scheduler": "scheduler",
    "kubelet": "kubelet",
    "cluster-dns": "cluster_dns",
    "metrics-server": "metrics_server",
    "kube-proxy": "kube_proxy",
}


@dataclass(frozen=True)
class Component:
    """One process of the cluster."""

    name: str  # "apiserver", "controller-manager", "scheduler", "kubelet-node-1"
    kind: str  # a key of MODULES
    args: tuple[str, ...]
    port: int  # where it answers /readyz (API server) or /healthz (everything else)
    node: str = ""  # kubelets only: the Node it registers

    @property
    def module(self) -> str:
        return MODULES[self.kind]

    @property
    def health_path(self) -> str:
        return "/readyz" if self.kind == "apiserver" else "/healthz"


CLUSTER_CIDR = "10.244.0.0/14"  # the kubelet's default --cluster-cidr; room for 1,024 nodes' /24s
SERVICE_CIDR = "10.96.0.0/12"  # the API server's default --service-cluster-ip-range


@dataclass
class ClusterOptions:
    """Everything `mini-k8s up` was asked for. Optional timing flags are passed through only when
    set, so each component keeps Kubernetes' defaults unless the user shrinks them."""

    data_dir: Path
    port: int = 8080
    bind_address: str = "127.0.0.1"
    nodes: int = 3
    etcd_servers: str = ""
    etcd_prefix: str = ""
    controller_manager_port: int = 10252
    scheduler_port: int = 10251
    dns_port: int = 10053  # 0: no cluster DNS
    dns_health_port: int = 10054
    metrics_server_port: int = 10260  # 0: no metrics-server (and no metrics API)
    kube_proxy_port: int = 10256  # its /healthz; 0: no kube-proxy (it runs only with the process runtime)
    metric_resolution: str = "15s"  # what metrics-server's own manifest sets (its flag defaults to 60s)
    kubelet_ports: list[int] = field(default_factory=list)  # one per node (see ports.py)
    # controller-manager
    node_monitor_period: str | None = None
    node_monitor_grace_period: str | None = None
    # kubelet
    node_status_update_frequency: str | None = None
    node_lease_duration: str | None = None
    pod_startup_delay: str | None = None
    cpu: str | None = None
    memory: str | None = None
    max_pods: int | None = None
    runtime: str = "simulated"  # the kubelets' --runtime (process: real containers, needs root)
    # the address ranges: Services (API server, kube-proxy, the DNS Service's address) and pods
    # (a /24 per node, kube-proxy's --cluster-cidr); two clusters on one machine need their own
    service_cluster_ip_range: str = SERVICE_CIDR
    cluster_cidr: str = CLUSTER_CIDR
    # API server
    secure_port: int = 0  # --secure: HTTPS with the certificates of <data-dir>/pki (cluster/pki.py) and RBAC
    default_not_ready_toleration_seconds: int | None = None
    default_unreachable_toleration_seconds: int | None = None
    verbosity: int = 0
    # escape hatches, named like k3s's: any flag the options above do not cover
    apiserver_args: list[str] = field(default_factory=list)
    controller_manager_args: list[str] = field(default_factory=list)
    scheduler_args: list[str] = field(default_factory=list)
    kubelet_args: list[str] = field(default_factory=list)
    metrics_server_args: list[str] = field(default_factory=list)
    kube_proxy_args: list[str] = field(default_factory=list)

    @property
    def pki_dir(self) -> Path:
        return self.data_dir / "pki"

    @property
    def secure_server(self) -> str:
        """The URL users and components get in their kubeconfigs with --secure."""
        host = "127.0.0.1" if self.bind_address in ("0.0.0.0", "::", "") else self.bind_address
        return f"https://{host}:{self.secure_port}"

    @property
    def server(self) -> str:
        """The URL `up` itself uses (loopback even when the API server binds 0.0.0.0): the plain port
        when there is one, else HTTPS (as the administrator: cluster/readiness.py)."""
        if not self.port:
            return self.secure_server
        host = "127.0.0.1" if self.bind_address in ("0.0.0.0", "::", "") else self.bind_address
        return f"http://{host}:{self.port}"


def kubelet_root_dir(data_dir: Path, node: str) -> Path:
    """Where a process-runtime kubelet keeps its containers (`mini-k8s down` empties it)."""
    return data_dir / "kubelet" / node


def node_names(count: int) -> list[str]:
    return [f"node-{i}" for i in range(1, count + 1)]


def pod_cidr(index: int, cluster_cidr: str = CLUSTER_CIDR) -> str:
    """node-1 gets 10.244.0.0/24, node-2 10.244.1.0/24, … (the /24s of --cluster-cidr, the
    kubelet's default 10.244.0.0/14). Pinned, because kubelet *processes* that start in the same
    instant would otherwise each pick the lowest free range - the same one."""
    return f"{ipaddress.ip_network(cluster_cidr).network_address + 256 * index}/24"


def check_ranges(service_cidr: str, cluster_cidr: str, nodes: int) -> str:
    """What is wrong with the two ranges `up` was given, or ""."""
    try:
        services = ipaddress.ip_network(service_cidr)
        pods = ipaddress.ip_network(cluster_cidr)
    except ValueError as exc:
        return str(exc)
    if services.version != 4 or pods.version != 4:
        return "only IPv4 ranges are supported"
    if services.num_addresses < 16:
        return f"--service-cluster-ip-range {service_cidr} is too small (the DNS Service takes its tenth address)"
    if pods.prefixlen > 24 or pods.num_addresses // 256 < nodes:
        return f"--cluster-cidr {cluster_cidr} has no room for a /24 per node ({nodes})"
    if services.overlaps(pods):
        return f"--service-cluster-ip-range {service_cidr} overlaps --cluster-cidr {cluster_cidr}"
    return ""


def kubernetes_service_ip(service_cidr: str) -> str:
    """The `kubernetes` Service's ClusterIP: the first address of the range, as kube-apiserver picks it."""
    return str(ipaddress.ip_network(service_cidr).network_address + 1)


def cluster_dns_ip(service_cidr: str) -> str:
    """The `kube-dns` Service's address: the tenth of the Service range, as kubeadm picks it."""
    return str(ipaddress.ip_network(service_cidr).network_address + 10)


def dns_endpoints(opts: ClusterOptions) -> list[str]:
    """Where pods reach the cluster DNS (the `kube-dns` Endpoints, cluster/dns_addon.py): each node's
    bridge address with real pods; the host's loopback with simulated ones, which have no network."""
    if opts.runtime != "process" or not opts.nodes:
        return ["127.0.0.1"]
    return [str(ipaddress.ip_network(pod_cidr(i, opts.cluster_cidr)).network_address + 1) for i in range(opts.nodes)]


def _optional(flag: str, value: object) -> list[str]:
    return [] if value is None else [flag, str(value)]


def _split_extra(values: list[str]) -> list[str]:
    """`--kubelet-arg='--cpu 8'` or `--kubelet-arg=--cpu=8`: each value may hold several words."""
    out: list[str] = []
    for v in values:
        out.extend(v.split())
    return out


def _secure_apiserver_args(opts: ClusterOptions) -> list[str]:
    """HTTPS, x509 and ServiceAccount-token authentication, RBAC (the files: cluster/pki.py). A plain
    --port is there only when the user asked for one (`--port 0` otherwise: the API server's default
    is 8080)."""
    if not opts.secure_port:
        return []
    pki = opts.pki_dir
    return ["--secure-port", str(opts.secure_port), "--tls-cert-file", str(pki / "apiserver.crt"),
            "--tls-private-key-file", str(pki / "apiserver.key"), "--client-ca-file", str(pki / "ca.crt"),
            "--service-account-key-file", str(pki / "sa.key"), "--service-account-signing-key-file",
            str(pki / "sa.key"), "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--authorization-mode", "Node,RBAC", "--kubelet-client-certificate", str(pki / f"{KUBELET_CLIENT}.crt"),
            "--kubelet-client-key", str(pki / f"{KUBELET_CLIENT}.key"),
            "--kubelet-certificate-authority", str(pki / "ca.crt")]  # fmt: skip


def _secure_kubelet_args(opts: ClusterOptions, node: str, address: str) -> list[str]:
    """The kubelet's API on HTTPS (its certificate is made here if missing: cluster/pki.py), callers
    authenticated by the cluster CA and authorized by the API server (Webhook), as kubeadm sets it:
    exec and attach need that, and the API server presents its apiserver-kubelet-client certificate."""
    if not opts.secure_port:
        return []
    pair = kubelet_serving(opts.pki_dir, node, address)
    return ["--tls-cert-file", str(pair.cert), "--tls-private-key-file", str(pair.key),
            "--client-ca-file", str(opts.pki_dir / "ca.crt"), "--authorization-mode", "Webhook"]  # fmt: skip


def _connect(opts: ClusterOptions, identity: str) -> list[str]:
    """How a component reaches the API server: with --secure, HTTPS as itself (its kubeconfig and
    client certificate: cluster/identities.py); else the plain port as `system:unsecured`."""
    if not opts.secure_port:
        return ["--master", opts.server]
    return ["--kubeconfig", str(identities.kubeconfig(opts.data_dir, opts.secure_server, identity))]


def plan(opts: ClusterOptions) -> list[Component]:
    """The processes to start, in start order."""
    verbose = ["-v", str(opts.verbosity)] if opts.verbosity else []

    api_args = [
        "--data-dir",
        str(opts.data_dir),
        "--bind-address",
        opts.bind_address,
        "--port",
        str(opts.port),
    ]
    if opts.service_cluster_ip_range != SERVICE_CIDR:
        api_args += ["--service-cluster-ip-range", opts.service_cluster_ip_range]
    if opts.etcd_servers:
        api_args += ["--etcd-servers", opts.etcd_servers]
        api_args += _optional("--etcd-prefix", opts.etcd_prefix or None)
    api_args += _optional("--default-not-ready-toleration-seconds", opts.default_not_ready_toleration_seconds)
    api_args += _optional(
        "--default-unreachable-toleration-seconds", opts.default_unreachable_toleration_seconds
    )
    api_args += _secure_apiserver_args(opts)
    components = [
        Component(
            "apiserver", "apiserver", (*api_args, *verbose, *_split_extra(opts.apiserver_args)),
            opts.port or opts.secure_port,
        )
    ]

    cm_args = [*_connect(opts, "controller-manager"), "--port", str(opts.controller_manager_port)]
    # the default StorageClass (cluster/addons.py) is served by the development provisioner
    cm_args += ["--enable-hostpath-provisioner", "--hostpath-provisioner-root", str(opts.data_dir / "hostpath_pv")]
    if opts.secure_port:  # ServiceAccount token Secrets, kube-root-ca.crt in every namespace, and
        # each controller as its own ServiceAccount (seed 002's command line; kubeadm's too)
        cm_args += ["--service-account-private-key-file", str(opts.pki_dir / "sa.key"),
                    "--root-ca-file", str(opts.pki_dir / "ca.crt"), "--use-service-account-credentials"]  # fmt: skip
    cm_args += _optional("--node-monitor-period", opts.node_monitor_period)
    cm_args += _optional("--node-monitor-grace-period", opts.node_monitor_grace_period)
    components.append(
        Component(
            "controller-manager",
            "controller-manager",
            (*cm_args, *verbose, *_split_extra(opts.controller_manager_args)),
            opts.controller_manager_port,
        )
    )
    sched_args = [*_connect(opts, "scheduler"), "--port", str(opts.scheduler_port)]
    components.append(
        Component(
            "scheduler",
            "scheduler",
            (*sched_args, *verbose, *_split_extra(opts.scheduler_args)),
            opts.scheduler_port,
        )
    )

    if opts.dns_port:
        dns_args = [*_connect(opts, "cluster-dns"), "--port", str(opts.dns_port),
                    "--health-port", str(opts.dns_health_port)]  # fmt: skip
        dns_args += ["--address", ",".join(dict.fromkeys(["127.0.0.1", *dns_endpoints(opts)]))]
        components.append(Component("cluster-dns", "cluster-dns", (*dns_args, *verbose), opts.dns_health_port))

    if opts.metrics_server_port:
        ms_args = [*_connect(opts, "metrics-server"), "--port", str(opts.metrics_server_port),
                   "--metric-resolution", opts.metric_resolution]  # fmt: skip
        if opts.secure_port:  # the kubelets' metrics over HTTPS, as itself (its kubeconfig's certificate)
            ms_args += ["--kubelet-certificate-authority", str(opts.pki_dir / "ca.crt")]
        components.append(
            Component(
                "metrics-server",
                "metrics-server",
                (*ms_args, *verbose, *_split_extra(opts.metrics_server_args)),
                opts.metrics_server_port,
            )
        )

    if opts.kube_proxy_port and opts.runtime == "process":
        health = f"127.0.0.1:{opts.kube_proxy_port}"
        kp_args = [*_connect(opts, "kube-proxy"), "--cluster-cidr", opts.cluster_cidr, "--service-cluster-ip-range",
                   opts.service_cluster_ip_range, "--healthz-bind-address", health]  # fmt: skip
        kp_args += [*verbose, *_split_extra(opts.kube_proxy_args)]
        components.append(Component("kube-proxy", "kube-proxy", tuple(kp_args), opts.kube_proxy_port))

    if len(opts.kubelet_ports) < opts.nodes:
        raise ValueError(f"need {opts.nodes} kubelet ports, got {len(opts.kubelet_ports)}")
    for index, (node, port) in enumerate(zip(node_names(opts.nodes), opts.kubelet_ports, strict=False)):
        kl_args = [*_connect(opts, f"kubelet-{node}"), "--node-name", node, "--port", str(port),
                   "--address", "127.0.0.1"]  # fmt: skip
        kl_args += ["--pod-cidr", pod_cidr(index, opts.cluster_cidr)]
        if opts.dns_port:
            kl_args += ["--cluster-dns", cluster_dns_ip(opts.service_cluster_ip_range), "--cluster-domain",
                        CLUSTER_DOMAIN]  # fmt: skip
        kl_args += _optional("--node-status-update-frequency", opts.node_status_update_frequency)
        kl_args += _optional("--node-lease-duration", opts.node_lease_duration)
        kl_args += _optional("--pod-startup-delay", opts.pod_startup_delay)
        kl_args += _optional("--cpu", opts.cpu)
        kl_args += _optional("--memory", opts.memory)
        kl_args += _optional("--max-pods", opts.max_pods)
        if opts.runtime != "simulated":
            kl_args += ["--runtime", opts.runtime, "--root-dir", str(kubelet_root_dir(opts.data_dir, node))]
        kl_args += _secure_kubelet_args(opts, node, "127.0.0.1")
        components.append(
            Component(
                f"kubelet-{node}",
                "kubelet",
                (*kl_args, *verbose, *_split_extra(opts.kubelet_args)),
                port,
                node,
            )
        )
    return components
