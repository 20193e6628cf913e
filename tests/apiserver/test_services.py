"""Services get a ClusterIP from the range and NodePorts from 30000-32767, released on delete."""

from __future__ import annotations

import ipaddress

import httpx


def _svc(name: str, *, node_port: int | None = None, type_: str = "ClusterIP") -> dict:
    port: dict = {"port": 8080}
    if node_port:
        port["nodePort"] = node_port
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"type": type_, "selector": {"app": name}, "ports": [port]},
    }


def test_cluster_ip_allocated_in_range_with_defaults(api: httpx.Client, ns: str) -> None:
    s = api.post(f"/api/v1/namespaces/{ns}/services", json=_svc("web")).json()
    assert ipaddress.ip_address(s["spec"]["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
    assert s["spec"]["clusterIPs"] == [s["spec"]["clusterIP"]]
    p = s["spec"]["ports"][0]
    assert p["protocol"] == "TCP" and p["targetPort"] == 8080 and "nodePort" not in p
    assert s["spec"]["sessionAffinity"] == "None"


def test_requested_node_port_is_honoured_taken_is_invalid_and_released_on_delete(api: httpx.Client, ns: str) -> None:
    s = api.post(f"/api/v1/namespaces/{ns}/services", json=_svc("a", node_port=30001, type_="NodePort"))
    assert s.status_code == 201, s.text
    assert s.json()["spec"]["ports"][0]["nodePort"] == 30001
    taken = api.post(f"/api/v1/namespaces/{ns}/services", json=_svc("b", node_port=30001, type_="NodePort"))
    assert taken.status_code == 422
    assert taken.json()["details"]["causes"][0]["field"] == "spec.ports[0].nodePort"
    assert "provided port is already allocated" in taken.json()["message"]
    assert api.get(f"/api/v1/namespaces/{ns}/services/b").status_code == 404
    assert api.delete(f"/api/v1/namespaces/{ns}/services/a").status_code == 200
    again = api.post(f"/api/v1/namespaces/{ns}/services", json=_svc("b", node_port=30001, type_="NodePort"))
    assert again.status_code == 201, again.text


def test_random_node_port_and_out_of_range(api: httpx.Client, ns: str) -> None:
    s = api.post(f"/api/v1/namespaces/{ns}/services", json=_svc("r", type_="NodePort")).json()
    assert 30000 <= s["spec"]["ports"][0]["nodePort"] <= 32767
    bad = api.post(f"/api/v1/namespaces/{ns}/services", json=_svc("o", node_port=80, type_="NodePort"))
    assert bad.status_code == 422


def test_requested_cluster_ip_taken_is_invalid(api: httpx.Client, ns: str) -> None:
    body = _svc("k")
    body["spec"]["clusterIP"] = "10.96.0.1"  # the kubernetes service has it
    r = api.post(f"/api/v1/namespaces/{ns}/services", json=body)
    assert r.status_code == 422 and "already allocated" in r.json()["message"]
