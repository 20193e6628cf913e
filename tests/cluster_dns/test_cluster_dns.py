"""mini-cluster-dns as a real process against a real API server, asked with dnspython.

Services and EndpointSlices are created through the API (the slices by hand, as a user may for a
Service without a selector: the DNS reads slices, whoever wrote them); the answers must follow
Kubernetes' DNS schema and follow changes as the informers see them.
"""

from __future__ import annotations

from collections.abc import Iterator

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import httpx
import pytest
from dnslib import QTYPE, RR, A
from dnslib.server import BaseResolver, DNSServer

from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for
from tests.support.fixtures import new_namespace

ZONE = "cluster.local"


class _Upstream(BaseResolver):  # type: ignore[misc]
    """Stands for the machine's resolver: every name is 192.0.2.1 (TEST-NET-1)."""

    def resolve(self, request, handler):  # type: ignore[no-untyped-def]
        reply = request.reply()
        reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A("192.0.2.1"), ttl=60))
        return reply


@pytest.fixture(scope="module")
def dns_port(apiserver: APIServerProcess) -> Iterator[int]:
    upstream_port = free_port()
    upstream = DNSServer(_Upstream(), port=upstream_port, address="127.0.0.1")
    upstream.start_thread()
    port, health = free_port(), free_port()
    proc = ComponentProcess("cluster_dns", [
        "--master", apiserver.url, "--port", str(port), "--health-port", str(health),
        "--upstream", f"127.0.0.1:{upstream_port}", "--ttl", "7",
    ], health_port=health).start()
    try:
        wait_for(lambda: httpx.get(f"http://127.0.0.1:{health}/readyz").status_code == 200, what="DNS caches synced")
        yield port
    finally:
        proc.stop()
        upstream.stop()


@pytest.fixture
def ns(api: httpx.Client) -> str:
    return new_namespace(api, "dns")


def ask(port: int, name: str, rtype: str = "A", tcp: bool = False) -> dns.message.Message:
    query = dns.message.make_query(name, rtype)
    send = dns.query.tcp if tcp else dns.query.udp
    return send(query, "127.0.0.1", port=port, timeout=3)


def values(reply: dns.message.Message) -> list[str]:
    return sorted(item.to_text() for rrset in reply.answer for item in rrset)


def service(name: str, spec: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def endpoint_slice(name: str, service_name: str, endpoints: list[tuple[str, str | None, bool]]) -> dict:
    return {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
        "metadata": {"name": name, "labels": {"kubernetes.io/service-name": service_name}},
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        "endpoints": [{"addresses": [ip], "conditions": {"ready": ready}, **({"hostname": host} if host else {})}
                      for ip, host, ready in endpoints],
    }


def test_services_resolve_to_their_cluster_ip_and_follow_changes(api: httpx.Client, dns_port: int, ns: str) -> None:
    r = api.post(f"/api/v1/namespaces/{ns}/services", json=service("web", {
        "selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}))
    assert r.status_code == 201, r.text
    cluster_ip = r.json()["spec"]["clusterIP"]
    name = f"web.{ns}.svc.{ZONE}"
    reply = wait_for(lambda: (m := ask(dns_port, name)).answer and m, what="the Service's A record")
    assert values(reply) == [cluster_ip] and reply.answer[0].ttl == 7
    assert reply.flags & dns.flags.AA
    assert values(ask(dns_port, name, tcp=True)) == [cluster_ip]
    no_ipv6 = ask(dns_port, name, "AAAA")
    assert (no_ipv6.rcode(), no_ipv6.answer) == (dns.rcode.NOERROR, [])  # exists, no such record
    srv = ask(dns_port, f"_http._tcp.{name}", "SRV")
    assert values(srv) == [f"0 100 80 {name}."]
    assert ask(dns_port, f"nope.{ns}.svc.{ZONE}").rcode() == dns.rcode.NXDOMAIN
    assert ask(dns_port, f"_nope._tcp.{name}", "SRV").rcode() == dns.rcode.NXDOMAIN

    api.delete(f"/api/v1/namespaces/{ns}/services/web")
    wait_for(lambda: ask(dns_port, name).rcode() == dns.rcode.NXDOMAIN, what="NXDOMAIN after the delete")


def test_headless_services_answer_ready_endpoints_hostnames_and_srv(
    api: httpx.Client, dns_port: int, ns: str
) -> None:
    api.post(f"/api/v1/namespaces/{ns}/services", json=service("nginx", {
        "clusterIP": "None", "ports": [{"name": "http", "port": 8080}]}))
    r = api.post(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices", json=endpoint_slice(
        "nginx-1", "nginx", [("10.244.0.5", "web-0", True), ("10.244.0.6", "web-1", True),
                             ("10.244.0.7", "web-2", False)]))
    assert r.status_code == 201, r.text
    base = f"nginx.{ns}.svc.{ZONE}"
    reply = wait_for(lambda: (m := ask(dns_port, base)).answer and m, what="headless A records")
    assert values(reply) == ["10.244.0.5", "10.244.0.6"]  # not the unready one
    assert values(ask(dns_port, f"web-0.{base}")) == ["10.244.0.5"]
    assert ask(dns_port, f"web-2.{base}").rcode() == dns.rcode.NXDOMAIN
    assert values(ask(dns_port, f"_http._tcp.{base}", "SRV")) == [
        f"0 50 8080 web-0.{base}.", f"0 50 8080 web-1.{base}."]

    many = [(f"10.244.1.{i}", None, True) for i in range(1, 60)]
    api.post(f"/api/v1/namespaces/{ns}/services", json=service("big", {"clusterIP": "None", "ports": [{"port": 1}]}))
    api.post(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices", json=endpoint_slice("big-1", "big", many))
    big = f"big.{ns}.svc.{ZONE}"
    wait_for(lambda: ask(dns_port, big, tcp=True).answer, what="the big headless Service")
    udp = ask(dns_port, big)
    assert udp.flags & dns.flags.TC and not udp.answer  # too big for 512 bytes: ask again over TCP
    assert len(values(ask(dns_port, big, tcp=True))) == 59


def test_external_names_pod_names_and_names_outside_the_zone(api: httpx.Client, dns_port: int, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/services", json=service("db", {
        "type": "ExternalName", "externalName": "db.example.org"}))
    reply = wait_for(lambda: (m := ask(dns_port, f"db.{ns}.svc.{ZONE}")).answer and m, what="the CNAME")
    assert reply.answer[0].rdtype == dns.rdatatype.CNAME and values(reply) == ["db.example.org."]
    assert values(ask(dns_port, f"10-244-1-5.{ns}.pod.{ZONE}")) == ["10.244.1.5"]
    assert ask(dns_port, f"10-244-1-999.{ns}.pod.{ZONE}").rcode() == dns.rcode.NXDOMAIN
    outside = ask(dns_port, "example.org")  # not ours: relayed to --upstream
    assert values(outside) == ["192.0.2.1"]
