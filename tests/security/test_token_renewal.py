"""The controllers' ServiceAccount tokens are renewed before they expire, and the controllers keep
working on the renewed ones (controller_manager/service_account_clients.py).

kube-controller-manager with `--use-service-account-credentials` asks for an hour's token per
controller and renews it at 80% of its life. An hour is too long for a test, so the API server caps
TokenRequest lifetimes (`--service-account-max-token-expiration 6s`): the answer says 6 s, the
manager renews at 4.8 s. The test waits for a renewal in the audit log, then for a token issued
after it to stop working (so the manager's first token is surely dead), and only then gives the
ReplicaSet controller work: its pods are created by its ServiceAccount, no manager request is
refused.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for
from tests.support.pki import CA

CAP_SECONDS = 6
ISSUER = "https://kubernetes.default.svc.cluster.local"
ACCOUNT = "system:serviceaccount:kube-system:replicaset-controller"


def _audit(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _token_requests(path: Path, account: str) -> list[dict[str, Any]]:
    return [e for e in _audit(path) if e["verb"] == "create"
            and (ref := e.get("objectRef") or {}).get("subresource") == "token" and ref.get("name") == account
            and e["responseStatus"]["code"] == 201]  # fmt: skip


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[APIServerProcess, str, ssl.SSLContext, Path]]:
    ca = CA(tmp_path)
    serving = ca.issue("apiserver", cn="kube-apiserver", server=True)
    manager_cert = ca.issue("controller-manager", cn="system:kube-controller-manager")
    key = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "sa.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))  # fmt: skip
    audit, port = tmp_path / "audit.log", free_port()
    server = APIServerProcess(args=[
        "--secure-port", str(port), "--tls-cert-file", str(serving.cert), "--tls-private-key-file", str(serving.key),
        "--client-ca-file", str(ca.pair.cert), "--authorization-mode", "RBAC",
        "--service-account-key-file", str(tmp_path / "sa.key"),
        "--service-account-signing-key-file", str(tmp_path / "sa.key"), "--service-account-issuer", ISSUER,
        "--service-account-max-token-expiration", f"{CAP_SECONDS}s", "--audit-log-path", str(audit),
    ]).start()  # fmt: skip
    url = f"https://127.0.0.1:{port}"
    (tmp_path / "cm.conf").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": url, "certificate-authority": str(ca.pair.cert)}}],
        "users": [{"name": "u", "user": {"client-certificate": str(manager_cert.cert),
                                         "client-key": str(manager_cert.key)}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    }))  # fmt: skip
    cm_port = free_port()
    manager = ComponentProcess("controller_manager", [
        "--kubeconfig", str(tmp_path / "cm.conf"), "--port", str(cm_port), "--controllers", "replicaset",
        "--use-service-account-credentials",
    ], health_port=cm_port)  # fmt: skip
    try:
        manager.start()
        yield server, url, ssl.create_default_context(cafile=str(ca.pair.cert)), audit
    finally:
        manager.stop()
        server.cleanup()


def test_controller_tokens_are_renewed_before_they_expire_and_keep_working(
    cluster: tuple[APIServerProcess, str, ssl.SSLContext, Path],
) -> None:
    server, url, tls, audit = cluster
    wait_for(lambda: len(_token_requests(audit, "replicaset-controller")) >= 2, timeout=30,
             what="the replicaset-controller's token renewed")  # fmt: skip
    first, second = _token_requests(audit, "replicaset-controller")[:2]
    assert first["user"]["username"] == second["user"]["username"] == "system:kube-controller-manager"

    with server.client() as plain:
        r = plain.post("/api/v1/namespaces/kube-system/serviceaccounts/replicaset-controller/token",
                       json={"spec": {"expirationSeconds": 3600}})  # fmt: skip
        assert r.status_code == 201, r.text
        assert r.json()["spec"]["expirationSeconds"] == CAP_SECONDS  # the answer says what was issued
        probe = r.json()["status"]["token"]
        with httpx.Client(base_url=url, verify=tls, timeout=10) as https:
            def probe_refused() -> bool:
                return https.get("/api", headers={"Authorization": f"Bearer {probe}"}).status_code == 401

            assert not probe_refused()
            # issued after the manager's first renewal: once it is dead, so is the manager's first token
            wait_for(probe_refused, timeout=CAP_SECONDS + 10, what="a capped token expired")

        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "after-expiry"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "after"}},
                       "template": {"metadata": {"labels": {"app": "after"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}  # fmt: skip
        assert plain.post("/apis/apps/v1/namespaces/default/replicasets", json=rs).status_code == 201
        wait_for(lambda: len(plain.get("/api/v1/namespaces/default/pods", params={"labelSelector": "app=after"})
                             .json()["items"]) == 2, timeout=30, what="the ReplicaSet's two pods")  # fmt: skip

    events = _audit(audit)
    creators = {e["user"]["username"] for e in events if e["verb"] == "create" and e["responseStatus"]["code"] == 201
                and (e.get("objectRef") or {}).get("resource") == "pods"}  # fmt: skip
    assert creators == {ACCOUNT}
    refused = [(e["user"].get("username"), e["requestURI"], e["responseStatus"]["code"]) for e in events
               if e.get("userAgent", "").startswith("mini-controller-manager")
               and e["responseStatus"]["code"] in (401, 403)]  # fmt: skip
    assert not refused, refused


def test_a_projected_token_is_renewed_at_80_percent_of_the_life_it_was_issued_for(
    cluster: tuple[APIServerProcess, str, ssl.SSLContext, Path],
) -> None:
    """The kubelet asks for the pod's token with the volume's expirationSeconds (an hour here) and
    schedules the renewal from the answer's (the capped 6 s): at 80 % of 6 s, not of an hour."""
    from client import RESTClient
    from kubelet import volume_sources

    server = cluster[0]
    with server.client() as plain:  # (no serviceaccount controller runs here: the account is made by hand)
        assert plain.post("/api/v1/namespaces/default/serviceaccounts",
                          json={"metadata": {"name": "default"}}).status_code in (201, 409)  # fmt: skip
        made = plain.post("/api/v1/namespaces/default/pods", json={
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "token-user"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})  # fmt: skip
        assert made.status_code == 201, made.text
        pod = made.json()
    volume = {"sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}]}

    async def renewal() -> tuple[volume_sources.Payload, float | None]:
        client = RESTClient(server.url)
        try:
            return await volume_sources.projected_payload(client, pod, volume, {})
        finally:
            await client.aclose()

    before = time.time()
    payload, renew_at = asyncio.run(renewal())
    assert payload["token"][0].count(b".") == 2  # a JWT
    assert renew_at is not None and before + 0.8 * CAP_SECONDS <= renew_at <= time.time() + 0.8 * CAP_SECONDS


def test_the_cap_flag_refuses_what_is_not_a_duration() -> None:
    for bad in ("soon", "-5s", "0.5s"):
        done = subprocess.run([sys.executable, "-m", "apiserver", "--service-account-max-token-expiration", bad],
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 2, (bad, done.stderr)
        assert "--service-account-max-token-expiration" in done.stderr, done.stderr
