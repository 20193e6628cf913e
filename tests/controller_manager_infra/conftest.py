"""Fixtures for the infrastructure controllers' tests: a real API server and a real
controller-manager process running the controllers under test with fast timing flags.

Kubelets are simulated where the test is about the controller: the test itself creates the Node,
renews (or stops renewing) its Lease and posts pod status through the API, exactly the writes a
kubelet makes. Everything is observed through the API, as kubectl would.

Starting processes is the slow part on a busy machine, so one API server serves a whole module;
`cluster_factory` starts a controller-manager per test (each with its own flags) and afterwards
clears what node tests leave behind (nodes, leases, pods, events), so tests do not see each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.controller_manager_infra.helpers import Cluster
from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port

apiserver = fixtures.apiserver  # the shared module-scoped fixture

FAST = [
    "--node-monitor-period", "0.2",
    "--node-monitor-grace-period", "2",
    "--node-startup-grace-period", "2",
    "--informer-backoff-max", "1",
    "--kube-api-qps", "0",
]  # fmt: skip


def start_manager(api: APIServerProcess, controllers: str, *args: str) -> ComponentProcess:
    port = free_port()
    argv = ["--master", api.url, "--port", str(port), "--controllers", controllers, "-v", "2", *FAST, *args]
    return ComponentProcess("controller_manager", argv, health_port=port).start(timeout=40)


@pytest.fixture
def cluster_factory(apiserver: APIServerProcess) -> Iterator[Callable[..., Cluster]]:
    managers: list[ComponentProcess] = []

    def start(controllers: str, *cm_args: str) -> Cluster:
        cm = start_manager(apiserver, controllers, *cm_args)
        managers.append(cm)
        return Cluster(apiserver, cm)

    yield start
    for cm in managers:
        cm.stop()
    with apiserver.client() as http:
        for path in (
            "/api/v1/nodes",
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            "/api/v1/namespaces/default/pods",
            "/api/v1/namespaces/default/events",
        ):
            http.request("DELETE", path, json={"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
