"""A real cluster whose Services carry packets: API server (its own Service range, 10.112.0.0/16,
so this proxy's drop rule for unallocated ClusterIPs cannot touch another cluster on the machine),
scheduler, the controllers behind Deployments and EndpointSlices, a process-runtime kubelet, and
`mini-kube-proxy` with a table of its own; and name resolution as `mini-k8s up` sets it up: the
cluster DNS process listening on the node's bridge address, a selector-less `kube-dns` Service at
10.112.0.10 whose Endpoints name that address (mirrored into an EndpointSlice by the
controller-manager), and the kubelet's `--cluster-dns`. Needs Linux, root and nft; elsewhere these
tests skip."""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster.dns_addon import dns_objects
from kube_proxy import nft
from tests.runtime.conftest import KUBELET_FAST, Cluster, random_pod_cidr
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for
from tests.support.kubectl import kubectl_binary

SERVICE_CIDR = "10.112.0.0/16"
CLUSTER_CIDR = "10.200.0.0/13"  # every random_pod_cidr() falls in it
LB_POOL = "127.1.77.0/24"  # not the default pool, which another cluster on this machine may hand out
DNS_IP = "10.112.0.10"  # the tenth address of the Service range, as kubeadm picks it


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if sys.platform == "linux" and os.geteuid() == 0 and shutil.which("nft"):
        return
    skip = pytest.mark.skip(reason="kube-proxy needs Linux, root and nft (Debian: nftables)")
    for item in items:
        if "tests/kube_proxy/" in str(item.fspath) and "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


@dataclass
class ProxyCluster(Cluster):
    proxy: ComponentProcess | None = None
    proxy_args: tuple[str, ...] = ()
    table: str = ""
    pod_cidr: str = ""
    dns: ComponentProcess | None = None

    @property
    def node_address(self) -> str:
        """The node's bridge address: the host as its pods see it."""
        return str(ipaddress.ip_network(self.pod_cidr).network_address + 1)

    def start_dns(self) -> ComponentProcess:
        """The cluster DNS on the bridge address, and the `kube-dns` Service that leads pods to it."""
        port, health = free_port(), free_port()
        self.dns = ComponentProcess("cluster_dns", [
            "--master", self.apiserver.url, "--address", f"127.0.0.1,{self.node_address}", "--port", str(port),
            "--health-port", str(health), "--upstream", "none"], health_port=health).start()  # fmt: skip
        for resource, obj in dns_objects([self.node_address], port, DNS_IP):
            self.api.post(f"/api/v1/namespaces/kube-system/{resource}", json=obj).raise_for_status()
        return self.dns

    def start_proxy(self) -> ComponentProcess:
        port = free_port()
        self.proxy = ComponentProcess("kube_proxy", [*self.proxy_args, "--healthz-bind-address", f"127.0.0.1:{port}"],
                                      health_port=port).start()  # fmt: skip
        return self.proxy


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyCluster]:
    apiserver = APIServerProcess(args=["--service-cluster-ip-range", SERVICE_CIDR]).start()
    node = f"kp-{uuid.uuid4().hex[:6]}"
    root: Path = tmp_path_factory.mktemp("kubelet-root")
    sched_port, cm_port, kl_port = free_port(), free_port(), free_port()
    scheduler = ComponentProcess("scheduler", ["--master", apiserver.url, "--port", str(sched_port)],
                                 health_port=sched_port).start()  # fmt: skip
    manager = ComponentProcess("controller_manager", [
        "--master", apiserver.url, "--port", str(cm_port),
        "--controllers",
        "deployment,replicaset,replicationcontroller,endpoints,endpointslice,endpointslicemirroring,serviceaccount,"
        "service-lb-controller",
        "--load-balancer-ip-pool", LB_POOL],
        health_port=cm_port).start()  # fmt: skip
    pod_cidr = random_pod_cidr()
    args = ["--master", apiserver.url, "--node-name", node, "--port", str(kl_port), "--runtime", "process",
            "--root-dir", str(root), "--pod-cidr", pod_cidr, "--cluster-dns", DNS_IP, "--cluster-domain",
            "cluster.local", *KUBELET_FAST]  # fmt: skip
    kubelet = ComponentProcess("kubelet", args, health_port=kl_port).start()
    table = f"mkp-{uuid.uuid4().hex[:6]}"
    proxy_args = ("--master", apiserver.url, "--cluster-cidr", CLUSTER_CIDR, "--service-cluster-ip-range",
                  SERVICE_CIDR, "--nftables-table", table, "--min-sync-period", "0s")  # fmt: skip
    with apiserver.client() as api:
        c = ProxyCluster(apiserver, api, node, root, kubelet, args, kubectl_binary(), proxy_args=proxy_args,
                         table=table, pod_cidr=pod_cidr)  # fmt: skip
        wait_for(lambda: c.kubectl("get", "node", node).returncode == 0, what="node registered")
        c.start_proxy()
        c.start_dns()
        try:
            yield c
        finally:
            c.kubectl("delete", "deployments,pods,services", "--all", "--wait=false")
            if c.proxy is not None:
                c.proxy.stop()
            # A kube-proxy that did not reach its own cleanup (likely: killed when its stop took
            # longer than the grace; a table of this fixture was once left after a full test run)
            # leaves its table in the kernel: remove it as `mini-k8s down` does.
            subprocess.run([sys.executable, "-m", "kube_proxy", "--cleanup", *proxy_args], check=False,
                           capture_output=True, timeout=60)  # fmt: skip
            if c.dns is not None:
                c.dns.stop()
            c.kubelet.stop()
            scheduler.stop()
            manager.stop()
            subprocess.run([sys.executable, "-m", "kubelet.cleanup", "--root-dir", str(root)], check=False,
                           capture_output=True)  # fmt: skip
            apiserver.cleanup()
            assert not nft.list_table(table), f"table ip {table} left in the kernel"  # after every other cleanup
