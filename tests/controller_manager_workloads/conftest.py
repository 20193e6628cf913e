"""Fixtures for the workload-controller tests: a real API server, a real controller-manager, and
(for the end-to-end tests) a real scheduler and kubelet, all as processes.

Timing flags are turned down so that a rollout which takes minutes on a real cluster takes seconds
here; the tests observe everything through the API (and the real `kubectl`), as a user would.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator

import pytest

from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port
from tests.support.kubectl import kubectl_binary

apiserver = fixtures.apiserver  # the shared module-scoped fixture
api = fixtures.api  # the shared module-scoped fixture

WORKLOAD_CONTROLLERS = "replicationcontroller,replicaset,deployment"
KUBELET_FAST_FLAGS = [
    "--pod-startup-delay", "0.2",
    "--node-status-update-frequency", "0.5",
    "--container-stop-delay", "0.1",
]  # fmt: skip


@pytest.fixture(scope="module")
def start_manager(apiserver: APIServerProcess) -> Iterator[Callable[..., ComponentProcess]]:
    """`start_manager("--leader-elect")` → a running controller-manager (stopped at module end)."""
    started: list[ComponentProcess] = []

    def start(*extra: str, controllers: str = WORKLOAD_CONTROLLERS) -> ComponentProcess:
        port = free_port()
        args = [
            "--master", apiserver.url, "--port", str(port), "--controllers", controllers,
            "--deployment-controller-sync-period", "1s", "--informer-backoff-max", "1s",
            "--kube-api-qps", "500", "--kube-api-burst", "1000", *extra,
        ]  # fmt: skip
        proc = ComponentProcess("controller_manager", args, health_port=port)
        started.append(proc)
        return proc.start()

    yield start
    for proc in started:
        proc.stop()


@pytest.fixture(scope="module")
def manager(start_manager: Callable[..., ComponentProcess]) -> ComponentProcess:
    return start_manager()


@contextlib.contextmanager
def scheduler_and_kubelet(
    apiserver: APIServerProcess, node_name: str, *, nodes: int = 3, kubelet_args: tuple[str, ...] = ()
) -> Iterator[list[ComponentProcess]]:
    """The scheduler and one fast kubelet simulating `nodes` nodes (`<node_name>-0…`), stopped after."""
    sched_port, kubelet_port = free_port(), free_port()
    scheduler = ComponentProcess(
        "scheduler", ["--master", apiserver.url, "--port", str(sched_port)], health_port=sched_port
    ).start()
    kubelet = ComponentProcess(
        "kubelet",
        ["--master", apiserver.url, "--node-name", node_name, "--nodes", str(nodes), "--port", str(kubelet_port),
         *kubelet_args, *KUBELET_FAST_FLAGS],
        health_port=kubelet_port,
    ).start()  # fmt: skip
    try:
        yield [scheduler, kubelet]
    finally:
        kubelet.stop()
        scheduler.stop()


@pytest.fixture(scope="module")
def nodes(apiserver: APIServerProcess) -> Iterator[list[ComponentProcess]]:
    """The scheduler and one kubelet simulating three nodes (node-0..2)."""
    with scheduler_and_kubelet(apiserver, "node") as procs:
        yield procs


@pytest.fixture(scope="module")
def kubectl(apiserver: APIServerProcess) -> Callable[..., str]:
    """The real kubectl against our API server; raises with its stderr on failure."""
    binary = kubectl_binary()

    def run(*args: str, stdin: str | None = None) -> str:
        res = subprocess.run(
            [binary, "--server", apiserver.url, *args], input=stdin, capture_output=True, text=True, timeout=60
        )
        if res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {res.stderr}")
        return res.stdout

    return run
