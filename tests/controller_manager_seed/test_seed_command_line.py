"""Seed 000's kube-controller-manager command line, run as written (address and paths swapped for
this test's), reconciles the seed's ReplicationController, logs to klog-named files, publishes
the root CA, fills in token Secrets and serves the task dump on its port."""

from __future__ import annotations

import base64
import getpass
import os
import re
import socket
import uuid
from typing import Any

import httpx
import jwt
import yaml

from tests.controller_manager_seed.conftest import PKI, SeedManager
from tests.support.component import wait_for
from tests.support.examples import EXAMPLES_DIR


def _ns(api: httpx.Client, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    assert api.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    return name


def _get(api: httpx.Client, path: str) -> dict[str, Any] | None:
    r = api.get(path)
    return r.json() if r.status_code == 200 else None  # type: ignore[no-any-return]


def test_seed_command_line_reconciles_the_seed_rc(api: httpx.Client, seed_manager: SeedManager) -> None:
    rc = yaml.safe_load((EXAMPLES_DIR / "nginx-rc.yaml").read_text())
    ns = _ns(api, "seed000")
    r = api.post(f"/api/v1/namespaces/{ns}/replicationcontrollers", json=rc)
    assert r.status_code == 201, r.text
    uid = r.json()["metadata"]["uid"]

    def owned_pods() -> list[dict[str, Any]]:
        items = api.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": "app=nginx"}).json()["items"]
        return [p for p in items if any(o["uid"] == uid for o in p["metadata"].get("ownerReferences") or [])]

    pods = wait_for(lambda: len(ps := owned_pods()) == 2 and ps, what="the RC's 2 pods")
    assert all(p["metadata"]["name"].startswith("nginx-server-") for p in pods)
    assert {p["metadata"]["labels"]["env"] for p in pods} == {"dev"}
    status = wait_for(
        lambda: (s := api.get(f"/api/v1/namespaces/{ns}/replicationcontrollers/nginx-server").json()["status"])
        .get("replicas") == 2 and s,
        what="status.replicas=2",
    )  # fmt: skip
    assert status["readyReplicas"] == 0  # no kubelet here: the pods stay Pending


def test_logs_go_to_klog_files_in_log_dir_not_stderr(seed_manager: SeedManager) -> None:
    program, host, user = "mini-controller-manager", socket.gethostname().split(".")[0], getpass.getuser()
    pid = seed_manager.proc.proc.pid  # type: ignore[union-attr]
    link = seed_manager.log_dir / f"{program}.INFO"
    wait_for(lambda: link.is_symlink(), what="the INFO symlink")
    target = os.readlink(link)
    prefix = re.escape(f"{program}.{host}.{user}.log.INFO.")
    assert re.fullmatch(rf"{prefix}\d{{8}}-\d{{6}}\.{pid}", target), target
    text = wait_for(lambda: "Started controller 'replicationcontroller'" in (t := link.read_text()) and t,
                    what="a start line in the INFO file")  # fmt: skip
    assert text.startswith("Log file created at: ")
    started = next(line for line in text.splitlines() if "Started controller 'replicationcontroller'" in line)
    assert re.match(r"I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ manager\.py:\d+\] ", started), started
    assert re.search(r"^D?I\d{4} .*HTTP Request: GET ", text, re.M), "--v=4 logs every request"
    # --logtostderr=false: below ERROR, nothing reaches stderr
    assert "Started controller" not in seed_manager.proc.log_tail(200)


def test_root_ca_is_published_in_every_namespace_and_kept(api: httpx.Client, seed_manager: SeedManager,
                                                          pki: PKI) -> None:  # fmt: skip
    ca = pki.ca_crt.read_text()
    ns = _ns(api, "rootca")
    path = f"/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt"
    cm = wait_for(lambda: _get(api, path), what="kube-root-ca.crt")
    assert cm["data"] == {"ca.crt": ca}
    assert "kubernetes.default.svc" in cm["metadata"]["annotations"]["kubernetes.io/description"]
    assert wait_for(lambda: _get(api, "/api/v1/namespaces/default/configmaps/kube-root-ca.crt"))["data"]["ca.crt"] == ca
    r = api.patch(path, json={"data": {"ca.crt": "tampered", "extra": "x"}},
                  headers={"Content-Type": "application/merge-patch+json"})  # fmt: skip
    assert r.status_code == 200, r.text
    wait_for(lambda: (c := _get(api, path)) and c["data"] == {"ca.crt": ca}, what="the edit undone")
    assert api.delete(path).status_code == 200
    wait_for(lambda: (c := _get(api, path)) and c["data"] == {"ca.crt": ca}, what="the ConfigMap back")


def test_token_secret_is_filled_with_a_signed_token_and_goes_with_its_account(
    api: httpx.Client, seed_manager: SeedManager, pki: PKI
) -> None:
    ns = _ns(api, "tokens")
    sa = api.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "build-robot"}}).json()
    body = {
        "metadata": {"name": "build-robot-token", "annotations": {"kubernetes.io/service-account.name": "build-robot"}},
        "type": "kubernetes.io/service-account-token",
    }
    assert api.post(f"/api/v1/namespaces/{ns}/secrets", json=body).status_code == 201
    path = f"/api/v1/namespaces/{ns}/secrets/build-robot-token"
    secret = wait_for(lambda: (s := _get(api, path)) and "token" in (s.get("data") or {}) and s, what="a token")
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert data["ca.crt"] == pki.ca_crt.read_text()
    assert data["namespace"] == ns
    assert secret["metadata"]["annotations"]["kubernetes.io/service-account.uid"] == sa["metadata"]["uid"]
    claims = jwt.decode(data["token"], pki.key.public_key(), algorithms=["RS256"])  # the signature checks out
    assert claims == {
        "iss": "kubernetes/serviceaccount",
        "kubernetes.io/serviceaccount/namespace": ns,
        "kubernetes.io/serviceaccount/secret.name": "build-robot-token",
        "kubernetes.io/serviceaccount/service-account.name": "build-robot",
        "kubernetes.io/serviceaccount/service-account.uid": sa["metadata"]["uid"],
        "sub": f"system:serviceaccount:{ns}:build-robot",
    }
    assert jwt.get_unverified_header(data["token"])["alg"] == "RS256"
    # an orphan (its account does not exist) is deleted
    orphan = {**body, "metadata": {"name": "orphan", "annotations": {"kubernetes.io/service-account.name": "nobody"}}}
    assert api.post(f"/api/v1/namespaces/{ns}/secrets", json=orphan).status_code == 201
    wait_for(lambda: api.get(f"/api/v1/namespaces/{ns}/secrets/orphan").status_code == 404, what="orphan deleted")
    assert api.delete(f"/api/v1/namespaces/{ns}/serviceaccounts/build-robot").status_code == 200
    wait_for(lambda: api.get(path).status_code == 404, what="the token Secret to go with its account")


def test_profiling_serves_every_task_with_its_stack(seed_manager: SeedManager) -> None:
    base = f"http://127.0.0.1:{seed_manager.port}/debug/pprof"
    assert "goroutine?debug=2" in httpx.get(f"{base}/").text
    full = httpx.get(f"{base}/goroutine", params={"debug": "2"}).text
    assert re.search(r'^task \d+ "replicationcontroller-worker-0" \[waiting\]:$', full, re.M), full[:2000]
    assert 'File "' in full and "workqueue.py" in full
    assert re.search(r'^thread \d+ "MainThread":$', full, re.M)
    folded = httpx.get(f"{base}/goroutine", params={"debug": "1"}).text
    assert re.search(r"^\d+ @ task ", folded, re.M)
    assert httpx.get(f"{base}/goroutine").status_code == 400  # Go's binary profile: not here
