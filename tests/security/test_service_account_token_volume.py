"""The ServiceAccount admission plugin's token volume (apiserver/admission/service_account_token_volume.py):
what a pod looks like once admitted, on an API server that can issue tokens and on one that cannot.
(tests/cluster/test_up_exec.py reads the files inside a real pod and uses its token.)"""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.security.conftest import SecureCluster
from tests.support.apiserver import APIServerProcess

PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
PODS = "/api/v1/namespaces/default/pods"


def _pod(**spec: Any) -> dict[str, Any]:
    containers = spec.pop("containers", [{"name": "app", "image": "busybox"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{uuid.uuid4().hex[:8]}"},
            "spec": {"containers": containers, **spec}}  # fmt: skip


def _admitted(client: httpx.Client, **spec: Any) -> dict[str, Any]:
    r = client.post(PODS, json=_pod(**spec))
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()["spec"]
    return created


def _token_volumes(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in spec.get("volumes") or [] if v["name"].startswith("kube-api-access-")]


def test_every_container_mounts_the_token_volume_kubernetes_adds(secure: SecureCluster, plain: httpx.Client) -> None:
    spec = _admitted(plain, initContainers=[{"name": "init", "image": "busybox"}],
                     containers=[{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}])  # fmt: skip
    [volume] = _token_volumes(spec)
    name = volume["name"]
    assert len(name) == len("kube-api-access-") + 5
    assert volume["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}  # fmt: skip
    for container in spec["initContainers"] + spec["containers"]:
        assert {"name": name, "readOnly": True, "mountPath": PATH} in container["volumeMounts"]


def test_automount_false_on_the_pod_or_its_account_and_a_mounted_path_are_respected(
    secure: SecureCluster, plain: httpx.Client
) -> None:
    assert not _token_volumes(_admitted(plain, automountServiceAccountToken=False))
    account = f"quiet-{uuid.uuid4().hex[:6]}"
    r = plain.post("/api/v1/namespaces/default/serviceaccounts",
                   json={"metadata": {"name": account}, "automountServiceAccountToken": False})  # fmt: skip
    assert r.status_code == 201, r.text
    assert not _token_volumes(_admitted(plain, serviceAccountName=account))
    # the pod's own word wins over its account's
    assert _token_volumes(_admitted(plain, serviceAccountName=account, automountServiceAccountToken=True))
    own = [{"name": "app", "image": "busybox", "volumeMounts": [{"name": "mine", "mountPath": PATH}]}]
    spec = _admitted(plain, containers=own, volumes=[{"name": "mine", "emptyDir": {}}])
    assert not _token_volumes(spec) and spec["containers"][0]["volumeMounts"] == own[0]["volumeMounts"]


def test_an_api_server_that_cannot_issue_tokens_adds_no_volume() -> None:
    server = APIServerProcess().start()
    try:
        with server.client() as client:
            spec = _admitted(client)
        assert not _token_volumes(spec) and "volumeMounts" not in spec["containers"][0]
    finally:
        server.cleanup()
