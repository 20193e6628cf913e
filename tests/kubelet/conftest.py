"""Fixtures for the kubelet tests: a real API server and real `python -m kubelet` processes.

Every timing knob is turned down so the behaviour that takes minutes on a real cluster (lease
renewals, CrashLoopBackOff, ContainerCreating) takes a fraction of a second here.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for

apiserver = fixtures.apiserver  # the shared module-scoped fixture
api = fixtures.api  # the shared module-scoped fixture

FAST_FLAGS = [
    "--pod-startup-delay", "0.2",
    "--node-status-update-frequency", "0.5",
    "--node-status-report-frequency", "1.5",
    "--node-lease-duration", "2",
    "--crashloop-backoff-base", "0.2",
    "--crashloop-backoff-max", "1",
    "--job-run-time", "0.5",
    "--log-line-interval", "0.5",
]  # fmt: skip


@pytest.fixture(scope="module")
def start_kubelet(apiserver: APIServerProcess) -> Iterator[Callable[..., ComponentProcess]]:
    """`start_kubelet("node-a", "--nodes", "3")` -> a running kubelet (stopped at module end)."""
    started: list[ComponentProcess] = []

    def start(node_name: str, *extra: str, port: int | None = None) -> ComponentProcess:
        port = port or free_port()
        args = ["--master", apiserver.url, "--node-name", node_name, "--port", str(port), *FAST_FLAGS, *extra]
        proc = ComponentProcess("kubelet", args, health_port=port)
        started.append(proc)
        return proc.start()

    yield start
    for proc in started:
        proc.stop()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def get(api: httpx.Client, path: str) -> dict[str, Any]:
    resp = api.get(path)
    resp.raise_for_status()
    return resp.json()


def pod_path(name: str, namespace: str = "default") -> str:
    return f"/api/v1/namespaces/{namespace}/pods/{name}"


def create_pod(
    api: httpx.Client,
    name: str,
    node: str | None,
    *,
    command: list[str] | None = None,
    restart_policy: str = "Always",
    image: str = "nginx:1.25",
    container: str = "c",
    metadata: dict[str, Any] | None = None,
    init: list[dict[str, Any]] | None = None,
    grace: int | None = None,
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": container, "image": image}
    if command:
        c["command"] = command
    spec: dict[str, Any] = {"containers": [c], "restartPolicy": restart_policy}
    if node:
        spec["nodeName"] = node
    if init:
        spec["initContainers"] = init
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **(metadata or {})}, "spec": spec}
    resp = api.post("/api/v1/namespaces/default/pods", json=body)
    assert resp.status_code == 201, resp.text
    return resp.json()


def wait_pod(api: httpx.Client, name: str, check: Callable[[dict[str, Any]], Any], timeout: float = 20.0,
             what: str = "") -> dict[str, Any]:  # fmt: skip
    def probe() -> dict[str, Any] | None:
        pod = get(api, pod_path(name))
        return pod if check(pod) else None

    return wait_for(probe, timeout=timeout, what=what or f"pod {name}")


def container_status(pod: dict[str, Any], index: int = 0) -> dict[str, Any]:
    return ((pod.get("status") or {}).get("containerStatuses") or [{}])[index]


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == type_), {})
