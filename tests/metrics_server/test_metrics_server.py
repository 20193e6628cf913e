"""mini-metrics-server as a real process: it scrapes a real kubelet (two simulated nodes in one
process) found through a real API server, and serves metrics.k8s.io/v1beta1 as the aggregation
layer will forward it. Load is set with the simulated runtime's annotations, so the expected
usage is known exactly.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from api.quantity import parse_quantity
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for
from tests.support.fixtures import new_namespace

CPU = "simulation.mini-k8s.io/cpu-usage"
MEMORY = "simulation.mini-k8s.io/memory-usage"
GV = "/apis/metrics.k8s.io/v1beta1"
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
GO_DURATION = re.compile(r"^(\d+(\.\d+)?(ms|s)|\d+m\d+(\.\d+)?s)$")


@dataclass
class Cluster:
    api: httpx.Client
    metrics: httpx.Client
    nodes: list[str]
    server: ComponentProcess


@pytest.fixture(scope="module")
def cluster(apiserver: APIServerProcess, api: httpx.Client) -> Iterator[Cluster]:
    base = f"ms-{uuid.uuid4().hex[:6]}"
    kport, mport = free_port(), free_port()
    kubelet = ComponentProcess("kubelet", [
        "--master", apiserver.url, "--node-name", base, "--nodes", "2", "--port", str(kport),
        "--node-labels", "pool=metrics", "--pod-startup-delay", "0.2", "--node-status-update-frequency", "1",
    ], health_port=kport).start()  # fmt: skip
    server = ComponentProcess("metrics_server", [
        "--master", apiserver.url, "--port", str(mport), "--metric-resolution", "500ms",
        "--kubelet-request-timeout", "2s",
    ], health_port=mport).start()  # fmt: skip
    metrics = httpx.Client(base_url=f"http://127.0.0.1:{mport}", timeout=5)
    try:
        wait_for(lambda: metrics.get("/readyz").status_code == 200, what="metrics-server ready")
        yield Cluster(api, metrics, [f"{base}-0", f"{base}-1"], server)
    finally:
        metrics.close()
        server.stop()
        kubelet.stop()


def cores(quantity: str) -> float:
    return parse_quantity(quantity).nanos / 1e9


def make_pod(api: httpx.Client, ns: str, name: str, node: str, labels: dict[str, str], cpu: str,
             memory: str = "100Mi") -> None:  # fmt: skip
    body = {"metadata": {"name": name, "labels": labels, "annotations": {CPU: cpu, MEMORY: memory}},
            "spec": {"nodeName": node, "containers": [{"name": "app", "image": "nginx"}]}}  # fmt: skip
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    assert r.status_code == 201, r.text


def listed(c: Cluster, path: str, *names: str, **params: str) -> dict[str, Any] | None:
    """The list at `path` once it holds every one of `names` (None until then)."""
    body = c.metrics.get(path, params=params).json()
    found = {i["metadata"]["name"] for i in body["items"]}
    return body if set(names) <= found else None


def test_pod_metrics_report_the_annotated_load_in_nanocores_and_follow_a_change(cluster: Cluster) -> None:
    ns = new_namespace(cluster.api, "msp")
    make_pod(cluster.api, ns, "web", cluster.nodes[0], {"app": "web"}, "500m")
    body = wait_for(lambda: listed(cluster, f"{GV}/namespaces/{ns}/pods", "web"), timeout=30, what="web's metrics")
    assert body["kind"] == "PodMetricsList" and body["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert body["metadata"] == {}
    [item] = body["items"]
    assert "kind" not in item  # items of a typed list carry no type
    assert item["metadata"]["name"] == "web" and item["metadata"]["namespace"] == ns
    assert item["metadata"]["labels"] == {"app": "web"} and RFC3339.match(item["metadata"]["creationTimestamp"])
    assert RFC3339.match(item["timestamp"]) and GO_DURATION.match(item["window"]), item
    [container] = item["containers"]
    assert container["name"] == "app"
    assert re.fullmatch(r"\d+n|\d+m", container["usage"]["cpu"]), container  # nanocores (shortened when round)
    assert cores(container["usage"]["cpu"]) == pytest.approx(0.5, rel=0.02)
    assert container["usage"]["memory"] == "100Mi"

    one = cluster.metrics.get(f"{GV}/namespaces/{ns}/pods/web").json()
    assert one["kind"] == "PodMetrics" and one["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert one["metadata"]["name"] == "web"

    patch = {"metadata": {"annotations": {CPU: "2"}}}
    r = cluster.api.patch(f"/api/v1/namespaces/{ns}/pods/web", json=patch,
                          headers={"Content-Type": "application/merge-patch+json"})  # fmt: skip
    assert r.status_code == 200, r.text

    def usage() -> float:
        return cores(cluster.metrics.get(f"{GV}/namespaces/{ns}/pods/web").json()["containers"][0]["usage"]["cpu"])

    wait_for(lambda: usage() == pytest.approx(2.0, rel=0.02), timeout=20, what="2 cores")


def test_label_and_field_selectors_filter_pod_metrics(cluster: Cluster) -> None:
    ns = new_namespace(cluster.api, "mss")
    make_pod(cluster.api, ns, "web", cluster.nodes[0], {"app": "web"}, "300m")
    make_pod(cluster.api, ns, "db", cluster.nodes[1], {"app": "db"}, "200m", "1Gi")
    wait_for(lambda: listed(cluster, f"{GV}/namespaces/{ns}/pods", "web", "db"), timeout=30, what="both pods")

    def names(path: str, **params: str) -> list[str]:
        r = cluster.metrics.get(path, params=params)
        assert r.status_code == 200, r.text
        return [i["metadata"]["name"] for i in r.json()["items"] if i["metadata"]["namespace"] == ns]

    assert names(f"{GV}/namespaces/{ns}/pods", labelSelector="app=web") == ["web"]
    assert names(f"{GV}/namespaces/{ns}/pods", labelSelector="app in (web,db)") == ["db", "web"]
    assert names(f"{GV}/namespaces/{ns}/pods", labelSelector="app!=web") == ["db"]
    assert names(f"{GV}/namespaces/{ns}/pods", fieldSelector="metadata.name=db") == ["db"]
    assert names(f"{GV}/pods", labelSelector="app=db", fieldSelector=f"metadata.namespace={ns}") == ["db"]
    assert names(f"{GV}/pods") == ["db", "web"]  # every namespace, sorted
    db = cluster.metrics.get(f"{GV}/namespaces/{ns}/pods/db").json()
    assert db["containers"][0]["usage"]["memory"] == "1Gi"
    bad = cluster.metrics.get(f"{GV}/pods", params={"labelSelector": "app in"})
    assert bad.status_code == 400 and bad.json()["reason"] == "BadRequest"
    unsupported = cluster.metrics.get(f"{GV}/pods", params={"fieldSelector": "spec.nodeName=x"})
    assert unsupported.status_code == 400 and "field label not supported" in unsupported.json()["message"]


def test_node_metrics_list_every_scraped_node_with_its_labels(cluster: Cluster) -> None:
    ns = new_namespace(cluster.api, "msn")
    make_pod(cluster.api, ns, "load", cluster.nodes[1], {}, "1")
    body = wait_for(lambda: listed(cluster, f"{GV}/nodes", *cluster.nodes, labelSelector="pool=metrics"),
                    timeout=30, what="both nodes")  # fmt: skip
    assert body["kind"] == "NodeMetricsList" and body["metadata"] == {}
    items = {i["metadata"]["name"]: i for i in body["items"]}
    assert sorted(items) == cluster.nodes
    for item in items.values():
        assert item["metadata"]["labels"]["pool"] == "metrics" and GO_DURATION.match(item["window"])
        assert cores(item["usage"]["cpu"]) >= 0.05 and parse_quantity(item["usage"]["memory"]).value() >= 256 << 20
    wait_for(lambda: cores(cluster.metrics.get(f"{GV}/nodes/{cluster.nodes[1]}").json()["usage"]["cpu"]) >= 1.0,
             timeout=20, what="the loaded node at 1 core or more")  # fmt: skip
    one = cluster.metrics.get(f"{GV}/nodes/{cluster.nodes[0]}").json()
    assert one["kind"] == "NodeMetrics" and one["apiVersion"] == "metrics.k8s.io/v1beta1"
    none = cluster.metrics.get(f"{GV}/nodes", params={"labelSelector": "pool=elsewhere"}).json()
    assert none["items"] == []
    named = cluster.metrics.get(f"{GV}/nodes", params={"fieldSelector": f"metadata.name={cluster.nodes[0]}"}).json()
    assert [i["metadata"]["name"] for i in named["items"]] == [cluster.nodes[0]]


def test_a_node_whose_kubelet_does_not_answer_is_skipped(cluster: Cluster) -> None:
    ghost = f"ghost-{uuid.uuid4().hex[:6]}"
    r = cluster.api.post("/api/v1/nodes", json={"metadata": {"name": ghost, "labels": {"pool": "metrics"}}})
    assert r.status_code == 201, r.text
    node = r.json()
    node["status"] = {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                      "daemonEndpoints": {"kubeletEndpoint": {"Port": free_port()}}}  # fmt: skip
    r = cluster.api.put(f"/api/v1/nodes/{ghost}/status", json=node)
    assert r.status_code == 200, r.text
    wait_for(lambda: f"failed to scrape node {ghost}" in cluster.server.log_tail(200), timeout=20, what="the error")
    body = wait_for(lambda: listed(cluster, f"{GV}/nodes", *cluster.nodes), timeout=20, what="the real nodes")
    assert ghost not in {i["metadata"]["name"] for i in body["items"]}
    missing = cluster.metrics.get(f"{GV}/nodes/{ghost}")
    assert missing.status_code == 404
    assert cluster.metrics.get("/readyz").status_code == 200 and cluster.metrics.get("/livez").status_code == 200


def test_what_has_no_metrics_is_a_kubernetes_404_status(cluster: Cluster) -> None:
    r = cluster.metrics.get(f"{GV}/nodes/no-such-node")
    assert r.status_code == 404
    assert r.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'nodemetrics.metrics.k8s.io "no-such-node" not found', "reason": "NotFound",
        "details": {"name": "no-such-node", "group": "metrics.k8s.io", "kind": "nodemetrics"}, "code": 404,
    }  # fmt: skip
    r = cluster.metrics.get(f"{GV}/namespaces/default/pods/no-such-pod")
    assert r.status_code == 404
    assert r.json()["message"] == 'podmetrics.metrics.k8s.io "no-such-pod" not found'
    assert r.json()["details"] == {"name": "no-such-pod", "group": "metrics.k8s.io", "kind": "podmetrics"}
    unknown = cluster.metrics.get("/apis/metrics.k8s.io/v1beta1/deployments")
    assert unknown.status_code == 404 and unknown.json()["kind"] == "Status"
    post = cluster.metrics.post(f"{GV}/nodes", json={})
    assert post.status_code == 405 and post.json()["reason"] == "MethodNotAllowed"


def test_discovery_documents_describe_nodes_and_pods(cluster: Cluster) -> None:
    group = cluster.metrics.get("/apis/metrics.k8s.io").json()
    version = {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}
    assert group == {"kind": "APIGroup", "apiVersion": "v1", "name": "metrics.k8s.io", "versions": [version],
                     "preferredVersion": version}  # fmt: skip
    resources = cluster.metrics.get(GV).json()
    assert resources["kind"] == "APIResourceList" and resources["groupVersion"] == "metrics.k8s.io/v1beta1"
    assert [(r["name"], r["kind"], r["namespaced"], r["verbs"]) for r in resources["resources"]] == [
        ("nodes", "NodeMetrics", False, ["get", "list"]),
        ("pods", "PodMetrics", True, ["get", "list"]),
    ]
    groups = cluster.metrics.get("/apis").json()
    assert groups["kind"] == "APIGroupList" and [g["name"] for g in groups["groups"]] == ["metrics.k8s.io"]
    for check in ("/healthz", "/livez", "/readyz"):
        assert cluster.metrics.get(check).text == "ok"
