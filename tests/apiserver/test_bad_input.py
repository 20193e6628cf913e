"""Bad input gets a Kubernetes Status with the right code, and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.apiserver.conftest import pod
from tests.support.apiserver import APIServerProcess


def _status(r: httpx.Response, code: int, reason: str) -> dict:
    assert r.status_code == code, r.text
    body = r.json()
    assert body["kind"] == "Status" and body["status"] == "Failure" and body["code"] == code
    assert body["reason"] == reason
    return body


def _count(api: httpx.Client, ns: str) -> int:
    return len(api.get(f"/api/v1/namespaces/{ns}/pods").json()["items"])


def test_malformed_json_is_bad_request(api: httpx.Client, ns: str) -> None:
    r = api.post(
        f"/api/v1/namespaces/{ns}/pods", content=b'{"metadata": {', headers={"Content-Type": "application/json"}
    )
    _status(r, 400, "BadRequest")
    assert _count(api, ns) == 0


def test_no_content_type_means_json(api: httpx.Client, ns: str) -> None:
    import json

    r = api.post(f"/api/v1/namespaces/{ns}/pods", content=json.dumps(pod("nct")).encode())
    assert r.status_code == 201, r.text


def test_yaml_body_is_accepted_and_malformed_yaml_refused(api: httpx.Client, ns: str) -> None:
    good = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  a: b\n"
    assert (
        api.post(
            f"/api/v1/namespaces/{ns}/configmaps", content=good, headers={"Content-Type": "application/yaml"}
        ).status_code
        == 201
    )
    bad = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [y\n"
    _status(
        api.post(f"/api/v1/namespaces/{ns}/configmaps", content=bad, headers={"Content-Type": "application/yaml"}),
        400,
        "BadRequest",
    )


def test_protobuf_body_is_unsupported_media_type(api: httpx.Client, ns: str) -> None:
    r = api.post(
        f"/api/v1/namespaces/{ns}/pods",
        content=b"k8s\x00\n\x02v1",
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    body = _status(r, 415, "UnsupportedMediaType")
    assert "application/json" in body["message"]


def test_accept_protobuf_and_json_answers_json(api: httpx.Client) -> None:
    r = api.get("/api/v1/namespaces", headers={"Accept": "application/vnd.kubernetes.protobuf,application/json"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")


def test_unknown_paths_and_resources_are_not_found_status(api: httpx.Client) -> None:
    for path in (
        "/nope",
        "/api/v1/frobs",
        "/apis/apps/v1/namespaces/default/frobs",
        "/apis/nogroup/v1/things",
        "/api/v1/namespaces/default/pods/x/frob",
        "/openapi/v3/apis/nogroup/v1",
    ):
        body = _status(api.get(path), 404, "NotFound")
        assert body["message"] == "the server could not find the requested resource"


def test_kind_and_namespace_must_match_the_url(api: httpx.Client, ns: str) -> None:
    wrong_kind = dict(pod("k"), kind="Service")
    _status(api.post(f"/api/v1/namespaces/{ns}/pods", json=wrong_kind), 400, "BadRequest")
    wrong_version = dict(pod("k"), apiVersion="apps/v1")
    _status(api.post(f"/api/v1/namespaces/{ns}/pods", json=wrong_version), 400, "BadRequest")
    other_ns = pod("k")
    other_ns["metadata"]["namespace"] = "default"
    _status(api.post(f"/api/v1/namespaces/{ns}/pods", json=other_ns), 400, "BadRequest")
    assert _count(api, ns) == 0


def test_invalid_object_is_422_with_causes(api: httpx.Client, ns: str) -> None:
    body = _status(api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("x", image="")), 422, "Invalid")
    assert body["message"] == 'Pod "x" is invalid: spec.containers[0].image: Required value'
    assert body["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers[0].image"}
    ]
    bad_name = _status(api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("Bad_Name")), 422, "Invalid")
    assert bad_name["details"]["causes"][0]["field"] == "metadata.name"
    assert _count(api, ns) == 0


def test_unknown_field_warns_and_strict_refuses(api: httpx.Client, ns: str) -> None:
    body = pod("u")
    body["spec"]["containers"][0]["imagee"] = "typo"
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    assert r.status_code == 201
    assert 'unknown field \\"spec.containers[0].imagee\\"' in r.headers["warning"]
    body["metadata"]["name"] = "u2"
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=body, params={"fieldValidation": "Strict"})
    assert _status(r, 400, "BadRequest")["message"].endswith('unknown field "spec.containers[0].imagee"')
    assert api.get(f"/api/v1/namespaces/{ns}/pods/u2").status_code == 404


def test_wrong_type_is_bad_request(api: httpx.Client, ns: str) -> None:
    d = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "t"},
        "spec": {
            "replicas": "many",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
    }
    _status(api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=d), 400, "BadRequest")


def test_method_not_allowed(api: httpx.Client, ns: str) -> None:
    _status(api.put(f"/api/v1/namespaces/{ns}/pods", json={}), 405, "MethodNotAllowed")


@pytest.fixture(scope="module")
def tiny_server() -> Iterator[APIServerProcess]:
    server = APIServerProcess(args=["--max-request-bytes", "2048"]).start()
    try:
        yield server
    finally:
        server.cleanup()


def test_body_over_max_request_bytes_is_413_and_nothing_is_written(tiny_server: APIServerProcess) -> None:
    with tiny_server.client() as api:
        big = {"metadata": {"name": "big"}, "data": {"k": "x" * 4096}}
        _status(api.post("/api/v1/namespaces/default/configmaps", json=big), 413, "RequestEntityTooLarge")
        assert api.get("/api/v1/namespaces/default/configmaps/big").status_code == 404
