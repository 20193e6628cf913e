"""`mini-k8s up` / `down` as a user runs them: real processes, observed through the API and /proc.

Every test uses its own data dir, free ports and a temporary $KUBECONFIG (which already holds
another context, to prove `up` does not wreck it). Processes that `up -d` leaves running are
stopped by the fixture even when a test fails.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import yaml

from tests.support.component import REPO, free_port, wait_for

OTHER_CONTEXT = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "prod", "cluster": {"server": "https://prod.example:6443"}}],
    "users": [{"name": "admin", "user": {"token": "secret"}}],
    "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "admin"}}],
    "current-context": "prod",
}


@dataclass
class Cluster:
    data_dir: Path
    kubeconfig: Path
    port: int = field(default_factory=free_port)
    cm_port: int = field(default_factory=free_port)
    sched_port: int = field(default_factory=free_port)
    kubelet_port: int = field(default_factory=free_port)
    dns_port: int = field(default_factory=free_port)
    dns_health_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        return dict(os.environ, KUBECONFIG=str(self.kubeconfig), NO_PROXY="127.0.0.1,localhost")

    def up_args(self, nodes: int, *extra: str, plain_port: bool = True) -> list[str]:
        """`plain_port=False` leaves `--port` to `up` (with --secure: none, as `make up` runs)."""
        port = ["--port", str(self.port)] if plain_port else []
        # `up` picks the process runtime as root; these tests are about the simulated one unless they say
        runtime = [] if "--runtime" in extra else ["--runtime", "simulated"]
        if "process" in extra:  # real pods: keep off the user's own cluster (ports, ranges, bridges, nft table)
            runtime = ["--kube-proxy-port", str(free_port()), "--service-cluster-ip-range", "10.121.0.0/16",
                       "--cluster-cidr", f"10.{random.randint(216, 223)}.{random.randrange(0, 256, 16)}.0/20",
                       f"--kube-proxy-arg=--nftables-table=mkp-up-{uuid.uuid4().hex[:6]}"]  # fmt: skip
        return [
            sys.executable, "-m", "cluster", "up",
            "--data-dir", str(self.data_dir), *port, "--nodes", str(nodes),
            "--controller-manager-port", str(self.cm_port), "--scheduler-port", str(self.sched_port),
            "--kubelet-port", str(self.kubelet_port), "--timeout", "45",
            "--dns-port", str(self.dns_port), "--dns-health-port", str(self.dns_health_port),
            "--metrics-server-port", str(self.metrics_port),
            "--pod-startup-delay", "0.1", "--node-status-update-frequency", "2s",
            *runtime, *extra,
        ]  # fmt: skip

    def up(self, nodes: int, *extra: str, plain_port: bool = True) -> subprocess.CompletedProcess[str]:
        """`mini-k8s up -d`: returns once every node is Ready (or up gave up)."""
        args = self.up_args(nodes, "-d", *extra, plain_port=plain_port)
        return subprocess.run(args, capture_output=True, text=True, env=self.env, cwd=REPO, timeout=90)

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cluster", *args, "--data-dir", str(self.data_dir)],
            capture_output=True, text=True, env=self.env, cwd=REPO, timeout=timeout,
        )  # fmt: skip

    def pids(self) -> dict[str, int]:
        state = json.loads((self.data_dir / "run" / "cluster.json").read_text())
        return {c["name"]: int(c["pid"]) for c in state["components"]}

    def nodes(self) -> dict[str, str]:
        items = httpx.get(f"{self.url}/api/v1/nodes", timeout=5).json()["items"]
        return {
            n["metadata"]["name"]: c["status"]
            for n in items
            for c in n["status"]["conditions"]
            if c["type"] == "Ready"
        }


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    kubeconfig = tmp_path / "kube" / "config"
    kubeconfig.parent.mkdir()
    kubeconfig.write_text(yaml.safe_dump(OTHER_CONTEXT))
    c = Cluster(tmp_path / "data", kubeconfig)
    yield c
    # Leave nothing running, whatever happened: `down`, then SIGKILL whatever survived it.
    if not (c.data_dir / "run" / "cluster.json").exists():
        return
    pids = c.pids().values()
    c.run("down", timeout=30)
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_up_detached_serves_ready_nodes_writes_kubeconfig_down_stops_all_and_a_second_up_finds_objects(
    cluster: Cluster,
) -> None:
    result = cluster.up(2)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"✓ apiserver ready at {cluster.url}" in result.stdout
    assert "✓ node-1 Ready" in result.stdout and "✓ node-2 Ready" in result.stdout

    # the nodes, through the API
    assert cluster.nodes() == {"node-1": "True", "node-2": "True"}
    # every component is its own live process, and logs to its own file
    pids = cluster.pids()
    names = {"apiserver", "controller-manager", "scheduler", "cluster-dns", "metrics-server", "kubelet-node-1",
             "kubelet-node-2"}  # fmt: skip
    assert set(pids) == names
    assert all(alive(pid) for pid in pids.values())
    # the cluster DNS answers for the `kubernetes` Service
    import dns.message
    import dns.query

    kubernetes = httpx.get(f"{cluster.url}/api/v1/namespaces/default/services/kubernetes").json()
    kubernetes_ip = kubernetes["spec"]["clusterIP"]
    answer = wait_for(lambda: dns.query.udp(dns.message.make_query("kubernetes.default.svc.cluster.local", "A"),
                                            "127.0.0.1", port=cluster.dns_port, timeout=2).answer, what="DNS answer")
    assert [item.to_text() for item in answer[0]] == [kubernetes_ip]
    for name in names:
        assert (cluster.data_dir / "logs" / f"{name}.log").stat().st_size > 0
        assert (cluster.data_dir / "run" / f"{name}.pid").read_text().strip() == str(pids[name])

    # the kubeconfig: context mini-k8s is current, the other context is untouched
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    assert config["current-context"] == "mini-k8s"
    contexts = {c["name"]: c["context"] for c in config["contexts"]}
    assert contexts["mini-k8s"] == {"cluster": "mini-k8s", "user": "mini-k8s", "namespace": "default"}
    assert contexts["prod"] == {"cluster": "prod", "user": "admin"}
    clusters = {c["name"]: c["cluster"] for c in config["clusters"]}
    assert clusters == {"prod": {"server": "https://prod.example:6443"}, "mini-k8s": {"server": cluster.url}}
    assert {u["name"]: u["user"] for u in config["users"]}["admin"] == {"token": "secret"}

    # so `mini-kubectl get nodes` and the real `kubectl get nodes` work at once, with no flags
    kubectls = [[sys.executable, "-m", "kubectl"]] + ([[real]] if (real := shutil.which("kubectl")) else [])
    for kubectl in kubectls:
        got = subprocess.run([*kubectl, "get", "nodes"], capture_output=True, text=True, env=cluster.env,
                             cwd=REPO, timeout=60)  # fmt: skip
        assert got.returncode == 0, got.stdout + got.stderr
        assert sorted(line.split()[:2] for line in got.stdout.splitlines()[1:]) == [
            ["node-1", "Ready"], ["node-2", "Ready"],
        ], got.stdout  # fmt: skip

    # the default StorageClass: a claim without a class gets a host-path volume in the data dir
    assert '✓ StorageClass "standard" (default)' in result.stdout
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}  # fmt: skip
    assert httpx.post(f"{cluster.url}/api/v1/namespaces/default/persistentvolumeclaims", json=pvc).status_code == 201

    def bound_volume() -> str:
        got = httpx.get(f"{cluster.url}/api/v1/namespaces/default/persistentvolumeclaims/data").json()
        return got["spec"].get("volumeName", "") if got.get("status", {}).get("phase") == "Bound" else ""

    volume = httpx.get(f"{cluster.url}/api/v1/persistentvolumes/{wait_for(bound_volume, what='claim Bound')}").json()
    assert Path(volume["spec"]["hostPath"]["path"]).parent == cluster.data_dir / "hostpath_pv"

    # a second `up` on a running data dir refuses, and changes nothing
    again = cluster.up(2)
    assert again.returncode == 1
    assert "already running" in again.stderr
    assert all(alive(pid) for pid in pids.values())

    status = cluster.run("status")
    assert status.returncode == 0 and "node-2" in status.stdout and "running" in status.stdout

    # an object to find again after the restart below
    cm = {"metadata": {"name": "remember-me"}, "data": {"k": "v"}}
    created = httpx.post(f"{cluster.url}/api/v1/namespaces/default/configmaps", json=cm, timeout=5)
    assert created.status_code == 201, created.text

    down = cluster.run("down")
    assert down.returncode == 0, down.stdout + down.stderr
    wait_for(lambda: not any(alive(pid) for pid in pids.values()), timeout=15, what="every process gone")
    assert not (cluster.data_dir / "run").exists()

    # a second `up` on the same data dir: the embedded store kept everything
    second = cluster.up(1)
    assert second.returncode == 0, second.stdout + second.stderr
    got = httpx.get(f"{cluster.url}/api/v1/namespaces/default/configmaps/remember-me", timeout=5)
    assert got.status_code == 200 and got.json()["data"] == {"k": "v"}
    assert got.json()["metadata"]["uid"] == created.json()["metadata"]["uid"]
    assert set(cluster.nodes()) == {"node-1", "node-2"}  # node-2 has no kubelet now, but it is still known
    assert cluster.nodes()["node-1"] == "True"


def test_foreground_up_stops_every_process_on_sigint(cluster: Cluster, tmp_path: Path) -> None:
    out = tmp_path / "up.out"
    with open(out, "wb") as f:
        up = subprocess.Popen(cluster.up_args(1), stdout=f, stderr=subprocess.STDOUT, env=cluster.env,
                              cwd=REPO)  # fmt: skip
    try:
        wait_for(lambda: "mini-k8s is up" in out.read_text(), timeout=60, what="up to report the cluster up")
        pids = cluster.pids()
        # apiserver, controller-manager, scheduler, cluster-dns, metrics-server, one kubelet
        assert len(pids) == 6 and all(alive(pid) for pid in pids.values())
        up.send_signal(signal.SIGINT)
        assert up.wait(30) == 0, out.read_text()
    finally:
        if up.poll() is None:
            up.kill()
    assert not any(alive(pid) for pid in pids.values()), out.read_text()
    assert "stopped kubelet-node-1" in out.read_text()
    assert not (cluster.data_dir / "run").exists()


def test_up_refuses_a_port_that_is_taken(cluster: Cluster) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", cluster.port))
        busy.listen()
        result = cluster.up(1)
    assert result.returncode == 1
    assert f"port {cluster.port} is already in use" in result.stderr
    assert not (cluster.data_dir / "run").exists()  # nothing was started


def test_up_shows_the_log_of_a_component_that_fails_and_stops_the_others(cluster: Cluster) -> None:
    started = time.monotonic()
    result = cluster.up(0, "--kube-scheduler-arg=--no-such-flag")
    assert result.returncode == 1
    assert "✗ scheduler exited with code 2" in result.stderr
    assert "scheduler.log" in result.stderr and "No such option" in result.stderr  # the log's tail
    assert time.monotonic() - started < 40  # it did not wait for the deadline
    apiserver_log = (cluster.data_dir / "logs" / "apiserver.log").read_text()
    assert "mini-k8s up" in apiserver_log
    assert not (cluster.data_dir / "run").exists()
    with pytest.raises(httpx.ConnectError):  # the API server it had started is gone too
        httpx.get(f"{cluster.url}/readyz", timeout=2)
