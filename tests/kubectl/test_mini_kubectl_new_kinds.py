"""mini-kubectl with the course kinds: `get` and `describe` print what kubectl 1.32 prints, and
`describe svc` reads the Service's EndpointSlices as kubectl does."""

from __future__ import annotations

import httpx

from tests.compat.test_new_kinds_kubectl import MANIFEST
from tests.kubectl.conftest import Pair, cells, normalise


def test_get_and_describe_match_kubectl(pair: Pair, ns: str) -> None:
    r = pair.real("create", "-f", "-", stdin=MANIFEST.format(ns=ns))
    assert r.rc == 0, r.err
    commands = [
        ("get", "pc,pdb,ing,ingressclass,netpol,pv,pvc,sc,controllerrevisions,endpointslices", "-n", ns),
        ("describe", "pvc", "data", "-n", ns),
        ("describe", "pv", f"{ns}-pv"),
        ("describe", "sc", f"{ns}-sc"),
        ("describe", "pdb", "web", "-n", ns),
        ("describe", "pc", f"{ns}-high"),
        ("describe", "endpointslice", "web-x", "-n", ns),
        ("describe", "ingressclass", f"{ns}-nginx"),
    ]
    for command, (real, mini) in zip(commands, pair.many(commands), strict=True):
        assert real.rc == 0 and mini.rc == 0, (command, real.err, mini.err)
        if command[0] == "get":
            assert cells(mini.out) == cells(real.out)
        else:
            assert normalise(mini.out) == normalise(real.out), command
    for kind, name in (("pv", f"{ns}-pv"), ("sc", f"{ns}-sc"), ("pc", f"{ns}-high"), ("ingressclass", f"{ns}-nginx")):
        pair.real("delete", kind, name, "--wait=false")  # no controller-manager here lifts pv-protection


def test_describe_service_shows_endpoints_from_slices(pair: Pair, api: httpx.Client, ns: str) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}}
    assert api.post(f"/api/v1/namespaces/{ns}/services", json=svc).status_code == 201
    es = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
          "metadata": {"name": "web-1", "labels": {"kubernetes.io/service-name": "web"}},
          "addressType": "IPv4", "ports": [{"name": "http", "port": 8080}],
          "endpoints": [{"addresses": [f"10.2.0.{i}"], "conditions": {"ready": i != 2}} for i in range(1, 6)]}
    assert api.post(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices", json=es).status_code == 201
    real, mini = pair.both("describe", "svc", "web", "-n", ns)
    assert real.rc == 0 and mini.rc == 0, (real.err, mini.err)
    assert "Endpoints: 10.2.0.1:8080,10.2.0.3:8080,10.2.0.4:8080 + 1 more..." in normalise(real.out)
    assert normalise(mini.out) == normalise(real.out)
