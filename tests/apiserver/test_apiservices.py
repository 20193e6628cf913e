"""API aggregation: an APIService makes the API server proxy a group/version to another server.

The backend is a real mini-metrics-server process (no kubelets: it serves its discovery documents
and empty lists), registered the way an installer does: a Service without selector, its Endpoints,
and the APIService naming them. Every verdict is read from the APIService's Available condition,
which the API server keeps as kube-aggregator does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for
from tests.support.fixtures import new_namespace

APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"
NAME = "v1beta1.metrics.k8s.io"


@pytest.fixture(scope="module")
def backend(apiserver: APIServerProcess) -> Iterator[tuple[ComponentProcess, int]]:
    port = free_port()
    proc = ComponentProcess("metrics_server", ["--master", apiserver.url, "--port", str(port),
                                               "--metric-resolution", "1s"], health_port=port).start()  # fmt: skip
    try:
        yield proc, port
    finally:
        proc.stop()


def api_service(ns: str, service: str, **extra: Any) -> dict[str, Any]:
    spec = {"group": "metrics.k8s.io", "version": "v1beta1", "service": {"namespace": ns, "name": service},
            "groupPriorityMinimum": 100, "versionPriority": 100, **extra}  # fmt: skip
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": NAME}, "spec": spec}


def available(api: httpx.Client) -> tuple[str, str] | None:
    r = api.get(f"{APISERVICES}/{NAME}")
    if r.status_code != 200:
        return None
    cond = next((c for c in (r.json().get("status") or {}).get("conditions") or [] if c["type"] == "Available"), None)
    return (cond["status"], cond["reason"]) if cond else None


def groups(api: httpx.Client) -> set[str]:
    return {g["name"] for g in api.get("/apis").json()["groups"]}


def test_an_apiservice_is_validated_and_defaulted_and_built_in_groups_are_local(api: httpx.Client) -> None:
    wrong = api_service("default", "x")
    wrong["metadata"]["name"] = "v1.metrics.k8s.io"
    r = api.post(APISERVICES, json=wrong)
    assert r.status_code == 422, r.text
    assert 'must be `spec.version+"."+spec.group`: "v1beta1.metrics.k8s.io"' in r.json()["message"]
    r = api.post(APISERVICES, json=api_service("default", "x", versionPriority=0))
    assert r.status_code == 422 and "must be positive and less than 1000" in r.json()["message"]
    # what the server serves itself is registered too, as Local and Available
    apps = api.get(f"{APISERVICES}/v1.apps").json()
    assert "service" not in apps["spec"] or apps["spec"]["service"] is None
    assert [(c["status"], c["reason"]) for c in apps["status"]["conditions"]] == [("True", "Local")]
    assert apps["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"] == "onstart"


def test_a_registered_backend_is_discovered_and_proxied_and_its_failures_are_reported(
    api: httpx.Client, backend: tuple[ComponentProcess, int]
) -> None:
    proc, port = backend
    ns = new_namespace(api, "agg")
    ports = [{"name": "http", "port": 443, "targetPort": port}]
    svc = {"metadata": {"name": "metrics-server"}, "spec": {"ports": ports}}
    assert api.post(f"/api/v1/namespaces/{ns}/services", json=svc).status_code == 201
    created = api.post(APISERVICES, json=api_service(ns, "metrics-server"))
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["service"]["port"] == 443  # defaulted
    try:
        # a Service without Endpoints cannot be reached: said so, and the group is not served
        assert wait_for(lambda: available(api) == ("False", "EndpointsNotFound") or None, what="EndpointsNotFound")
        subset = {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "http", "port": port}]}
        eps = {"metadata": {"name": "metrics-server"}, "subsets": [subset]}
        assert api.post(f"/api/v1/namespaces/{ns}/endpoints", json=eps).status_code == 201
        wait_for(lambda: available(api) == ("True", "Passed") or None, what="Available True")

        # discovery lists the group; its requests go to the backend, with the caller's identity
        assert "metrics.k8s.io" in groups(api)
        resources = api.get("/apis/metrics.k8s.io/v1beta1").json()
        assert {r["name"] for r in resources["resources"]} == {"nodes", "pods"}
        nodes = api.get("/apis/metrics.k8s.io/v1beta1/nodes")
        assert nodes.status_code == 200 and nodes.json()["kind"] == "NodeMetricsList"
        # a built-in group is never proxied, whatever is registered
        assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments").status_code == 200

        # the backend goes away: 503 with a Status, and the condition says why
        proc.stop()
        down = api.get("/apis/metrics.k8s.io/v1beta1/nodes")
        assert down.status_code == 503 and down.json()["kind"] == "Status", down.text
        wait_for(lambda: available(api) == ("False", "FailedDiscoveryCheck") or None, timeout=30,
                 what="FailedDiscoveryCheck")  # fmt: skip

        # pointing it at a Service that does not exist
        patch = {"spec": {"service": {"name": "nobody"}}}
        r = api.patch(f"{APISERVICES}/{NAME}", json=patch, headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 200, r.text
        wait_for(lambda: available(api) == ("False", "ServiceNotFound") or None, what="ServiceNotFound")
    finally:
        api.delete(f"{APISERVICES}/{NAME}")
    # deleted: the group is gone from discovery and its paths are not found
    wait_for(lambda: "metrics.k8s.io" not in groups(api), what="group gone from /apis")
    assert api.get("/apis/metrics.k8s.io/v1beta1/nodes").status_code == 404
