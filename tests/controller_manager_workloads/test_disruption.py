"""PodDisruptionBudgets end to end: the disruption controller's status, the eviction subresource's
429, and `kubectl drain` waiting on a budget, with the real kubectl.

Processes: an API server, a controller-manager running replicaset, deployment and disruption, a
scheduler and a kubelet simulating three nodes whose pods are Ready a fifth of a second after
they start.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.controller_manager_workloads.conftest import scheduler_and_kubelet
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace
from tests.support.kubectl import kubectl_binary

CANNOT_EVICT = "Cannot evict pod as it would violate the pod's disruption budget."


@pytest.fixture(scope="module")
def cluster(
    apiserver: APIServerProcess, start_manager: Callable[..., ComponentProcess]
) -> Iterator[ComponentProcess]:
    manager = start_manager(controllers="replicaset,deployment,disruption")
    with scheduler_and_kubelet(apiserver, "pdbnode"):
        yield manager


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    pod = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": pod}}  # fmt: skip


def budget(name: str, app: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": app}}, **spec}}  # fmt: skip


def ready_pods(api: httpx.Client, ns: str, app: str) -> list[dict[str, Any]]:
    pods = api.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": f"app={app}"}).json()["items"]
    return [
        p for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])
    ]  # fmt: skip


def pdb_status(api: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    return api.get(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/{name}").json().get("status") or {}


def wait_status(api: httpx.Client, ns: str, name: str, **want: int) -> dict[str, Any]:
    def matches() -> dict[str, Any] | None:
        status = pdb_status(api, ns, name)
        return status if all(status.get(k) == v for k, v in want.items()) else None

    return wait_for(matches, timeout=30, what=f"pdb {name} status {want}")


def evict(api: httpx.Client, ns: str, pod: str, **query: str) -> httpx.Response:
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": ns}}
    return api.post(f"/api/v1/namespaces/{ns}/pods/{pod}/eviction", json=body, params=query)


def test_status_counts_healthy_pods_and_an_eviction_spends_one_disruption(
    cluster: ComponentProcess, api: httpx.Client
) -> None:
    ns = new_namespace(api, "pdb")
    assert api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web", 3)).status_code == 201
    r = api.post(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", json=budget("web", "web", minAvailable=2))
    assert r.status_code == 201, r.text
    status = wait_status(api, ns, "web", currentHealthy=3, desiredHealthy=2, expectedPods=3, disruptionsAllowed=1)
    assert status["observedGeneration"] == 1
    cond = next(c for c in status["conditions"] if c["type"] == "DisruptionAllowed")
    assert (cond["status"], cond["reason"]) == ("True", "SufficientPods")

    first, second = (p["metadata"]["name"] for p in ready_pods(api, ns, "web")[:2])
    # a dry run is checked like the real thing and changes nothing
    assert evict(api, ns, first, dryRun="All").status_code == 201
    assert pdb_status(api, ns, "web")["disruptionsAllowed"] == 1
    assert api.get(f"/api/v1/namespaces/{ns}/pods/{first}").json()["metadata"].get("deletionTimestamp") is None

    r = evict(api, ns, first)
    assert r.status_code == 201, r.text
    status = pdb_status(api, ns, "web")
    # the eviction spent the disruption: the pod is either still listed as disrupted (the controller has
    # not seen its deletion yet) or already counted as unhealthy (it has, and dropped the entry)
    assert status["disruptionsAllowed"] == 0
    assert first in status.get("disruptedPods", {}) or status["currentHealthy"] == 2, status
    r = evict(api, ns, second)
    assert r.status_code == 429, r.text
    body = r.json()
    assert (body["reason"], body["message"]) == ("TooManyRequests", CANNOT_EVICT)
    cause = body["details"]["causes"][0]
    assert cause["reason"] == "DisruptionBudget"
    assert cause["message"].startswith("The disruption budget web needs 2 healthy pods and has ")
    assert api.get(f"/api/v1/namespaces/{ns}/pods/{second}").json()["metadata"].get("deletionTimestamp") is None

    # the Deployment replaces the evicted pod; once it is Ready one disruption is allowed again
    status = wait_status(api, ns, "web", currentHealthy=3, disruptionsAllowed=1)
    assert first not in status.get("disruptedPods", {})
    assert evict(api, ns, second).status_code == 201


def test_max_unavailable_is_a_share_of_the_deployments_scale(cluster: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "pdbpct")
    api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("api", 4))
    api.post(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", json=budget("api", "api", maxUnavailable="50%"))
    wait_status(api, ns, "api", expectedPods=4, desiredHealthy=2, currentHealthy=4, disruptionsAllowed=2)
    r = api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/api", json={"spec": {"replicas": 6}},
                  headers={"Content-Type": "application/merge-patch+json"})  # fmt: skip
    assert r.status_code == 200
    wait_status(api, ns, "api", expectedPods=6, desiredHealthy=3, currentHealthy=6, disruptionsAllowed=3)


def test_a_percentage_over_pods_without_a_controller_allows_nothing(
    cluster: ComponentProcess, api: httpx.Client
) -> None:
    ns = new_namespace(api, "pdbbare")
    pod = {"metadata": {"name": "lonely", "labels": {"app": "lonely"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}  # fmt: skip
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod).status_code == 201
    api.post(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
             json=budget("lonely", "lonely", minAvailable="50%"))  # fmt: skip

    def failed() -> dict[str, Any] | None:
        conds = pdb_status(api, ns, "lonely").get("conditions") or []
        return next((c for c in conds if c["type"] == "DisruptionAllowed" and c["reason"] == "SyncFailed"), None)

    cond = wait_for(failed, timeout=30, what="SyncFailed condition")
    assert cond["status"] == "False" and cond["message"] == 'found no controller ref for pod "lonely"'
    wait_for(lambda: ready_pods(api, ns, "lonely"), timeout=30, what="the pod Ready")
    r = evict(api, ns, "lonely")
    assert r.status_code == 429 and r.json()["message"] == CANNOT_EVICT
    def reasons() -> list[str]:
        return [e["reason"] for e in api.get(f"/api/v1/namespaces/{ns}/events").json()["items"]]

    wait_for(lambda: "CalculateExpectedPodCountFailed" in reasons(), what="the CalculateExpectedPodCountFailed event")


def test_two_budgets_over_one_pod_are_refused(cluster: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "pdbtwo")
    api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("two", 2))
    for name in ("a", "b"):
        api.post(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", json=budget(name, "two", minAvailable=0))
    pod = wait_for(lambda: ready_pods(api, ns, "two"), timeout=30, what="a Ready pod")[0]["metadata"]["name"]
    r = evict(api, ns, pod)
    assert r.status_code == 500
    assert r.json()["message"] == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )


def test_kubectl_drain_waits_for_the_budget(
    cluster: ComponentProcess, api: httpx.Client, apiserver: APIServerProcess
) -> None:
    ns = new_namespace(api, "drain")
    api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("db", 2))
    api.post(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", json=budget("db", "db", minAvailable=2))
    wait_status(api, ns, "db", currentHealthy=2, disruptionsAllowed=0)
    node = ready_pods(api, ns, "db")[0]["spec"]["nodeName"]

    def drain(timeout: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [kubectl_binary(), "--server", apiserver.url, "drain", node, "--pod-selector", "app=db",
             "--ignore-daemonsets", f"--timeout={timeout}"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    try:
        refused = drain("3s")
        assert refused.returncode != 0
        assert f"(will retry after 5s): {CANNOT_EVICT}" in refused.stderr, refused.stderr
        # one more replica elsewhere makes room: the drain now goes through
        api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/db", json={"spec": {"replicas": 3}},
                  headers={"Content-Type": "application/merge-patch+json"})  # fmt: skip
        wait_status(api, ns, "db", currentHealthy=3, disruptionsAllowed=1)
        done = drain("60s")
        assert done.returncode == 0, done.stderr
        assert f"node/{node} drained" in done.stdout
    finally:
        subprocess.run([kubectl_binary(), "--server", apiserver.url, "uncordon", node], capture_output=True)
