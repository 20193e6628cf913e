"""Discovery, Table output, health, metrics, and durability across a restart."""

from __future__ import annotations

import httpx

from tests.apiserver.conftest import pod
from tests.support.apiserver import APIServerProcess

TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


def test_version_says_1_32(api: httpx.Client) -> None:
    v = api.get("/version").json()
    assert v["major"] == "1" and v["minor"] == "32"


def test_legacy_discovery_documents(api: httpx.Client) -> None:
    assert api.get("/api").json()["versions"] == ["v1"]
    groups = {g["name"]: g for g in api.get("/apis").json()["groups"]}
    assert groups["apps"]["preferredVersion"]["groupVersion"] == "apps/v1"
    assert {"batch", "coordination.k8s.io", "rbac.authorization.k8s.io", "autoscaling"} <= set(groups)
    core = {r["name"]: r for r in api.get("/api/v1").json()["resources"]}
    assert core["pods"]["shortNames"] == ["po"] and core["pods"]["categories"] == ["all"]
    assert core["pods"]["namespaced"] and not core["nodes"]["namespaced"]
    assert "pods/status" in core and "pods/binding" in core and "replicationcontrollers/scale" in core
    apps = {r["name"]: r for r in api.get("/apis/apps/v1").json()["resources"]}
    assert apps["deployments"]["kind"] == "Deployment" and "deploy" in apps["deployments"]["shortNames"]
    r = api.get("/api/v1", headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    assert r.headers["content-type"].startswith("application/json")


def test_openapi_v2_is_json_and_protobuf_only_is_an_empty_document(api: httpx.Client) -> None:
    r = api.get("/openapi/v2")
    assert r.status_code == 200 and r.json()["swagger"] == "2.0"
    r = api.get("/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert r.status_code == 200 and r.content == b""  # see apiserver/openapi/routes.py


def test_table_output_has_kubectl_columns(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("t"))
    t = api.get(f"/api/v1/namespaces/{ns}/pods", headers={"Accept": TABLE}).json()
    assert t["kind"] == "Table" and t["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in t["columnDefinitions"] if c["priority"] == 0] == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
    ]
    row = t["rows"][0]
    assert row["cells"][:3] == ["t", "0/1", "Pending"]
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "t"


def test_health_endpoints_and_metrics(api: httpx.Client, ns: str) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        assert api.get(path).status_code == 200
    api.get(f"/api/v1/namespaces/{ns}/pods")
    text = api.get("/metrics").text
    assert 'apiserver_request_total{code="200",resource="pods",subresource="",verb="list"}' in text
    assert "apiserver_request_duration_seconds_bucket" in text
    assert "apiserver_registered_watchers" in text


def test_objects_and_revisions_survive_a_restart(apiserver: APIServerProcess) -> None:
    server = APIServerProcess(etcd_url=apiserver.etcd_url).start()
    try:
        with server.client() as api:
            created = api.post(
                "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "keep"}, "data": {"a": "1"}}
            ).json()
        server.kill()  # no clean shutdown: what was acknowledged must still be there
        server.start()
        with server.client() as api:
            got = api.get("/api/v1/namespaces/default/configmaps/keep").json()
            assert got["data"] == {"a": "1"} and got["metadata"]["uid"] == created["metadata"]["uid"]
            later = api.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "later"}}).json()
            assert int(later["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    finally:
        server.cleanup()
