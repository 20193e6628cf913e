"""The endpointslice controller, end to end: a real controller-manager keeps EndpointSlices in step
with the pods a Service selects (readiness set through the pods' status subresource), splits
them at --max-endpoints-per-slice, and the real kubectl's `describe svc` and `get endpointslices`
show them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.compat.conftest import Kubectl, columns
from tests.controller_manager_infra.conftest import start_manager
from tests.controller_manager_infra.helpers import Cluster
from tests.support.apiserver import APIServerProcess
from tests.support.component import wait_for
from tests.support.kubectl import kubectl_binary

MANAGED = "endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io"
HTTP = [{"name": "http", "containerPort": 8080}]


@pytest.fixture(scope="module")
def c(apiserver: APIServerProcess) -> Iterator[Cluster]:
    cm = start_manager(apiserver, "endpointslice", "--max-endpoints-per-slice", "2")
    try:
        yield Cluster(apiserver, cm)
    finally:
        cm.stop()


def slices(c: Cluster, ns: str, service: str) -> list[dict]:
    return c.items(
        f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices"
        f"?labelSelector=kubernetes.io/service-name={service},{MANAGED}"
    )


def conditions(c: Cluster, ns: str, service: str) -> dict[str, dict]:
    return {e["addresses"][0]: e["conditions"] for s in slices(c, ns, service) for e in s.get("endpoints") or []}


def service(c: Cluster, ns: str, name: str) -> dict:
    return c.post(f"/api/v1/namespaces/{ns}/services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    })


def test_slices_follow_pods_readiness_and_split_at_the_maximum(c: Cluster, tmp_path: Path) -> None:
    ns = "es-ready"
    c.namespace(ns)
    svc = service(c, ns, "web")
    wait_for(lambda: len(slices(c, ns, "web")) == 1 and not slices(c, ns, "web")[0].get("endpoints"),
             timeout=15, what="placeholder slice")
    a = c.pod("a", namespace=ns, labels={"app": "web"}, node="n1", ports=HTTP)
    b = c.pod("b", namespace=ns, labels={"app": "web"}, node="n1", ports=HTTP)
    c.set_pod_status(a, ip="10.1.0.1", ready=True)
    c.set_pod_status(b, ip="10.1.0.2", ready=False)
    ready = {"ready": True, "serving": True, "terminating": False}
    unready = {"ready": False, "serving": False, "terminating": False}
    wait_for(lambda: conditions(c, ns, "web") == {"10.1.0.1": ready, "10.1.0.2": unready},
             timeout=15, what="endpoints of web")
    (one,) = slices(c, ns, "web")
    assert one["addressType"] == "IPv4" and one["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert one["metadata"]["ownerReferences"][0]["uid"] == svc["metadata"]["uid"]
    endpoint = next(e for e in one["endpoints"] if e["addresses"] == ["10.1.0.1"])
    assert endpoint["nodeName"] == "n1"
    assert endpoint["targetRef"] == {"kind": "Pod", "namespace": ns, "name": "a", "uid": a["metadata"]["uid"]}

    c.set_pod_status(b, ip="10.1.0.2", ready=True)
    wait_for(lambda: conditions(c, ns, "web").get("10.1.0.2") == ready, timeout=10, what="b ready")
    third = c.pod("c", namespace=ns, labels={"app": "web"}, node="n1", ports=HTTP)
    c.set_pod_status(third, ip="10.1.0.3", ready=True)
    wait_for(lambda: len(conditions(c, ns, "web")) == 3, timeout=10, what="third endpoint")
    assert sorted(len(s["endpoints"]) for s in slices(c, ns, "web")) == [1, 2]  # --max-endpoints-per-slice 2

    kubectl = Kubectl(kubectl_binary(), c.api.url, tmp_path)
    described = kubectl.ok("describe", "svc", "web", "-n", ns).out
    line = next(x for x in described.splitlines() if x.startswith("Endpoints:"))
    assert sorted(line.split(None, 1)[1].split(",")) == ["10.1.0.1:8080", "10.1.0.2:8080", "10.1.0.3:8080"]
    table = kubectl.ok("get", "endpointslices", "-n", ns).lines()
    assert columns(table[0]) == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert all(columns(row)[1:3] == ["IPv4", "8080"] for row in table[1:]) and len(table) == 3

    c.delete(f"/api/v1/namespaces/{ns}/pods/a", gracePeriodSeconds=0)
    c.delete(f"/api/v1/namespaces/{ns}/pods/c", gracePeriodSeconds=0)
    wait_for(lambda: set(conditions(c, ns, "web")) == {"10.1.0.2"}, timeout=10, what="a and c gone")
    assert len(slices(c, ns, "web")) == 1
    c.delete(f"/api/v1/namespaces/{ns}/services/web")
    wait_for(lambda: not slices(c, ns, "web"), timeout=10, what="slices of a deleted service")
