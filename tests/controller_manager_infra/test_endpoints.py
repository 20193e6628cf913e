"""The endpoints controller: Endpoints follow the pods a Service selects, and their readiness."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.controller_manager_infra.conftest import start_manager
from tests.controller_manager_infra.helpers import Cluster
from tests.support.apiserver import APIServerProcess
from tests.support.component import wait_for


@pytest.fixture(scope="module")
def c(apiserver: APIServerProcess) -> Iterator[Cluster]:
    cm = start_manager(apiserver, "endpoints")
    try:
        yield Cluster(apiserver, cm)
    finally:
        cm.stop()


def service(c: Cluster, ns: str, name: str, selector: dict | None, ports: list[dict], **spec: object) -> dict:
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"ports": ports, **spec},
    }
    if selector is not None:
        body["spec"]["selector"] = selector
    return c.post(f"/api/v1/namespaces/{ns}/services", body)


def endpoints(c: Cluster, ns: str, name: str) -> dict | None:
    return c.get(f"/api/v1/namespaces/{ns}/endpoints/{name}")


def ips(subsets: list[dict], field: str = "addresses") -> set[str]:
    return {a["ip"] for s in subsets for a in s.get(field) or []}


HTTP = [{"name": "http", "containerPort": 8080}]


def test_ready_pods_are_addresses_unready_ones_not_ready_addresses_and_readiness_is_tracked(c):
    c.namespace("ep-ready")
    ns = "ep-ready"
    service(c, ns, "web", {"app": "web"}, [{"name": "http", "port": 80, "targetPort": "http"}])
    a = c.pod("a", namespace=ns, labels={"app": "web"}, node="n1", ports=HTTP)
    b = c.pod("b", namespace=ns, labels={"app": "web"}, node="n1", ports=HTTP)
    c.pod("no-ip", namespace=ns, labels={"app": "web"}, ports=HTTP)
    other = c.pod("other", namespace=ns, labels={"app": "db"}, ports=HTTP)
    c.set_pod_status(a, ip="10.1.0.1", ready=True)
    c.set_pod_status(b, ip="10.1.0.2", ready=False)
    c.set_pod_status(other, ip="10.1.0.3", ready=True)

    def shaped(ready: set[str], not_ready: set[str]) -> bool:
        ep = endpoints(c, ns, "web")
        subsets = (ep or {}).get("subsets") or []
        return ips(subsets) == ready and ips(subsets, "notReadyAddresses") == not_ready

    wait_for(lambda: shaped({"10.1.0.1"}, {"10.1.0.2"}), timeout=15, what="endpoints of web")
    subset = endpoints(c, ns, "web")["subsets"][0]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    address = subset["addresses"][0]
    assert address["nodeName"] == "n1"
    assert address["targetRef"] == {"kind": "Pod", "namespace": ns, "name": "a", "uid": a["metadata"]["uid"]}

    c.set_pod_status(b, ip="10.1.0.2", ready=True)
    wait_for(lambda: shaped({"10.1.0.1", "10.1.0.2"}, set()), timeout=10, what="b ready")
    c.set_pod_status(a, ip="10.1.0.1", ready=False)
    wait_for(lambda: shaped({"10.1.0.2"}, {"10.1.0.1"}), timeout=10, what="a not ready")
    c.delete(f"/api/v1/namespaces/{ns}/pods/b", gracePeriodSeconds=0)
    wait_for(lambda: shaped(set(), {"10.1.0.1"}), timeout=10, what="b gone")


def test_pods_with_different_resolved_ports_form_separate_subsets_and_numbers_pass_through(c):
    c.namespace("ep-ports")
    ns = "ep-ports"
    service(
        c,
        ns,
        "api",
        {"app": "api"},
        [
            {"name": "http", "port": 80, "targetPort": "http"},
            {"name": "metrics", "port": 9090, "targetPort": 9100},
        ],
    )
    old = c.pod("old", namespace=ns, labels={"app": "api"}, ports=[{"name": "http", "containerPort": 8080}])
    new = c.pod("new", namespace=ns, labels={"app": "api"}, ports=[{"name": "http", "containerPort": 8081}])
    c.set_pod_status(old, ip="10.2.0.1", ready=True)
    c.set_pod_status(new, ip="10.2.0.2", ready=True)

    def two_subsets() -> bool:
        subsets = (endpoints(c, ns, "api") or {}).get("subsets") or []
        by_ip = {
            a["ip"]: {(p["name"], p["port"]) for p in s["ports"]} for s in subsets for a in s["addresses"]
        }
        return len(subsets) == 2 and by_ip == {
            "10.2.0.1": {("http", 8080), ("metrics", 9100)},
            "10.2.0.2": {("http", 8081), ("metrics", 9100)},
        }

    wait_for(two_subsets, timeout=15, what="two subsets")


def test_publish_not_ready_addresses_lists_unready_pods_as_addresses(c):
    c.namespace("ep-publish")
    ns = "ep-publish"
    service(c, ns, "peers", {"app": "db"}, [{"port": 5432}], publishNotReadyAddresses=True, clusterIP="None")
    pod = c.pod("db-0", namespace=ns, labels={"app": "db"})
    c.set_pod_status(pod, ip="10.3.0.1", ready=False)
    wait_for(
        lambda: ips((endpoints(c, ns, "peers") or {}).get("subsets") or []) == {"10.3.0.1"},
        timeout=15,
        what="unready pod published",
    )
    ep = endpoints(c, ns, "peers")
    assert ep["metadata"]["labels"].get("service.kubernetes.io/headless") == ""
    assert ep["subsets"][0]["ports"] == [{"port": 5432, "protocol": "TCP"}]


def test_deleting_the_service_deletes_its_endpoints(c):
    c.namespace("ep-delete")
    ns = "ep-delete"
    service(c, ns, "gone", {"app": "x"}, [{"port": 80}])
    wait_for(lambda: endpoints(c, ns, "gone") is not None, timeout=15, what="endpoints created")
    c.delete(f"/api/v1/namespaces/{ns}/services/gone")
    wait_for(lambda: endpoints(c, ns, "gone") is None, timeout=10, what="endpoints deleted")


def test_deleted_endpoints_of_a_live_service_come_back(c):
    c.namespace("ep-recreate")
    ns = "ep-recreate"
    service(c, ns, "web", {"app": "web"}, [{"port": 80}])
    pod = c.pod("a", namespace=ns, labels={"app": "web"})
    c.set_pod_status(pod, ip="10.4.0.1", ready=True)
    wait_for(lambda: ips((endpoints(c, ns, "web") or {}).get("subsets") or []) == {"10.4.0.1"}, timeout=15)
    c.delete(f"/api/v1/namespaces/{ns}/endpoints/web")
    wait_for(
        lambda: ips((endpoints(c, ns, "web") or {}).get("subsets") or []) == {"10.4.0.1"},
        timeout=10,
        what="endpoints recreated",
    )


def test_selectorless_services_and_the_apiservers_own_endpoints_are_left_alone(c):
    c.namespace("ep-manual")
    ns = "ep-manual"
    service(c, ns, "external", None, [{"port": 5432}])
    manual = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "external", "namespace": ns},
        "subsets": [{"addresses": [{"ip": "192.168.1.10"}], "ports": [{"port": 5432}]}],
    }
    c.post(f"/api/v1/namespaces/{ns}/endpoints", manual)
    kubernetes_before = endpoints(c, "default", "kubernetes")
    # A selector service queued after the manual one: once its endpoints exist, the manual ones were seen.
    service(c, ns, "marker", {"app": "m"}, [{"port": 80}])
    wait_for(lambda: endpoints(c, ns, "marker") is not None, timeout=15, what="marker endpoints")
    assert ips(endpoints(c, ns, "external")["subsets"]) == {"192.168.1.10"}
    assert endpoints(c, "default", "kubernetes")["subsets"] == kubernetes_before["subsets"]
