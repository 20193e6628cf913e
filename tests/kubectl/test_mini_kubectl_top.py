"""`top node` / `top pod` side by side with kubectl, on a whole `mini-k8s up` cluster.

The numbers come from the real pipeline (kubelet /metrics/resource -> metrics-server -> the API
server's aggregation -> kubectl), with loads set by the simulated runtime's annotations. Memory is
a gauge and exact. CPU is a rate of counters over metrics-server's last window, whose ends are
stamped in milliseconds, so two calls can see 250m and 251m: `_same` lets a millicore cell differ
by one between the two binaries (mini's number is replaced by kubectl's) and then compares the
whole output byte for byte, padding and trailing spaces included. The loads keep every CPU value
away from a change of digit count and every percentage away from a whole number, so that drift
never moves the layout or a percentage.

One cluster per module (per xdist worker that runs a test of it), on free ports only, so a user's
`make up` cluster on the default ports does not matter.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import httpx
import pytest
import yaml

from kubectl.cli import CmdError
from kubectl.cmd_top import check_pod_age, go_duration
from tests.cluster.test_up import OTHER_CONTEXT, Cluster, alive
from tests.kubectl.conftest import Pair, Result
from tests.support.component import wait_for
from tests.support.kubectl import kubectl_binary

CPU = "simulation.mini-k8s.io/cpu-usage"
MEMORY = "simulation.mini-k8s.io/memory-usage"
GHOST = "ghost-node-without-kubelet"

# (namespace, name, node, cpu, memory, containers, labels). Node CPU is each node's own 50m plus its
# pods: node-1 300m (7.5% of 4 cores), node-2 170m (4.25%); every CPU value stays within its digits
# under a one-millicore drift. `api`'s load is split over its two containers (125m, 32Mi each).
PODS = [
    ("default", "api", "node-1", "250m", "64Mi", ["app", "sidecar"], {"app": "api", "tier": "front"}),
    ("default", "db", "node-2", "0", "300Mi", ["postgres"], {"app": "db"}),
    ("default", "web", "node-2", "120m", "96Mi", ["nginx"], {"app": "web", "tier": "front"}),
    ("tools", "probe", "node-1", "0", "16Mi", ["probe"], {"app": "probe"}),
]
EXPECTED_NODE_CPU = {"node-1": 300, "node-2": 170}


@dataclass
class _Server:
    url: str


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("top")
    kubeconfig = tmp / "kube" / "config"
    kubeconfig.parent.mkdir()
    kubeconfig.write_text(yaml.safe_dump(OTHER_CONTEXT))
    c = Cluster(tmp / "data", kubeconfig)
    try:
        result = c.up(2, "--metric-resolution", "500ms")
        assert result.returncode == 0, result.stdout + result.stderr
        _populate(c.url)
        yield c
    finally:
        if (c.data_dir / "run" / "cluster.json").exists():
            pids = c.pids().values()
            c.run("down", timeout=30)
            for pid in pids:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


def _populate(url: str) -> None:
    with httpx.Client(base_url=url, timeout=10) as api:
        for ns in ("tools", "quiet", "waiting"):
            assert api.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).status_code == 201
        for ns, name, node, cpu, memory, containers, labels in PODS:
            pod = {
                "metadata": {"name": name, "labels": labels, "annotations": {CPU: cpu, MEMORY: memory}},
                "spec": {"nodeName": node, "containers": [{"name": c, "image": "nginx"} for c in containers]},
            }
            assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod).status_code == 201, name
        # a pod no node will ever run: it exists, is young, and has no metrics
        stuck = {
            "metadata": {"name": "stuck"},
            "spec": {"nodeSelector": {"no-such": "node"}, "containers": [{"name": "c", "image": "nginx"}]},
        }
        assert api.post("/api/v1/namespaces/waiting/pods", json=stuck).status_code == 201
        # a node without a kubelet: listed, but metrics-server has nothing for it (an <unknown> row)
        assert api.post("/api/v1/nodes", json={"metadata": {"name": GHOST}}).status_code == 201


@pytest.fixture(scope="module")
def top(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    kubectl_binary()
    p = Pair(cast(Any, _Server(cluster.url)), tmp_path_factory.mktemp("home"))
    try:
        _wait_for_steady_metrics(p)
        yield p
    finally:
        p.close()


def _millicores(table: str, name_column: int = 0) -> dict[str, int]:
    """{name: CPU millicores} of a `top` table (the CPU column follows the NAME column); rows
    without a number (`<unknown>`) are left out."""
    rows = (line.split() for line in table.splitlines()[1:])
    return {c[name_column]: int(c[name_column + 1][:-1]) for c in rows if re.fullmatch(r"\d+m", c[name_column + 1])}


def _wait_for_steady_metrics(p: Pair) -> None:
    """Every node and pod has a rate over a window in which all its containers ran."""

    def steady() -> bool:
        nodes, pods = p.real("top", "node"), p.real("top", "pod", "-A")
        if nodes.rc or pods.rc:
            return False
        node_cpu, pod_cpu = _millicores(nodes.out), _millicores(pods.out, 1)
        return all(abs(node_cpu.get(n, -9) - m) <= 1 for n, m in EXPECTED_NODE_CPU.items()) and all(
            abs(pod_cpu.get(name, -9) - int(cpu.rstrip("m"))) <= 1 for _, name, _, cpu, *_ in PODS
        )

    wait_for(steady, timeout=30, interval=0.2, what="steady metrics of every node and pod")


_MILLICORES = re.compile(r"(?<![\w.-])(\d+)(?=m(?:\s|$))")


def _align_drift(real: str, mini: str) -> str:
    """mini's output with each millicore value that is within one of kubectl's, at the same place
    (the n-th such value), replaced by kubectl's; anything else is left for the comparison."""
    theirs = [int(m) for m in _MILLICORES.findall(real)]
    mine = _MILLICORES.findall(mini)
    if len(theirs) != len(mine):
        return mini
    values = iter(theirs)

    def swap(m: re.Match[str]) -> str:
        real_value = next(values)
        return str(real_value) if abs(int(m.group(1)) - real_value) <= 1 else m.group(1)

    return _MILLICORES.sub(swap, mini)


