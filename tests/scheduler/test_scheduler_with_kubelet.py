"""End to end with real kubelets: the scheduler places, the kubelets run, pods reach Running."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.scheduler.conftest import make_pod, pods
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for


@pytest.fixture
def kubelet(api: APIServerProcess) -> Iterator[ComponentProcess]:
    port = free_port()
    args = ["--master", api.url, "--node-name", "worker", "--nodes", "3", "--cpu", "2", "--memory", "4Gi",
            "--pod-startup-delay", "0.2s", "--node-status-update-frequency", "2s", "--port", str(port)]  # fmt: skip
    proc = ComponentProcess("kubelet", args, health_port=port).start()
    yield proc
    proc.stop()


def _ready_nodes(http: httpx.Client) -> list[str]:
    names = []
    for node in http.get("/api/v1/nodes").json()["items"]:
        conds = {c["type"]: c["status"] for c in node["status"].get("conditions") or []}
        if conds.get("Ready") == "True":
            names.append(node["metadata"]["name"])
    return names


def test_thirty_pods_run_spread_over_three_real_kubelet_nodes(
    http: httpx.Client, kubelet: ComponentProcess, start_scheduler: Callable[..., ComponentProcess]
) -> None:
    wait_for(lambda: len(_ready_nodes(http)) == 3, timeout=30, what="3 kubelet nodes Ready")
    start_scheduler()
    for i in range(30):
        make_pod(http, f"app-{i}", cpu="100m", memory="100Mi")

    def all_running() -> list[dict] | None:
        items = pods(http)
        return items if len(items) == 30 and all(p["status"].get("phase") == "Running" for p in items) else None

    running = wait_for(all_running, timeout=45, interval=0.3, what="30 pods Running")
    per_node = Counter(p["spec"]["nodeName"] for p in running)
    assert set(per_node) == set(_ready_nodes(http)), per_node
    assert max(per_node.values()) - min(per_node.values()) <= 2, per_node
