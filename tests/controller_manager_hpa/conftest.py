"""Fixtures for the HPA end-to-end tests: the whole autoscaling pipeline as real processes.

    kubelet (simulated runtime: usage from annotations) -> mini-metrics-server -> APIService
    v1beta1.metrics.k8s.io (the API server proxies metrics.k8s.io to it) -> the HPA controller in
    the controller-manager -> the target's /scale -> deployment and replicaset controllers ->
    scheduler -> kubelet again

One cluster per module (starting processes is the slow part); each test works in its own
namespace. The registration objects are the ones `mini-k8s up` creates (cluster/metrics_addon.py, addons.py).
Timing flags are turned down so that what takes minutes on a real cluster takes seconds:

    flag                                                   Kubernetes   here
    --horizontal-pod-autoscaler-sync-period                15s          0.5s
    --horizontal-pod-autoscaler-downscale-stabilization    5m           3s
    --metric-resolution (metrics-server)                   15s          500ms

The CPU initialization period (5m) and readiness delay (30s) keep Kubernetes' values: a new pod's
CPU sample counts once it is Ready and a whole metrics window has passed since, as in Kubernetes.

The describe tests need no controller: they use the module's API server with `pair` (the real
kubectl and mini-kubectl side by side), `api` and `ns` from tests/kubectl/conftest.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from client import RESTClient
from cluster.addons import ensure_metrics_api
from tests.controller_manager_infra.conftest import start_manager
from tests.controller_manager_infra.helpers import Cluster
from tests.controller_manager_workloads.conftest import scheduler_and_kubelet
from tests.kubectl.conftest import api, ns, pair  # noqa: F401  (fixtures: a client, a namespace, both kubectls)
from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for

apiserver = fixtures.apiserver  # the shared module-scoped fixture

CONTROLLERS = "horizontalpodautoscaling,deployment,replicaset,endpoints"
SYNC_PERIOD = 0.5
DOWNSCALE_STABILIZATION = 3.0
HPA_FLAGS = (
    "--horizontal-pod-autoscaler-sync-period", f"{SYNC_PERIOD}s",
    "--horizontal-pod-autoscaler-downscale-stabilization", f"{DOWNSCALE_STABILIZATION}s",
)  # fmt: skip
APISERVICE = "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io"


class HPACluster(Cluster):
    """A Cluster (tests/controller_manager_infra/helpers.py) that reads HPAs too."""

    def hpa(self, namespace: str, name: str) -> dict:
        return self.get(f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/{name}") or {}


def start_metrics_server(server: APIServerProcess) -> tuple[ComponentProcess, int]:
    port = free_port()
    args = ["--master", server.url, "--port", str(port), "--metric-resolution", "500ms",
            "--kubelet-request-timeout", "2s"]  # fmt: skip
    return ComponentProcess("metrics_server", args, health_port=port).start(timeout=40), port


def apiservice_available(http: httpx.Client) -> bool:
    status = http.get(APISERVICE).json().get("status") or {}
    return any(c["type"] == "Available" and c["status"] == "True" for c in status.get("conditions") or [])


@pytest.fixture(scope="module")
def hpa_cluster(apiserver: APIServerProcess) -> Iterator[HPACluster]:
    """API server, scheduler, a kubelet simulating two nodes, metrics-server registered as the
    metrics API, and a controller-manager running the HPA controller with short periods."""
    with scheduler_and_kubelet(apiserver, "hpa", nodes=2):
        metrics, port = start_metrics_server(apiserver)
        manager = None
        try:

            async def register() -> None:
                async with RESTClient(apiserver.url) as client:
                    await ensure_metrics_api(client, port)

            asyncio.run(register())
            manager = start_manager(apiserver, CONTROLLERS, *HPA_FLAGS)
            c = HPACluster(apiserver, manager)
            wait_for(lambda: apiservice_available(c.http), timeout=30, what="APIService v1beta1.metrics.k8s.io")
            yield c
        finally:
            if manager is not None:
                manager.stop()
            metrics.stop()
