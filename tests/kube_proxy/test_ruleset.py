"""The pure half of kube-proxy: which endpoints a Service port uses, and the nft script that
turns one table into the next. (These run without root; the conftest skips only its cluster.)"""

from __future__ import annotations

from typing import Any

from kube_proxy.ruleset import ProxyConfig, build, endpoint_chain, firewall_chain, service_chain, transaction
from kube_proxy.servicemodel import service_ports

CFG = ProxyConfig(table="t", cluster_cidr="10.244.0.0/14")


def svc(name: str = "web", **spec: Any) -> dict[str, Any]:
    base = {"clusterIP": "10.96.0.20", "type": "ClusterIP", "ports": [{"name": "http", "port": 80, "nodePort": 30080}]}
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {**base, **spec}}


def slice_of(*eps: tuple[str, dict[str, bool], str], port: int = 8080) -> dict[str, Any]:
    endpoints = [{"addresses": [ip], "conditions": cond, "nodeName": node} for ip, cond, node in eps]
    return {"addressType": "IPv4", "ports": [{"name": "http", "port": port, "protocol": "TCP"}], "endpoints": endpoints}


READY = {"ready": True, "serving": True, "terminating": False}
DRAINING = {"ready": False, "serving": True, "terminating": True}
UNREADY = {"ready": False, "serving": False, "terminating": False}


def test_ready_endpoints_are_used_and_terminating_ones_only_when_nothing_is_ready() -> None:
    sp = service_ports(svc(), [slice_of(("10.244.0.5", READY, "a"), ("10.244.0.6", DRAINING, "a"),
                                        ("10.244.0.7", UNREADY, "b"))])[0]  # fmt: skip
    assert [e.ip for e in sp.usable(sp.endpoints)] == ["10.244.0.5"]
    sp = service_ports(svc(), [slice_of(("10.244.0.6", DRAINING, "a"), ("10.244.0.7", UNREADY, "b"))])[0]
    assert [e.ip for e in sp.usable(sp.endpoints)] == ["10.244.0.6"]
    assert sp.endpoints[0].port == 8080  # the target port the slice resolved, not the Service port


def test_services_kube_proxy_does_not_handle() -> None:
    assert service_ports(svc(clusterIP="None"), []) == []
    assert service_ports(svc(type="ExternalName", externalName="example.com", clusterIP=""), []) == []
    labelled = svc()
    labelled["metadata"]["labels"] = {"service.kubernetes.io/service-proxy-name": "other"}
    assert service_ports(labelled, []) == []


def test_cluster_ip_rules_masquerade_outside_clients_and_pick_at_random() -> None:
    sp = service_ports(svc(), [slice_of(("10.244.0.5", READY, "a"), ("10.244.1.5", READY, "b"))])
    rs = build(sp, CFG, lambda node: True)
    chain = rs.chains[service_chain(sp[0])]
    assert chain[0] == "ip daddr 10.96.0.20 tcp dport 80 ip saddr != 10.244.0.0/14 jump mark-for-masquerade"
    assert chain[1].startswith("numgen random mod 2 vmap { 0 : goto endpoint-")
    assert rs.maps["service-ips"]["10.96.0.20 . tcp . 80"] == f"goto {service_chain(sp[0])}"
    ep = rs.chains[endpoint_chain(sp[0], sp[0].endpoints[0])]
    assert ep == ["ip saddr 10.244.0.5 jump mark-for-masquerade", "meta l4proto tcp dnat to 10.244.0.5:8080"]
    assert rs.maps["service-nodeports"] == {}  # a ClusterIP Service has no NodePort (its nodePort is ignored)


def test_no_endpoints_reject_and_local_policy_without_local_endpoints_drops() -> None:
    rs = build(service_ports(svc(type="NodePort"), []), CFG, lambda node: True)
    assert rs.maps["no-endpoint-services"]["10.96.0.20 . tcp . 80"] == "goto reject-chain"
    assert rs.maps["no-endpoint-nodeports"]["tcp . 30080"] == "goto reject-chain"
    local = service_ports(svc(type="NodePort", externalTrafficPolicy="Local"), [slice_of(("10.244.1.5", READY, "b"))])
    rs = build(local, CFG, lambda node: node == "a")
    assert rs.maps["no-endpoint-nodeports"]["tcp . 30080"] == "drop"
    assert "10.96.0.20 . tcp . 80" in rs.maps["service-ips"]  # inside the cluster every endpoint serves


def test_affinity_uses_a_timed_set_per_endpoint() -> None:
    spec = {"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}}}
    sp = service_ports(svc(**spec), [slice_of(("10.244.0.5", READY, "a"))])
    rs = build(sp, CFG, lambda node: True)
    assert list(rs.affinity_sets.values()) == [60]
    name = next(iter(rs.affinity_sets))
    assert rs.chains[service_chain(sp[0])][1] == f"ip saddr @{name} goto {endpoint_chain(sp[0], sp[0].endpoints[0])}"
    assert f"update @{name} {{ ip saddr }}" in rs.chains[endpoint_chain(sp[0], sp[0].endpoints[0])]


def test_a_transaction_rewrites_only_what_changed_and_deletes_what_went() -> None:
    two = service_ports(svc(), [slice_of(("10.244.0.5", READY, "a"), ("10.244.0.6", READY, "a"))])
    one = service_ports(svc(), [slice_of(("10.244.0.5", READY, "a"))])
    before, after = build(two, CFG, lambda n: True), build(one, CFG, lambda n: True)
    script = transaction(after, before, CFG)
    gone = endpoint_chain(two[0], two[0].endpoints[1])
    assert f"flush chain ip t {gone}" in script and script.rstrip().endswith(f"delete chain ip t {gone}")
    assert f"flush chain ip t {service_chain(one[0])}" in script
    kept = endpoint_chain(one[0], one[0].endpoints[0])
    assert kept not in script.replace(f"goto {kept}", "")  # untouched: not rewritten
    assert "delete table" not in script and "add table ip t" in script
    assert transaction(after, after, CFG).count("add rule") == 0  # nothing changed: no rule written
    full = transaction(after, None, CFG)
    assert full.startswith("add table ip t\ndelete table ip t\n")  # from scratch: replace whole


def test_load_balancer_source_ranges_drop_other_clients() -> None:
    service = svc(type="LoadBalancer", loadBalancerSourceRanges=["192.0.2.0/24", "127.0.0.0/8"])
    service["status"] = {"loadBalancer": {"ingress": [{"ip": "127.1.0.1", "ipMode": "VIP"}]}}
    sp = service_ports(service, [slice_of(("10.244.0.5", READY, "a"))])
    rs = build(sp, CFG, lambda node: True)
    assert rs.maps["firewall-ips"]["127.1.0.1 . tcp . 80"] == f"goto {firewall_chain(sp[0])}"
    assert rs.chains[firewall_chain(sp[0])] == ["ip saddr != { 192.0.2.0/24, 127.0.0.0/8 } drop"]
    assert rs.maps["service-ips"]["127.1.0.1 . tcp . 80"].startswith("goto external-")
    open_to_all = service_ports(svc(type="LoadBalancer", loadBalancerSourceRanges=[]), [])
    assert build(open_to_all, CFG, lambda node: True).maps["firewall-ips"] == {}
