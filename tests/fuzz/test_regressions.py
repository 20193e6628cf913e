"""Every server error the fuzzer found, pinned as one small deterministic request each.

Each test sends exactly the request that once made the server answer 5xx (or drop the
connection, or stop answering), and states what a Kubernetes API server does instead: refuse bad
input with a 4xx `Status`, or accept it. Each uses a fresh connection, because after a 500 uvicorn
closes the connection and a shared pooled client would blame the next test.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.fuzz.conftest import status_problems
from tests.support.apiserver import APIServerProcess


@pytest.fixture(scope="module")
def server() -> Iterator[APIServerProcess]:
    proc = APIServerProcess().start()
    try:
        yield proc
    finally:
        proc.cleanup()


def send(server: APIServerProcess, method: str, path: str, **kw: object) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=10.0) as c:
        return c.request(method, path, **kw)  # type: ignore[arg-type]


@pytest.fixture
def ns(server: APIServerProcess) -> str:
    name = f"r-{uuid.uuid4().hex[:8]}"
    assert send(server, "POST", "/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    return name


def assert_client_error(r: httpx.Response, server: APIServerProcess) -> None:
    assert 400 <= r.status_code < 500, f"{r.status_code} {r.text[:300]}\n{server.log_tail(8)}"
    assert not status_problems(r), status_problems(r)


def scheduled_pod(server: APIServerProcess, ns: str, name: str) -> str:
    """A pod bound to a node: its deletion is graceful, so gracePeriodSeconds is actually used."""
    send(server, "POST", "/api/v1/nodes", json={"metadata": {"name": "regression-node"}})
    pod = {"metadata": {"name": name}, "spec": {"nodeName": "regression-node",
                                               "containers": [{"name": "c", "image": "nginx"}]}}
    assert send(server, "POST", f"/api/v1/namespaces/{ns}/pods", json=pod).status_code == 201
    return f"/api/v1/namespaces/{ns}/pods/{name}"


def configmap(name: str, **extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}, **extra}


# --- DeleteOptions ------------------------------------------------------------------------------

@pytest.mark.parametrize("preconditions", [1, "x", True, [1]])
def test_delete_options_whose_preconditions_is_not_an_object_is_a_bad_request(server, ns, preconditions):
    assert send(server, "POST", f"/api/v1/namespaces/{ns}/configmaps", json=configmap("p")).status_code == 201
    r = send(server, "DELETE", f"/api/v1/namespaces/{ns}/configmaps/p", json={"preconditions": preconditions})
    assert_client_error(r, server)


def test_deletecollection_with_non_object_preconditions_is_a_bad_request(server, ns):
    assert send(server, "POST", f"/api/v1/namespaces/{ns}/configmaps", json=configmap("p")).status_code == 201
    r = send(server, "DELETE", f"/api/v1/namespaces/{ns}/configmaps", json={"preconditions": "x"})
    assert_client_error(r, server)


@pytest.mark.parametrize("grace", ["abc", 1e300, [1], 10**20])
def test_delete_options_grace_period_that_is_not_an_int64_is_a_bad_request(server, ns, grace):
    path = scheduled_pod(server, ns, "graceful")
    r = send(server, "DELETE", path, json={"gracePeriodSeconds": grace})
    assert_client_error(r, server)


def test_grace_period_query_beyond_int64_on_a_scheduled_pod_is_a_bad_request(server, ns):
    path = scheduled_pod(server, ns, "graceful")
    r = send(server, "DELETE", path + "?gracePeriodSeconds=100000000000000000000")
    assert_client_error(r, server)


# --- list parameters ----------------------------------------------------------------------------

def test_list_limit_beyond_int64_is_not_a_server_error(server, ns):
    r = send(server, "GET", f"/api/v1/namespaces/{ns}/pods?limit=9223372036854775808")
    assert r.status_code in (200, 400), f"{r.status_code} {r.text[:300]}"
    assert not status_problems(r)


@pytest.mark.parametrize("rv", [999_999_999, 2**70])
def test_continue_token_from_a_future_revision_is_a_client_error(server, ns, rv):
    token = base64.urlsafe_b64encode(json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": ""}).encode()).decode()
    r = send(server, "GET", f"/api/v1/namespaces/{ns}/configmaps?limit=1&continue={token}")
    assert_client_error(r, server)


# --- bodies -------------------------------------------------------------------------------------

def test_json_body_nested_beyond_the_parser_limit_is_a_bad_request(server, ns):
    r = send(server, "POST", f"/api/v1/namespaces/{ns}/configmaps", content=b"[" * 100_000 + b"]" * 100_000)
    assert_client_error(r, server)


def test_object_nested_900_levels_deep_is_answered_without_a_server_error(server, ns):
    body = b'{"metadata":{"name":"deep"},"x":' + b'{"a":' * 900 + b"1" + b"}" * 901
    r = send(server, "POST", f"/api/v1/namespaces/{ns}/configmaps", content=body)
    assert r.status_code < 500, f"{r.status_code} {r.text[:300]}"
    assert not status_problems(r)


def test_yaml_body_nested_beyond_the_parser_limit_is_a_bad_request(server, ns):
    body = b"a: " + b"[" * 5000 + b"]" * 5000
    r = send(server, "POST", f"/api/v1/namespaces/{ns}/configmaps", content=body,
             headers={"content-type": "application/yaml"})
    assert_client_error(r, server)


# --- warnings -----------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["bad\nfield", "nul\u0000", "euro\u20ac", "emoji\U0001f600"])
def test_unknown_field_with_unusual_characters_still_gets_a_created_answer_with_a_warning(server, ns, field):
    body = json.dumps(configmap("w", **{field: 1})).encode()
    r = send(server, "POST", f"/api/v1/namespaces/{ns}/configmaps", content=body)
    assert r.status_code == 201, f"{r.status_code} {r.text[:300]}\n{server.log_tail(5)}"
    assert "unknown field" in r.headers.get("warning", "")


# --- YAML alias expansion ("billion laughs", CVE-2019-11253 in Kubernetes) ----------------------

def test_yaml_alias_bomb_is_refused_quickly_and_the_server_keeps_answering():
    doc = b"a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n"
    for i in range(1, 9):  # nine levels of ten aliases: 10**9 nodes once expanded
        doc += b"a%d: &a%d [%s]\n" % (i, i, b",".join([b"*a%d" % (i - 1)] * 10))
    doc += b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: laughs}\n"
    own = APIServerProcess().start()  # it may be left spinning: never share it
    try:
        started = time.monotonic()
        with httpx.Client(base_url=own.url, timeout=5.0) as c:
            try:
                r = c.post("/api/v1/namespaces/default/configmaps", content=doc,
                           headers={"content-type": "application/yaml"})
            except httpx.TimeoutException:
                pytest.fail("a 700-byte YAML alias bomb kept the server busy for more than 5 s")
            assert_client_error(r, own)
            assert time.monotonic() - started < 5
            assert c.get("/readyz").status_code == 200
    finally:
        own.kill()
        own.cleanup()
