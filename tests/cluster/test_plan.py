"""The plan `mini-k8s up` starts: one process per component, distinct ports, flags that exist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cluster.plan import ClusterOptions, check_ranges, dns_endpoints, plan
from cluster.ports import kubelet_ports
from tests.support.component import REPO


def every_option_set() -> ClusterOptions:
    return ClusterOptions(
        data_dir=Path("/tmp/x"), port=18080, nodes=3, etcd_servers="http://127.0.0.1:2379", etcd_prefix="/p",
        controller_manager_port=18252, scheduler_port=18251, kubelet_ports=[18250, 18253, 18254],
        node_monitor_period="1s", node_monitor_grace_period="10s", node_status_update_frequency="2s",
        node_lease_duration="8s", pod_startup_delay="0.1", cpu="8", memory="16Gi", max_pods=50,
        default_not_ready_toleration_seconds=30, default_unreachable_toleration_seconds=30, verbosity=1,
        kubelet_args=["--node-labels=zone=a"], metrics_server_port=18260, metric_resolution="5s",
        metrics_server_args=["--kubelet-request-timeout=3s"], runtime="process", kube_proxy_port=18256,
        kube_proxy_args=["--masquerade-all"],
    )  # fmt: skip


def test_plan_is_one_process_per_component_with_distinct_ports_and_pod_cidrs() -> None:
    components = plan(every_option_set())
    assert [c.name for c in components] == [
        "apiserver", "controller-manager", "scheduler", "cluster-dns", "metrics-server", "kube-proxy",
        "kubelet-node-1", "kubelet-node-2", "kubelet-node-3",
    ]  # fmt: skip
    assert len({c.port for c in components}) == len(components)
    cidrs = [c.args[c.args.index("--pod-cidr") + 1] for c in components if c.kind == "kubelet"]
    assert cidrs == ["10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"]
    for c in components[1:]:
        assert c.args[:2] == ("--master", "http://127.0.0.1:18080")


def test_timing_flags_are_passed_only_when_given() -> None:
    bare = plan(ClusterOptions(data_dir=Path("/tmp/x"), nodes=1, kubelet_ports=[10250]))
    assert all("--node-monitor-grace-period" not in c.args for c in bare)
    full = plan(every_option_set())
    kubelet = next(c for c in full if c.kind == "kubelet")
    assert "--node-monitor-grace-period" in full[1].args and "--node-lease-duration" in kubelet.args


def test_metrics_server_gets_its_port_resolution_and_extra_args_and_port_0_means_none() -> None:
    ms = next(c for c in plan(every_option_set()) if c.kind == "metrics-server")
    assert ms.args == ("--master", "http://127.0.0.1:18080", "--port", "18260", "--metric-resolution", "5s",
                       "-v", "1", "--kubelet-request-timeout=3s")  # fmt: skip
    none = plan(ClusterOptions(data_dir=Path("/tmp/x"), nodes=1, kubelet_ports=[10250], metrics_server_port=0))
    assert all(c.kind != "metrics-server" for c in none)


def test_kube_proxy_runs_once_with_the_process_runtime_and_knows_the_pod_range() -> None:
    proxy = [c for c in plan(every_option_set()) if c.kind == "kube-proxy"]
    assert len(proxy) == 1  # one per machine: the nodes share its network stack
    assert proxy[0].args == ("--master", "http://127.0.0.1:18080", "--cluster-cidr", "10.244.0.0/14",
                             "--service-cluster-ip-range", "10.96.0.0/12", "--healthz-bind-address",
                             "127.0.0.1:18256", "-v", "1", "--masquerade-all")  # fmt: skip
    assert proxy[0].port == 18256
    simulated = plan(ClusterOptions(data_dir=Path("/tmp/x"), nodes=1, kubelet_ports=[10250]))
    assert all(c.kind != "kube-proxy" for c in simulated)  # its pods have no network to proxy to
    off = plan(ClusterOptions(data_dir=Path("/tmp/x"), nodes=1, kubelet_ports=[10250], runtime="process",
                              kube_proxy_port=0))  # fmt: skip
    assert all(c.kind != "kube-proxy" for c in off)


def test_pods_find_the_cluster_dns_through_the_kube_dns_service_address() -> None:
    """Kubelets name the tenth address of the Service range; the DNS listens on each node's bridge
    address (what the kube-dns Endpoints name) with real pods, on loopback only with simulated ones."""
    opts = ClusterOptions(data_dir=Path("/tmp/x"), nodes=2, kubelet_ports=[10250, 10255], runtime="process",
                          service_cluster_ip_range="10.100.0.0/16", cluster_cidr="10.50.0.0/16")  # fmt: skip
    components = {c.name: c for c in plan(opts)}
    kubelet = components["kubelet-node-2"].args
    assert kubelet[kubelet.index("--pod-cidr") + 1] == "10.50.1.0/24"
    assert kubelet[kubelet.index("--cluster-dns") + 1 :][:3] == ("10.100.0.10", "--cluster-domain", "cluster.local")
    dns = components["cluster-dns"].args
    assert dns[dns.index("--address") + 1] == "127.0.0.1,10.50.0.1,10.50.1.1"
    assert dns_endpoints(opts) == ["10.50.0.1", "10.50.1.1"]
    api = components["apiserver"].args
    assert api[api.index("--service-cluster-ip-range") + 1] == "10.100.0.0/16"
    simulated = ClusterOptions(data_dir=Path("/tmp/x"), nodes=2, kubelet_ports=[10250, 10255])
    assert dns_endpoints(simulated) == ["127.0.0.1"]
    assert "--service-cluster-ip-range" not in {c.name: c for c in plan(simulated)}["apiserver"].args  # the default
    assert check_ranges("10.96.0.0/12", "10.244.0.0/14", 3) == ""
    assert "overlaps" in check_ranges("10.0.0.0/8", "10.244.0.0/14", 3)
    assert "no room" in check_ranges("10.96.0.0/12", "10.244.0.0/23", 3)


def test_kubelet_ports_skip_the_ports_given_to_others() -> None:
    # Whatever runs on this machine (a student's own `make up` on 10250-10254) must not matter.
    assert kubelet_ports(10250, 3, reserved={10251, 10252}, is_free=lambda _: True) == [10250, 10253, 10254]


def test_kubelet_ports_skip_the_ports_that_are_busy() -> None:
    busy = {10251, 10254}
    assert kubelet_ports(10250, 3, is_free=lambda p: p not in busy) == [10250, 10252, 10253]


def test_every_flag_up_passes_exists_in_the_component_cli() -> None:
    """`python -m <pkg> <args> --help`: click rejects an unknown option before acting on --help,
    so this catches a component renaming a flag that `mini-k8s up` still passes."""
    one_per_kind = {c.kind: c for c in plan(every_option_set())}
    procs = {
        kind: subprocess.Popen(
            [sys.executable, "-m", c.module, *c.args, "--help"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPO,
        )
        for kind, c in one_per_kind.items()
    }
    for kind, proc in procs.items():
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "No such option" not in out, f"{kind}: {out}"
