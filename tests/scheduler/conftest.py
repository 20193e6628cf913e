"""Fixtures for the scheduler tests: a real API server per test, real scheduler processes, and
Nodes created through the API (the scheduler only reads Nodes, so it cannot tell them from a
kubelet's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port

# Fast timers for tests; the safety-net flush stays long so that "retried on a cluster event"
# cannot be explained by a periodic retry.
FAST = ["--pod-initial-backoff-seconds", "0.2", "--pod-max-backoff-seconds", "1",
        "--pod-max-in-unschedulable-pods-duration", "60s"]  # fmt: skip


@pytest.fixture
def api() -> Iterator[APIServerProcess]:
    server = APIServerProcess().start()
    yield server
    server.cleanup()


@pytest.fixture
def http(api: APIServerProcess) -> Iterator[httpx.Client]:
    with api.client() as c:
        yield c


@pytest.fixture
def start_scheduler(api: APIServerProcess) -> Iterator[Callable[..., ComponentProcess]]:
    started: list[ComponentProcess] = []

    def start(*args: str) -> ComponentProcess:
        port = free_port()
        proc = ComponentProcess("scheduler", ["--master", api.url, "--port", str(port), *FAST, *args], health_port=port)
        proc.health_port = port
        started.append(proc.start())
        return proc

    yield start
    for p in started:
        p.stop()


def make_node(
    http: httpx.Client,
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or [], "unschedulable": unschedulable},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }
    r = http.post("/api/v1/nodes", json=node)
    assert r.status_code == 201, r.text
    return r.json()


def make_pod(
    http: httpx.Client,
    name: str,
    *,
    cpu: str | None = "100m",
    memory: str | None = "64Mi",
    namespace: str = "default",
    **spec: Any,
) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    container: dict[str, Any] = {"name": "app", "image": "nginx", "resources": {"requests": requests}}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [container], **spec},
    }
    r = http.post(f"/api/v1/namespaces/{namespace}/pods", json=pod)
    assert r.status_code == 201, r.text
    return r.json()


def pods(http: httpx.Client, namespace: str = "default") -> list[dict[str, Any]]:
    return http.get(f"/api/v1/namespaces/{namespace}/pods").json()["items"]


def get_pod(http: httpx.Client, name: str, namespace: str = "default") -> dict[str, Any]:
    return http.get(f"/api/v1/namespaces/{namespace}/pods/{name}").json()


def events(http: httpx.Client, reason: str, namespace: str = "default") -> list[dict[str, Any]]:
    return http.get(f"/api/v1/namespaces/{namespace}/events", params={"fieldSelector": f"reason={reason}"}).json()[
        "items"
    ]


def all_bound(http: httpx.Client, n: int) -> list[dict[str, Any]] | None:
    items = pods(http)
    return items if len(items) == n and all(p["spec"].get("nodeName") for p in items) else None
