"""Authentication on the secure port: who each credential makes you, and 401 for bad ones.

`kubectl auth whoami` (a SelfSubjectReview) with a `system:masters` certificate, a plain
certificate, a static token and no credential at all; a token that is not known, a forged
ServiceAccount JWT, and a real one that stops working when its account is deleted."""

from __future__ import annotations

import base64

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from tests.security.conftest import SecureCluster
from tests.support.component import wait_for
from tests.support.fixtures import new_namespace


def whoami(secure: SecureCluster, who: str, *extra: str) -> list[list[str]]:
    done = secure.kubectl(who, "auth", "whoami", *extra)
    assert done.returncode == 0, done.stderr
    return [line.split(None, 1) for line in done.stdout.splitlines()]


def test_each_credential_is_its_user(secure: SecureCluster) -> None:
    assert whoami(secure, "admin") == [["ATTRIBUTE", "VALUE"], ["Username", "kubernetes-admin"],
                                       ["Groups", "[system:masters system:authenticated]"]]  # fmt: skip
    assert whoami(secure, "alice")[1:] == [["Username", "alice"], ["Groups", "[system:authenticated]"]]
    assert whoami(secure, "bob")[1:] == [["Username", "bob"], ["UID", "1001"],
                                         ["Groups", "[dev qa system:authenticated]"]]  # fmt: skip



def test_no_credential_is_system_anonymous(secure: SecureCluster) -> None:
    with secure.https() as c:
        assert c.get("/version").status_code == 200  # system:public-info-viewer
        assert c.get("/healthz").text == "ok"
        r = c.get("/api/v1/pods")
        assert r.status_code == 403
        assert r.json()["message"] == ('pods is forbidden: User "system:anonymous" cannot list resource "pods" '
                                       'in API group "" at the cluster scope')  # fmt: skip
        r = c.post("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                   json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})  # fmt: skip
        assert r.status_code == 403  # system:basic-user is for authenticated users only


def test_bad_credentials_are_401_with_a_status(secure: SecureCluster) -> None:
    done = secure.kubectl("forged", "get", "pods")
    assert done.returncode == 1
    # kubectl's own words for a 401 (after its discovery client has logged the same complaint)
    last = done.stderr.strip().splitlines()[-1]
    assert last == ("error: You must be logged in to the server "
                    "(the server has asked for the client to provide credentials)")  # fmt: skip
    forged = jwt.encode({"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:default:default",
                         "kubernetes.io/serviceaccount/namespace": "default",
                         "kubernetes.io/serviceaccount/service-account.name": "default"},
                        ec.generate_private_key(ec.SECP256R1()), algorithm="ES256")  # fmt: skip
    with secure.https(headers={"Authorization": f"Bearer {forged}"}) as c:
        r = c.get("/api/v1/namespaces/default/pods")
    assert r.status_code == 401
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}  # fmt: skip


def test_a_service_account_token_works_until_its_account_is_deleted(
    secure: SecureCluster, plain: httpx.Client
) -> None:
    ns = new_namespace(plain, "sa")
    r = plain.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "robot"}})
    assert r.status_code == 201
    secret = {"metadata": {"name": "robot-token", "annotations": {"kubernetes.io/service-account.name": "robot"}},
              "type": "kubernetes.io/service-account-token"}  # fmt: skip
    assert plain.post(f"/api/v1/namespaces/{ns}/secrets", json=secret).status_code == 201

    def token() -> str:
        data = plain.get(f"/api/v1/namespaces/{ns}/secrets/robot-token").json().get("data") or {}
        return data.get("token", "")

    raw = base64.b64decode(wait_for(token, what="the token controller's token")).decode()
    done = secure.kubectl("anonymous", "--token", raw, "auth", "whoami")
    assert done.returncode == 0, done.stderr
    assert f"system:serviceaccount:{ns}:robot" in done.stdout
    assert f"system:serviceaccounts:{ns}" in done.stdout
    assert plain.delete(f"/api/v1/namespaces/{ns}/serviceaccounts/robot").status_code == 200

    def refused() -> bool:
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        with secure.https(headers={"Authorization": f"Bearer {raw}"}) as c:
            return c.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review).status_code == 401

    wait_for(refused, what="the token refused once its account is gone")


def test_the_plain_port_is_system_unsecured(secure: SecureCluster, plain: httpx.Client) -> None:
    r = plain.post("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                   json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})  # fmt: skip
    assert r.status_code == 201
    assert r.json()["status"]["userInfo"] == {"username": "system:unsecured",
                                              "groups": ["system:masters", "system:authenticated"]}  # fmt: skip


def test_kubectl_create_token_gives_an_expiring_token_bound_to_a_pod(
    secure: SecureCluster, plain: httpx.Client
) -> None:
    ns = new_namespace(plain, "tok")
    plain.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "builder"}})
    pod = {"metadata": {"name": "job"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert plain.post(f"/api/v1/namespaces/{ns}/pods", json=pod).status_code == 201
    done = secure.kubectl("admin", "create", "token", "builder", "-n", ns, "--duration", "20m",
                          "--bound-object-kind", "Pod", "--bound-object-name", "job")  # fmt: skip
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["iss"] == "https://kubernetes.default.svc.cluster.local" and claims["exp"] - claims["iat"] == 1200
    assert claims["kubernetes.io"]["pod"]["name"] == "job"
    who = secure.kubectl("anonymous", "--token", token, "auth", "whoami")
    assert who.returncode == 0 and f"system:serviceaccount:{ns}:builder" in who.stdout, who.stderr
    assert "authentication.kubernetes.io/pod-name" in who.stdout
    too_short = secure.kubectl("admin", "create", "token", "builder", "-n", ns, "--duration", "5m")
    assert too_short.returncode == 1 and "may not specify a duration less than 10 minutes" in too_short.stderr
    assert plain.delete(f"/api/v1/namespaces/{ns}/pods/job", params={"gracePeriodSeconds": "0"}).status_code == 200
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}

    def refused() -> bool:
        with secure.https(headers={"Authorization": f"Bearer {token}"}) as c:
            return c.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review).status_code == 401

    wait_for(refused, what="the token refused once its pod is gone")
