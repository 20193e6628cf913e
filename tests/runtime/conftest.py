"""A small real cluster whose kubelet runs real processes: API server, scheduler, the Job
controller, and `mini-kubelet --runtime process` with its own --root-dir, driven by the real kubectl.

The process runtime needs Linux and root (cgroups, namespaces); elsewhere these tests skip.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for
from tests.support.kubectl import kubectl_binary

apiserver = fixtures.apiserver
api = fixtures.api

KUBELET_FAST = [
    "--pod-startup-delay", "0",
    "--node-status-update-frequency", "1",
    "--crashloop-backoff-base", "0.5",
    "--crashloop-backoff-max", "2",
]  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if sys.platform != "linux" or os.geteuid() != 0:
        skip = pytest.mark.skip(reason="the process runtime needs Linux and root")
        for item in items:
            if "tests/runtime/" in str(item.fspath):
                item.add_marker(skip)


@dataclass
class Cluster:
    apiserver: APIServerProcess
    api: httpx.Client
    node: str
    root_dir: Path
    kubelet: ComponentProcess
    kubelet_args: list[str]
    kubectl_path: str

    def kubectl(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KUBECONFIG": os.devnull}
        return subprocess.run([self.kubectl_path, "-s", self.apiserver.url, *args], capture_output=True,
                              text=True, timeout=timeout, env=env)  # fmt: skip

    def pod(self, name: str, namespace: str = "default") -> dict[str, Any]:
        resp = self.api.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        resp.raise_for_status()
        return resp.json()

    def wait_pod(self, name: str, check: Callable[[dict[str, Any]], Any], timeout: float = 30.0,
                 what: str = "") -> dict[str, Any]:  # fmt: skip
        def probe() -> dict[str, Any] | None:
            pod = self.pod(name)
            return pod if check(pod) else None

        try:
            return wait_for(probe, timeout=timeout, interval=0.1, what=what or f"pod {name}")
        except AssertionError as exc:
            pod = self.pod(name)
            log = self.kubelet.log_tail(30)
            raise AssertionError(f"{exc}\npod status: {pod.get('status')}\nkubelet log:\n{log}") from None

    def restart_kubelet(self) -> None:
        self.kubelet.kill()  # SIGKILL: a crash, not a clean stop
        self.kubelet = ComponentProcess("kubelet", self.kubelet_args, health_port=self.kubelet.health_port)
        self.kubelet.start()


@pytest.fixture(scope="module")
def cluster(
    apiserver: APIServerProcess, api: httpx.Client, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    kubectl_path = kubectl_binary()
    node = f"rt-{uuid.uuid4().hex[:6]}"
    root = tmp_path_factory.mktemp("kubelet-root")
    sched_port, cm_port, kl_port = free_port(), free_port(), free_port()
    scheduler = ComponentProcess("scheduler", ["--master", apiserver.url, "--port", str(sched_port)],
                                 health_port=sched_port).start()  # fmt: skip
    manager = ComponentProcess("controller_manager", ["--master", apiserver.url, "--port", str(cm_port),
                                                      "--controllers", "job"], health_port=cm_port).start()  # fmt: skip
    args = ["--master", apiserver.url, "--node-name", node, "--port", str(kl_port), "--runtime", "process",
            "--root-dir", str(root), "--pod-cidr", random_pod_cidr(), *KUBELET_FAST]  # fmt: skip
    kubelet = ComponentProcess("kubelet", args, health_port=kl_port).start()
    c = Cluster(apiserver, api, node, root, kubelet, args, kubectl_path)
    wait_for(lambda: c.kubectl("get", "node", node).returncode == 0, what="node registered")
    try:
        yield c
    finally:
        c.kubectl("delete", "pods,jobs", "--all", "--wait=false")
        c.kubelet.stop()
        scheduler.stop()
        manager.stop()
        subprocess.run([sys.executable, "-m", "kubelet.cleanup", "--root-dir", str(root)], check=False,
                       capture_output=True)  # fmt: skip


def random_pod_cidr() -> str:
    """A /24 of 10.200.0.0/13 nobody else on this machine is likely to use at the same moment
    (each test cluster's node gets a bridge with that range on the host)."""
    return f"10.{random.randint(200, 207)}.{random.randint(0, 255)}.0/24"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def state(pod: dict[str, Any], index: int = 0) -> dict[str, Any]:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return statuses[index] if len(statuses) > index else {}
