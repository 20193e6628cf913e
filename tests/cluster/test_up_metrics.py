"""The resource metrics pipeline of a `mini-k8s up` cluster, read with the real kubectl:

    kubelet /metrics/resource -> metrics-server -> APIService v1beta1.metrics.k8s.io -> kubectl top

`up` starts metrics-server and registers it (cluster/metrics_addon.py); the load is the simulated
runtime's annotation (kubelet/simusage.py), so the expected numbers are known exactly.
"""

from __future__ import annotations

import subprocess

import httpx

from tests.cluster.test_up import REPO, Cluster, cluster  # noqa: F401  (fixture)
from tests.support.component import wait_for
from tests.support.kubectl import kubectl_binary

CPU = "simulation.mini-k8s.io/cpu-usage"
MEMORY = "simulation.mini-k8s.io/memory-usage"


def kubectl(c: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([kubectl_binary(), *args], capture_output=True, text=True, env=c.env, cwd=REPO, timeout=30)


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.strip().splitlines()]


def millicores(cell: str) -> int:
    assert cell.endswith("m"), cell
    return int(cell[:-1])


def test_up_serves_the_metrics_api_and_kubectl_top_prints_nodes_pods_and_containers(cluster: Cluster) -> None:  # noqa: F811
    result = cluster.up(2, "--metric-resolution", "500ms")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "✓ metrics API: Service metrics-server, Endpoints metrics-server, APIService v1beta1.metrics.k8s.io" in (
        result.stdout
    )
    pod = {
        "metadata": {"name": "busy", "annotations": {CPU: "250m", MEMORY: "64Mi"}},
        "spec": {"nodeName": "node-1", "containers": [
            {"name": "app", "image": "nginx"}, {"name": "side", "image": "busybox", "command": ["sleep", "3600"]}]},
    }  # fmt: skip
    assert httpx.post(f"{cluster.url}/api/v1/namespaces/default/pods", json=pod).status_code == 201

    # the APIService turns Available once metrics-server answers its discovery document
    def available() -> bool:
        svc = httpx.get(f"{cluster.url}/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io").json()
        return any(c["type"] == "Available" and c["status"] == "True" for c in svc["status"].get("conditions", []))

    wait_for(available, timeout=30, what="APIService v1beta1.metrics.k8s.io Available")
    listed = kubectl(cluster, "get", "apiservice", "v1beta1.metrics.k8s.io")
    assert rows(listed.stdout)[1][:3] == ["v1beta1.metrics.k8s.io", "kube-system/metrics-server", "True"]

    # kubectl top node: both nodes, with the node's own 50m on top of its pods
    nodes = wait_for(lambda: (r := kubectl(cluster, "top", "nodes")).returncode == 0 and "node-2" in r.stdout and r,
                     timeout=30, what="kubectl top nodes")  # fmt: skip
    table = rows(nodes.stdout)
    assert table[0] == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    by_node = {r[0]: r for r in table[1:]}
    assert set(by_node) == {"node-1", "node-2"}
    assert 48 <= millicores(by_node["node-2"][1]) <= 52  # only the node's overhead
    assert 296 <= millicores(by_node["node-1"][1]) <= 304 + 2  # 250m of the pod + 50m
    assert all(r[2].endswith("%") and r[4].endswith("%") for r in table[1:])

    # kubectl top pod, and per container: the pod's load split over its two containers
    def top(*args: str) -> list[list[str]] | None:
        r = kubectl(cluster, "top", "pod", *args)
        return rows(r.stdout) if r.returncode == 0 else None

    pods = wait_for(lambda: top("busy"), timeout=30, what="kubectl top pod busy")
    assert pods[0] == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert pods[1][0] == "busy" and 248 <= millicores(pods[1][1]) <= 252 and pods[1][2] == "64Mi"
    containers = top("busy", "--containers")
    assert containers is not None and containers[0] == ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert sorted(r[1] for r in containers[1:]) == ["app", "side"]
    assert all(124 <= millicores(r[2]) <= 126 and r[3] == "32Mi" for r in containers[1:])

    # the proxied API itself, through the API server
    raw = kubectl(cluster, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/busy")
    assert raw.returncode == 0, raw.stderr
    assert '"kind":"PodMetrics"' in raw.stdout.replace(" ", "")
