"""service-lb-controller: LoadBalancer Services get an address from `--load-balancer-ip-pool`.

Everything is observed through the API (and the real `kubectl`), on both storage backends: the
status written through `services/status`, the `service.kubernetes.io/load-balancer-cleanup`
finalizer, and the events Kubernetes' service controller writes (source `service-controller`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.compat.conftest import Kubectl, columns
from tests.controller_manager_infra.helpers import Cluster
from tests.controller_manager_service.conftest import FINALIZER
from tests.support.component import wait_for
from tests.support.kubectl import kubectl_binary

Obj = dict[str, Any]
Start = Callable[..., Cluster]


def namespace(c: Cluster) -> str:
    name = f"lb-{uuid.uuid4().hex[:8]}"
    c.namespace(name)
    return name


def create(c: Cluster, ns: str, name: str, type_: str = "LoadBalancer", **spec: Any) -> Obj:
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"type": type_, "selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}], **spec},
    }
    return c.post(f"/api/v1/namespaces/{ns}/services", body)


def get(c: Cluster, ns: str, name: str) -> Obj | None:
    return c.get(f"/api/v1/namespaces/{ns}/services/{name}")


def ingress(c: Cluster, ns: str, name: str) -> list[Obj]:
    svc = get(c, ns, name) or {}
    return ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []


def wait_address(c: Cluster, ns: str, name: str, timeout: float = 20.0) -> str:
    """Wait until the Service shows one address, and return it."""
    found = wait_for(lambda: ingress(c, ns, name), timeout=timeout, what=f"an address for {ns}/{name}")
    assert len(found) == 1 and found[0]["ipMode"] == "VIP", found
    return found[0]["ip"]


def finalizers(c: Cluster, ns: str, name: str) -> list[str]:
    return (get(c, ns, name) or {"metadata": {}})["metadata"].get("finalizers") or []


def events(c: Cluster, ns: str, name: str, reason: str) -> list[Obj]:
    return [e for e in c.events(ns, reason) if e["involvedObject"]["name"] == name]


def wait_event(c: Cluster, ns: str, name: str, reason: str) -> Obj:
    return wait_for(lambda: events(c, ns, name, reason), what=f"event {reason} on {ns}/{name}")[0]


def delete(c: Cluster, ns: str, name: str) -> None:
    c.delete(f"/api/v1/namespaces/{ns}/services/{name}")


def test_a_load_balancer_service_gets_an_address_from_the_default_pool_with_kubernetes_events(lb: Start):
    c = lb()  # no flag: the default pool 127.1.0.0/24
    ns = namespace(c)
    create(c, ns, "plain", "ClusterIP")
    create(c, ns, "web")

    assert wait_address(c, ns, "web") == "127.1.0.1"  # .0 is the network address
    assert FINALIZER in finalizers(c, ns, "web")
    for reason, message in (("EnsuringLoadBalancer", "Ensuring load balancer"),
                            ("EnsuredLoadBalancer", "Ensured load balancer")):  # fmt: skip
        event = wait_event(c, ns, "web", reason)
        assert (event["type"], event["message"], event["source"]["component"]) == (
            "Normal", message, "service-controller"
        )  # fmt: skip
    assert ingress(c, ns, "plain") == [] and finalizers(c, ns, "plain") == []

    delete(c, ns, "web")  # the finalizer holds it until the address is released
    wait_for(lambda: get(c, ns, "web") is None, what="the Service gone once its balancer is")
    for reason, message in (("DeletingLoadBalancer", "Deleting load balancer"),
                            ("DeletedLoadBalancer", "Deleted load balancer")):  # fmt: skip
        assert wait_event(c, ns, "web", reason)["message"] == message
    # Our own writes reaching the cache one by one did not make it start over.
    assert events(c, ns, "web", "EnsuringLoadBalancer")[0]["count"] == 1


def test_two_services_get_different_addresses(lb: Start):
    c = lb("127.1.0.8/29")  # hands out 127.1.0.9 … 127.1.0.14
    ns = namespace(c)
    create(c, ns, "a")
    a = wait_address(c, ns, "a")
    create(c, ns, "b")
    b = wait_address(c, ns, "b")
    assert (a, b) == ("127.1.0.9", "127.1.0.10")


def test_load_balancer_ip_is_honoured_when_in_the_pool_and_free(lb: Start):
    c = lb("127.1.0.8/29")
    ns = namespace(c)
    create(c, ns, "chosen", loadBalancerIP="127.1.0.13")
    assert wait_address(c, ns, "chosen") == "127.1.0.13"
    create(c, ns, "taken", loadBalancerIP="127.1.0.13")  # someone else's: treated as unset
    assert wait_address(c, ns, "taken") == "127.1.0.9"
    create(c, ns, "outside", loadBalancerIP="10.0.0.1")  # not in the pool: treated as unset
    assert wait_address(c, ns, "outside") == "127.1.0.10"
    create(c, ns, "broadcast", loadBalancerIP="127.1.0.15")  # never handed out
    assert wait_address(c, ns, "broadcast") == "127.1.0.11"

    c.patch(f"/api/v1/namespaces/{ns}/services/taken", {"spec": {"loadBalancerIP": "127.1.0.12"}})
    wait_for(lambda: ingress(c, ns, "taken") == [{"ip": "127.1.0.12", "ipMode": "VIP"}], what="taken moved to .12")
    assert wait_event(c, ns, "taken", "LoadbalancerIP")["message"] == "127.1.0.13 -> 127.1.0.12"
    create(c, ns, "next")  # .9 was given back by the move
    assert wait_address(c, ns, "next") == "127.1.0.9"


def test_an_exhausted_pool_makes_the_next_service_wait_until_an_address_is_released(lb: Start):
    c = lb("127.1.0.9/32")  # exactly one address: 127.1.0.9
    ns = namespace(c)
    create(c, ns, "first")
    assert wait_address(c, ns, "first") == "127.1.0.9"
    create(c, ns, "second")

    failed = wait_event(c, ns, "second", "SyncLoadBalancerFailed")
    assert failed["type"] == "Warning"
    assert failed["message"].startswith("Error syncing load balancer: failed to ensure load balancer: "), failed
    assert "127.1.0.9/32" in failed["message"]
    assert ingress(c, ns, "second") == []
    assert FINALIZER in finalizers(c, ns, "second")  # added before trying, as Kubernetes does

    delete(c, ns, "first")
    # Woken by the release, not by the back-off (5 s, then 10 s, …).
    assert wait_address(c, ns, "second", timeout=4) == "127.1.0.9"
    assert get(c, ns, "first") is None


def test_changing_the_type_to_cluster_ip_releases_the_address_and_clears_status_and_finalizer(lb: Start):
    c = lb("127.1.0.9/32")
    ns = namespace(c)
    create(c, ns, "web")
    assert wait_address(c, ns, "web") == "127.1.0.9"
    svc = get(c, ns, "web")
    assert svc is not None
    svc["spec"]["type"] = "ClusterIP"
    for port in svc["spec"]["ports"]:
        port.pop("nodePort", None)
    for field in ("externalTrafficPolicy", "allocateLoadBalancerNodePorts"):
        svc["spec"].pop(field, None)
    c.put(f"/api/v1/namespaces/{ns}/services/web", svc)

    def released() -> bool:
        now = get(c, ns, "web") or {}
        return (now.get("status") or {}).get("loadBalancer") == {} and not now["metadata"].get("finalizers")

    wait_for(released, what="status.loadBalancer cleared and the finalizer gone")
    assert wait_event(c, ns, "web", "Type")["message"] == "LoadBalancer -> ClusterIP"
    wait_event(c, ns, "web", "DeletingLoadBalancer")
    wait_event(c, ns, "web", "DeletedLoadBalancer")
    create(c, ns, "next")  # the one address is free again
    assert wait_address(c, ns, "next") == "127.1.0.9"


def test_a_restarted_controller_manager_keeps_existing_assignments(lb: Start):
    c = lb("127.1.0.8/29")
    ns = namespace(c)
    for name in ("a", "b", "c"):
        create(c, ns, name)
        wait_address(c, ns, name)
    delete(c, ns, "b")
    wait_for(lambda: get(c, ns, "b") is None, what="b gone")
    before = {n: wait_address(c, ns, n) for n in ("a", "c")}
    assert before == {"a": "127.1.0.9", "c": "127.1.0.11"}
    ensured = {n: events(c, ns, n, "EnsuredLoadBalancer")[0]["count"] for n in ("a", "c")}

    c.cm.kill()  # a crash: nothing is handed back on the way down
    create(c, ns, "d")  # arrives while no controller runs
    c = lb("127.1.0.8/29")

    # Only .10 is free: .9 and .11 are known from the statuses, so d cannot get them.
    assert wait_address(c, ns, "d") == "127.1.0.10"
    assert {n: wait_address(c, ns, n) for n in ("a", "c")} == before
    assert {n: events(c, ns, n, "EnsuredLoadBalancer")[0]["count"] for n in ("a", "c")} == ensured


def test_a_service_with_a_load_balancer_class_is_left_alone(lb: Start):
    c = lb("127.1.0.9/32")
    ns = namespace(c)
    create(c, ns, "other", loadBalancerClass="example.com/metallb")
    create(c, ns, "ours")
    # The one address goes to ours: the other was never counted in.
    assert wait_address(c, ns, "ours") == "127.1.0.9"
    other = get(c, ns, "other")
    assert other is not None
    assert other["status"] == {"loadBalancer": {}}
    assert FINALIZER not in (other["metadata"].get("finalizers") or [])
    assert [e for e in c.items(f"/api/v1/namespaces/{ns}/events") if e["involvedObject"]["name"] == "other"] == []


def test_kubectl_get_svc_shows_the_address_under_external_ip(lb: Start, tmp_path: Path):
    c = lb("127.1.0.8/30")
    kubectl = Kubectl(kubectl_binary(), c.api.url, tmp_path)
    ns = namespace(c)
    create(c, ns, "web")
    create(c, ns, "other", loadBalancerClass="example.com/metallb")
    wait_address(c, ns, "web")

    out = kubectl.ok("get", "svc", "-n", ns).lines()
    assert columns(out[0])[:5] == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)"], out
    rows = {columns(line)[0]: columns(line) for line in out[1:]}
    assert rows["web"][1] == "LoadBalancer" and rows["web"][3] == "127.1.0.9", out
    assert rows["other"][3] == "<pending>", out


def test_the_balancer_is_named_with_the_cluster_name_in_front_as_seed_000_says(lb: Start):
    """--cluster-name is the instance prefix of the balancers' names (`<cluster>-a<uid>`), in the log."""
    c = lb("127.1.0.8/30", "--cluster-name=seed", "--v=2")
    ns = namespace(c)
    uid = create(c, ns, "web")["metadata"]["uid"]
    ip = wait_address(c, ns, "web")
    name = "seed-a" + uid.replace("-", "")[:31]  # "a" + the uid without dashes, 32 characters
    wait_for(lambda: f"{ns}/web has load balancer {name} at {ip}" in c.cm.log_path.read_text(), what="the log line")
    delete(c, ns, "web")
    wait_for(lambda: f"released load balancer {name} at {ip} of {ns}/web" in c.cm.log_path.read_text(),
             what="the release line")  # fmt: skip