def _same(p: Pair, *args: str) -> Result:
    """Run both at once; equal exit code, stderr and (CPU drift aside) stdout, byte for byte."""
    real, mini = p.both(*args)
    assert (mini.rc, mini.err) == (real.rc, real.err), args
    assert _align_drift(real.out, mini.out) == real.out, f"{args}\nkubectl:\n{real.out}\nmini:\n{mini.out}"
    return real


def test_top_node_matches_kubectl(top: Pair) -> None:
    table = _same(top, "top", "node").out
    lines = table.splitlines()
    assert lines[0] == "NAME                         CPU(cores)   CPU(%)      MEMORY(bytes)   MEMORY(%)   "
    assert lines[1].split() == ["node-1", lines[1].split()[1], "7%", "336Mi", "4%"]
    assert lines[2].split() == ["node-2", lines[2].split()[1], "4%", "652Mi", "7%"]
    assert lines[3].split() == [GHOST] + ["<unknown>"] * 4
    for args in (
        ("top", "nodes", "node-1"),
        ("top", "no", "--sort-by=cpu"),
        ("top", "node", "--sort-by", "memory"),
        ("top", "node", "--no-headers"),
        ("top", "node", "--show-capacity"),
        ("top", "node", "-l", "kubernetes.io/hostname=node-2"),
        ("top", "node", "-l", "kubernetes.io/hostname=nowhere"),  # metrics not available yet
        ("top", "node", "nowhere"),  # Error from server (NotFound): nodemetrics...
        ("top", "node", GHOST),
        ("top", "node", "a", "b"),
        ("top", "node", "node-1", "-l", "a=b"),
        ("top", "node", "--sort-by=disk"),
        ("top", "node", "-l", "a in ("),
    ):
        _same(top, *args)


def test_top_pod_matches_kubectl(top: Pair) -> None:
    table = _same(top, "top", "pod").out
    assert [line.split()[0] for line in table.splitlines()] == ["NAME", "api", "db", "web"]
    assert _same(top, "top", "pod", "-A").out.splitlines()[4].split() == ["tools", "probe", "0m", "16Mi"]
    containers = _same(top, "top", "pod", "api", "--containers").out.splitlines()
    assert containers[0] == "POD   NAME      CPU(cores)   MEMORY(bytes)   "
    assert [c.split()[1] for c in containers[1:]] == ["app", "sidecar"]
    total = _same(top, "top", "pod", "--sum").out.splitlines()
    assert total[-2:] == ["       ________     ________        ", total[-1]] and total[-1].split()[1] == "460Mi"
    for args in (
        ("top", "pods", "-l", "tier=front"),
        ("top", "po", "--field-selector", "spec.nodeName=node-2", "-A"),
        ("top", "pod", "--containers", "-A"),
        ("top", "pod", "--sort-by=memory"),
        ("top", "pod", "-A", "--sort-by=cpu", "--containers"),
        ("top", "pod", "-A", "--sum", "--containers"),
        ("top", "pod", "-A", "--sum", "--no-headers"),  # kubectl's rule then sits one column left
        ("top", "pod", "--no-headers", "-n", "tools"),
        ("top", "pod", "missing"),  # Error from server (NotFound): podmetrics...
        ("top", "pod", "-n", "quiet"),  # No resources found in quiet namespace.
        ("top", "pod", "-n", "quiet", "-l", "app=api", "-A"),
        ("top", "pod", "-n", "waiting"),  # a young pod without metrics: metrics not available yet
        ("top", "pod", "-l", "app=nothing"),
        ("top", "pod", "a", "b"),
        ("top", "pod", "api", "--field-selector", "a=b"),
        ("top", "pod", "--sort-by=name"),
        ("top", "pod", "--field-selector", "nonsense"),
    ):
        _same(top, *args)


def test_metrics_not_available_for_an_old_pod_names_it_with_its_age() -> None:
    born = time.time() - 185.25
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(born))
    pod = {"metadata": {"name": "old", "namespace": "ns", "creationTimestamp": stamp}}
    with pytest.raises(CmdError, match=r"^Metrics not available for pod ns/old, age: 3m\d+(\.\d+)?s$"):
        check_pod_age(pod)
    pod["metadata"]["creationTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 30))
    check_pod_age(pod)  # young: no error (kubectl then says "metrics not available yet")
    # Go's time.Duration.String()
    assert go_duration(125_500_000_000) == "2m5.5s"
    assert go_duration(3 * 3600 * 10**9) == "3h0m0s"
    assert go_duration(61 * 10**9) == "1m1s"
    assert go_duration(120 * 10**9 + 1) == "2m0.000000001s"
    assert go_duration(3725 * 10**9 + 10**8) == "1h2m5.1s"
