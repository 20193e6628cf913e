"""The endpointslicemirroring controller end to end: a real controller-manager copies the Endpoints of
selector-less Services into EndpointSlices, follows their changes, and removes the copies when the
Endpoints may not (skip-mirror, leader lock) or need not (Service gone or given a selector) be
mirrored. Everything is observed through the API."""

from __future__ import annotations

from tests.controller_manager_infra.helpers import Cluster
from tests.controller_manager_mirroring.conftest import (
    addresses,
    barrier,
    endpoints,
    service,
    slices,
    subset,
)
from tests.support.component import wait_for

ENDPOINTSLICE_CONTROLLER = "endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io"
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def ep_path(ns: str, name: str) -> str:
    return f"/api/v1/namespaces/{ns}/endpoints/{name}"


def test_a_selectorless_service_is_mirrored_into_one_slice(c: Cluster, ns: str) -> None:
    service(c, ns, "db")
    ready = {"ip": "10.1.0.1", "hostname": "db-0", "nodeName": "n1",
             "targetRef": {"kind": "Pod", "namespace": ns, "name": "db-0"}}  # fmt: skip
    ep = endpoints(c, ns, "db", [{"addresses": [ready], "notReadyAddresses": [{"ip": "10.1.0.2"}],
                                  "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}],
                   labels={"app": "db"},
                   annotations={"note": "kept", TRIGGER_TIME: "2024-01-01T00:00:00Z", LAST_APPLIED: "{}"})  # fmt: skip
    wait_for(lambda: addresses(c, ns, "db") == {"10.1.0.1": True, "10.1.0.2": False}, what="db mirrored")
    (one,) = slices(c, ns, "db")
    meta = one["metadata"]
    assert meta["name"].startswith("db-") and meta["generateName"] == "db-"
    assert meta["labels"] == {"app": "db", "kubernetes.io/service-name": "db",
                              "endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io"}
    assert meta["annotations"] == {"note": "kept"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Endpoints", "name": "db",
                                        "uid": ep["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]  # fmt: skip
    assert one["addressType"] == "IPv4"
    assert one["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    first = next(e for e in one["endpoints"] if e["addresses"] == ["10.1.0.1"])
    assert first == {"addresses": ["10.1.0.1"], "conditions": {"ready": True}, "hostname": "db-0", "nodeName": "n1",
                     "targetRef": {"kind": "Pod", "namespace": ns, "name": "db-0"}}  # fmt: skip
    # The API server's own `default/kubernetes` Endpoints are never mirrored: it keeps that slice itself.
    barrier(c, "default")
    assert not slices(c, "default", "kubernetes")


def test_an_update_of_the_endpoints_is_reflected_in_the_same_slice(c: Cluster, ns: str) -> None:
    service(c, ns, "db")
    endpoints(c, ns, "db", [subset("10.1.0.1", "10.1.0.2")], labels={"tier": "a"})
    wait_for(lambda: addresses(c, ns, "db") == {"10.1.0.1": True, "10.1.0.2": True}, what="db mirrored")
    name = slices(c, ns, "db")[0]["metadata"]["name"]

    ep = c.get(ep_path(ns, "db"))
    assert ep is not None
    ep["metadata"]["labels"] = {"tier": "b"}
    ep["metadata"]["annotations"] = {"note": "new"}
    ep["subsets"] = [subset("10.1.0.3", not_ready=("10.1.0.1",))]
    c.put(ep_path(ns, "db"), ep)
    wait_for(lambda: addresses(c, ns, "db") == {"10.1.0.1": False, "10.1.0.3": True}, what="update mirrored")
    (one,) = slices(c, ns, "db")
    assert one["metadata"]["name"] == name  # updated in place, not replaced
    assert one["metadata"]["labels"]["tier"] == "b" and one["metadata"]["annotations"] == {"note": "new"}

    # A change that does not show in the slice (an annotation that is not copied) leaves it as it is.
    version = one["metadata"]["resourceVersion"]
    c.patch(ep_path(ns, "db"), {"metadata": {"annotations": {TRIGGER_TIME: "2024-01-01T00:00:00Z"}}})
    barrier(c, ns)
    assert [s["metadata"]["resourceVersion"] for s in slices(c, ns, "db")] == [version]


def test_each_port_list_and_address_type_gets_its_own_slice(c: Cluster, ns: str) -> None:
    service(c, ns, "multi")
    metrics = [{"name": "metrics", "port": 9090, "protocol": "TCP"}]
    endpoints(c, ns, "multi", [subset("10.2.0.1"), subset("10.2.0.2", ports=metrics), subset("10.2.0.3"),
                               subset("fd00::1")])  # fmt: skip

    def groups() -> dict[tuple[str, tuple[int, ...]], set[str]]:
        return {(s["addressType"], tuple(p["port"] for p in s.get("ports") or [])):
                {e["addresses"][0] for e in s.get("endpoints") or []} for s in slices(c, ns, "multi")}  # fmt: skip

    want = {("IPv4", (8080,)): {"10.2.0.1", "10.2.0.3"}, ("IPv4", (9090,)): {"10.2.0.2"},
            ("IPv6", (8080,)): {"fd00::1"}}  # fmt: skip
    wait_for(lambda: groups() == want, what="three slices")
    assert len(slices(c, ns, "multi")) == 3

    c.patch(ep_path(ns, "multi"), {"subsets": [subset("10.2.0.1")]})
    wait_for(lambda: groups() == {("IPv4", (8080,)): {"10.2.0.1"}}, what="the other slices deleted")
    assert len(slices(c, ns, "multi")) == 1


def test_a_service_that_gains_a_selector_is_handed_to_the_endpointslice_controller(c: Cluster, ns: str) -> None:
    service(c, ns, "web")
    endpoints(c, ns, "web", [subset("10.5.0.1")])
    wait_for(lambda: addresses(c, ns, "web") == {"10.5.0.1": True}, what="web mirrored")
    pod = c.pod("p", namespace=ns, labels={"app": "web"}, node="n1", ports=[{"name": "http", "containerPort": 8080}])
    c.set_pod_status(pod, ip="10.5.0.9", ready=True)

    def pod_slices() -> set[str]:
        found = slices(c, ns, "web", ENDPOINTSLICE_CONTROLLER)
        return {e["addresses"][0] for s in found for e in s.get("endpoints") or []}

    c.patch(f"/api/v1/namespaces/{ns}/services/web", {"spec": {"selector": {"app": "web"}}})
    wait_for(lambda: not slices(c, ns, "web"), what="mirrored slices of web deleted")
    wait_for(lambda: pod_slices() == {"10.5.0.9"}, what="the endpointslice controller's slice")

    c.patch(f"/api/v1/namespaces/{ns}/services/web", {"spec": {"selector": None}})
    wait_for(lambda: addresses(c, ns, "web") == {"10.5.0.1": True}, what="mirrored again without a selector")
    wait_for(lambda: not slices(c, ns, "web", ENDPOINTSLICE_CONTROLLER), what="the pod slices gone")


def test_skip_mirror_and_leader_election_endpoints_are_not_mirrored(c: Cluster, ns: str) -> None:
    for name in ("db", "skipped", "lock"):
        service(c, ns, name)
    endpoints(c, ns, "db", [subset("10.6.0.1")])
    endpoints(c, ns, "skipped", [subset("10.6.0.2")], labels={"endpointslice.kubernetes.io/skip-mirror": "true"})
    endpoints(c, ns, "lock", [subset("10.6.0.3")],
              annotations={"control-plane.alpha.kubernetes.io/leader": '{"holderIdentity":"x"}'})  # fmt: skip
    wait_for(lambda: addresses(c, ns, "db") == {"10.6.0.1": True}, what="db mirrored")
    barrier(c, ns)
    assert not slices(c, ns, "skipped") and not slices(c, ns, "lock")

    c.patch(ep_path(ns, "db"), {"metadata": {"labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}}})
    wait_for(lambda: not slices(c, ns, "db"), what="slices of a skip-mirror Endpoints deleted")
    c.patch(ep_path(ns, "db"), {"metadata": {"labels": {"endpointslice.kubernetes.io/skip-mirror": "false"}}})
    wait_for(lambda: addresses(c, ns, "db") == {"10.6.0.1": True}, what="mirrored again")


def test_slices_go_with_their_endpoints_and_with_their_service(c: Cluster, ns: str) -> None:
    for name, ip in (("a", "10.7.0.1"), ("b", "10.7.0.2")):
        service(c, ns, name)
        endpoints(c, ns, name, [subset(ip)])
    wait_for(lambda: addresses(c, ns, "a") and addresses(c, ns, "b"), what="a and b mirrored")

    c.delete(ep_path(ns, "a"))
    wait_for(lambda: not slices(c, ns, "a"), what="slices of deleted Endpoints a gone")

    c.delete(f"/api/v1/namespaces/{ns}/services/b")
    wait_for(lambda: not slices(c, ns, "b"), what="slices of b gone with its Service")
    assert c.get(ep_path(ns, "b")) is not None  # the Endpoints stay; only the Service went
    service(c, ns, "b")
    wait_for(lambda: addresses(c, ns, "b") == {"10.7.0.2": True}, what="b mirrored again with a Service")


def test_addresses_that_are_no_ip_are_skipped_with_a_warning(c: Cluster, ns: str) -> None:
    service(c, ns, "ext")
    endpoints(c, ns, "ext", [subset("10.3.0.1", "db.example.com", "10.3.0.300")])
    wait_for(lambda: addresses(c, ns, "ext") == {"10.3.0.1": True}, what="the one IP mirrored")
    (event,) = wait_for(lambda: c.events(ns, "InvalidIPAddress"), what="InvalidIPAddress event")
    assert event["type"] == "Warning" and "Skipped 2 invalid IP addresses" in event["message"]
    assert event["involvedObject"]["kind"] == "Endpoints" and event["involvedObject"]["name"] == "ext"


def test_a_mirrored_slice_deleted_by_hand_is_recreated(c: Cluster, ns: str) -> None:
    service(c, ns, "db")
    endpoints(c, ns, "db", [subset("10.8.0.1")])
    wait_for(lambda: addresses(c, ns, "db") == {"10.8.0.1": True}, what="db mirrored")
    (old,) = slices(c, ns, "db")
    c.delete(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices/{old['metadata']['name']}")
    wait_for(lambda: [s["metadata"]["name"] for s in slices(c, ns, "db")] not in ([], [old["metadata"]["name"]]),
             what="a new slice")  # fmt: skip
    assert addresses(c, ns, "db") == {"10.8.0.1": True}


def test_services_with_a_selector_are_never_mirrored(c: Cluster, ns: str) -> None:
    service(c, ns, "web", selector={"app": "web"})
    endpoints(c, ns, "web", [subset("10.9.0.1")])  # as the endpoints controller would write them
    wait_for(lambda: slices(c, ns, "web", ENDPOINTSLICE_CONTROLLER), what="the endpointslice controller's slice")
    c.patch(ep_path(ns, "web"), {"subsets": [subset("10.9.0.1", "10.9.0.2")]})
    barrier(c, ns)
    assert not slices(c, ns, "web")
