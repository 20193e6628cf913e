"""The `kubernetes` Service leads in-cluster clients to the API server as it runs now: to the HTTPS
port once there is one (clients inside pods speak TLS to 10.96.0.1:443), and a restart that adds
HTTPS rewrites what an earlier start created (the Service's targetPort, Endpoints, EndpointSlice)."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support.apiserver import APIServerProcess
from tests.support.component import free_port
from tests.support.pki import CA


def _targets(api: httpx.Client) -> tuple[object, object, object, object]:
    svc = api.get("/api/v1/namespaces/default/services/kubernetes").json()
    ep = api.get("/api/v1/namespaces/default/endpoints/kubernetes").json()
    es = api.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes").json()
    return (svc["spec"]["ports"][0]["targetPort"], ep["subsets"][0]["ports"][0]["port"], es["ports"][0]["port"],
            (ep["subsets"][0]["addresses"][0]["ip"], es["endpoints"][0]["addresses"][0]))  # fmt: skip


def test_the_kubernetes_service_follows_the_server_to_its_https_port(tmp_path: Path) -> None:
    server = APIServerProcess().start()
    try:
        with server.client() as api:
            assert _targets(api) == (server.port, server.port, server.port, ("127.0.0.1", "127.0.0.1"))
        server.stop()
        ca = CA(tmp_path)
        serving = ca.issue("apiserver", cn="kube-apiserver", server=True)
        secure_port = free_port()
        server.args = ["--secure-port", str(secure_port), "--tls-cert-file", str(serving.cert),
                       "--tls-private-key-file", str(serving.key)]  # fmt: skip
        server.start()
        with server.client() as api:
            assert _targets(api) == (secure_port, secure_port, secure_port, ("127.0.0.1", "127.0.0.1"))
            # what kubectl's discovery is told about where the server is
            advertised = api.get("/api").json()["serverAddressByClientCIDRs"][0]["serverAddress"]
            assert advertised == f"127.0.0.1:{secure_port}"
    finally:
        server.cleanup()
