"""What the secure port's transport does to the bytes: nothing. A request body spanning many TLS
records and many of the connection's read buffers (apiserver/tls_reads.py) arrives whole, and the
answer that carries it back arrives whole, on one keep-alive connection."""

from __future__ import annotations

import secrets

import httpx

from tests.security.conftest import BOB_TOKEN, SecureCluster

RBAC = "/apis/rbac.authorization.k8s.io/v1"


def test_a_body_of_many_records_and_buffers_arrives_whole(secure: SecureCluster, plain: httpx.Client) -> None:
    ns = f"wire-{secrets.token_hex(3)}"
    plain.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).raise_for_status()
    plain.post(f"{RBAC}/namespaces/{ns}/rolebindings", json={
        "metadata": {"name": "bob-edit"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}],
    }).raise_for_status()  # fmt: skip
    # ~900 KB of varied text: ~55 TLS records and ~14 of the connection's 64 KiB buffers. A read
    # handed on wrong (a wrong length, a piece lost or repeated at a buffer's end) changes the value.
    payload = {f"part-{i}": secrets.token_urlsafe(66_000) for i in range(10)}
    with secure.https(headers={"Authorization": f"Bearer {BOB_TOKEN}"}) as bob:
        made = bob.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "big"}, "data": payload})
        assert made.status_code == 201, made.text
        for _ in range(3):  # the same connection, reused for each answer of ~900 KB
            got = bob.get(f"/api/v1/namespaces/{ns}/configmaps/big")
            assert got.status_code == 200
            assert got.json()["data"] == payload
    assert plain.get(f"/api/v1/namespaces/{ns}/configmaps/big").json()["data"] == payload  # what was stored
