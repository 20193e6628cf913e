"""The OpenAPI documents a real API server publishes: their shape, their names and markers, their caching.

The documents are built from the models and the kind registry, not from storage, so one API
server on the default (SQLite) backend serves the whole module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openapi_spec_validator import validate

from api import registry
from api.patch import schema as patch_schema
from tests.support.apiserver import APIServerProcess

PB_V2 = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


@pytest.fixture(scope="module")
def apiserver() -> Iterator[APIServerProcess]:
    server = APIServerProcess().start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture(scope="module")
def v3(apiserver: APIServerProcess) -> dict[str, dict[str, Any]]:
    """Every group/version document the index names, fetched by its hashed URL."""
    with apiserver.client() as api:
        index = api.get("/openapi/v3").json()["paths"]
        return {gv: api.get(entry["serverRelativeURL"]).json() for gv, entry in index.items()}


@pytest.fixture(scope="module")
def v2(apiserver: APIServerProcess) -> dict[str, Any]:
    with apiserver.client() as api:
        r = api.get("/openapi/v2", headers={"Accept": "application/json"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    return r.json()


def _schemas(v3: dict[str, dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for doc in v3.values():
        merged.update(doc["components"]["schemas"])
    return merged


def test_v3_index_names_every_served_group_version(v3: dict[str, dict[str, Any]]) -> None:
    expected = {f"apis/{g}/{v}" if g else f"api/{v}" for g, vs in registry.groups() for v in vs}
    assert set(v3) == expected


def test_every_document_is_valid_openapi(v3: dict[str, dict[str, Any]], v2: dict[str, Any]) -> None:
    for doc in v3.values():
        assert doc["openapi"] == "3.0.0"
        validate(doc)
    assert v2["swagger"] == "2.0"
    validate(v2)


def test_hashed_urls_are_immutable_stale_hashes_redirect_and_etags_revalidate(api: httpx.Client) -> None:
    url = api.get("/openapi/v3").json()["paths"]["apis/apps/v1"]["serverRelativeURL"]
    r = api.get(url)
    assert r.status_code == 200 and r.headers["cache-control"] == "public, immutable"
    stale = api.get("/openapi/v3/apis/apps/v1?hash=0123", follow_redirects=False)
    assert stale.status_code == 301 and stale.headers["location"] == url
    again = api.get("/openapi/v3/apis/apps/v1", headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert api.get("/openapi/v3/apis/nogroup/v1").json()["reason"] == "NotFound"


def test_v2_is_json_and_protobuf_only_is_an_empty_document(api: httpx.Client) -> None:
    r = api.get("/openapi/v2", headers={"Accept": PB_V2})
    assert r.status_code == 200 and r.content == b""
    assert r.headers["content-type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    r = api.get("/openapi/v2", headers={"Accept": "application/yaml"})
    assert r.status_code == 406 and r.json()["reason"] == "NotAcceptable"
    both = api.get("/openapi/v2", headers={"Accept": f"{PB_V2}, application/json"})
    assert both.status_code == 200 and both.json()["swagger"] == "2.0"
    etag = both.headers["etag"]
    assert api.get("/openapi/v2", headers={"If-None-Match": etag}).status_code == 304


def test_definitions_carry_kubernetes_names_and_group_version_kinds(v3: dict[str, dict[str, Any]]) -> None:
    core = v3["api/v1"]["components"]["schemas"]
    apps = v3["apis/apps/v1"]["components"]["schemas"]
    assert core["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"] == [
        {"group": "", "kind": "Pod", "version": "v1"}
    ]
    assert apps["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    ]
    assert apps["io.k8s.api.apps.v1.DeploymentList"]["required"] == ["items"]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in core
    assert apps["io.k8s.api.autoscaling.v1.Scale"]["x-kubernetes-group-version-kind"] == [
        {"group": "autoscaling", "kind": "Scale", "version": "v1"}
    ]
    # Every served kind has a definition with its GVK, in its own group/version's document.
    for rt in registry.all_resources():
        doc = v3[f"apis/{rt.group}/{rt.version}" if rt.group else f"api/{rt.version}"]
        gvks = [s.get("x-kubernetes-group-version-kind", []) for s in doc["components"]["schemas"].values()]
        assert any({"group": rt.group, "kind": rt.kind, "version": rt.version} in g for g in gvks), rt.kind


def test_value_types_are_encoded_as_kubernetes_encodes_them(
    v3: dict[str, dict[str, Any]], v2: dict[str, Any]
) -> None:
    s3, s2 = _schemas(v3), v2["definitions"]
    ios = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
    qty = "io.k8s.apimachinery.pkg.api.resource.Quantity"
    assert s3[ios]["format"] == "int-or-string" and s3[ios]["oneOf"] == [{"type": "integer"}, {"type": "string"}]
    assert s2[ios]["type"] == "string" and s2[ios]["format"] == "int-or-string"
    assert s2[qty]["type"] == "string" and {"type": "string"} in s3[qty]["oneOf"]
    rolling = s3["io.k8s.api.apps.v1.RollingUpdateDeployment"]["properties"]["maxSurge"]
    assert rolling["allOf"] == [{"$ref": f"#/components/schemas/{ios}"}]
    assert s2["io.k8s.api.apps.v1.RollingUpdateDeployment"]["properties"]["maxSurge"]["$ref"] == f"#/definitions/{ios}"
    limits = s3["io.k8s.api.core.v1.ResourceRequirements"]["properties"]["limits"]
    assert limits["additionalProperties"] == {"$ref": f"#/components/schemas/{qty}"}
    spec = s3["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]
    assert spec["replicas"] == {**spec["replicas"], "type": "integer", "format": "int32"}
    meta = s3["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
    assert meta["generation"]["format"] == "int64"
    assert meta["labels"]["additionalProperties"] == {"type": "string"}
    assert meta["creationTimestamp"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}]  # noqa: E501


def test_list_and_patch_markers_agree_with_the_servers_patch_code(v3: dict[str, dict[str, Any]]) -> None:
    schemas = _schemas(v3)
    by_short = {name.rsplit(".", 1)[-1]: s for name, s in schemas.items()}
    ports = by_short["Container"]["properties"]["ports"]
    assert ports["x-kubernetes-list-type"] == "map"
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert by_short["PodSpec"]["properties"]["containers"]["x-kubernetes-patch-merge-key"] == "name"
    assert by_short["DeploymentSpec"]["properties"]["strategy"]["x-kubernetes-patch-strategy"] == "retainKeys"
    assert by_short["DeploymentStatus"]["properties"]["conditions"]["x-kubernetes-patch-merge-key"] == "type"
    checked = 0
    for type_name, fields in patch_schema.TYPES.items():
        definition = by_short.get(type_name)
        if definition is None:
            continue  # a pseudo-type of the patch table (WorkloadStatus, TemplateSpec, Object)
        for field, meta in fields.items():
            prop = definition["properties"].get(field)
            if prop is None:
                continue  # a field the patch code knows but the model does not (yet)
            assert prop.get("x-kubernetes-patch-strategy", "") == meta.strategy, (type_name, field)
            assert prop.get("x-kubernetes-patch-merge-key", "") == meta.merge_key, (type_name, field)
            checked += 1
    assert checked > 20


def test_required_fields_are_marked_as_kubernetes_marks_them(v3: dict[str, dict[str, Any]]) -> None:
    by_short = {name.rsplit(".", 1)[-1]: s for name, s in _schemas(v3).items()}
    assert by_short["Container"]["required"] == ["name"]
    assert by_short["PodSpec"]["required"] == ["containers"]
    assert by_short["DeploymentSpec"]["required"] == ["selector", "template"]
    assert by_short["ServicePort"]["required"] == ["port"]
    assert "required" not in by_short["ObjectMeta"]


IMPORTANT = [
    "io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.PodSpec", "io.k8s.api.core.v1.Container",
    "io.k8s.api.core.v1.PodTemplateSpec", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    "io.k8s.api.apps.v1.Deployment", "io.k8s.api.apps.v1.DeploymentSpec", "io.k8s.api.apps.v1.DeploymentStrategy",
    "io.k8s.api.apps.v1.RollingUpdateDeployment", "io.k8s.api.apps.v1.ReplicaSet", "io.k8s.api.apps.v1.ReplicaSetSpec",
    "io.k8s.api.core.v1.Service", "io.k8s.api.core.v1.ServiceSpec", "io.k8s.api.core.v1.ServicePort",
    "io.k8s.api.core.v1.ReplicationController", "io.k8s.api.core.v1.ReplicationControllerSpec",
]


def test_important_kinds_describe_themselves_and_every_field(v3: dict[str, dict[str, Any]]) -> None:
    schemas = _schemas(v3)
    for name in IMPORTANT:
        assert schemas[name].get("description"), name
        undescribed = [f for f, p in schemas[name]["properties"].items() if not p.get("description")]
        assert undescribed == [], name
    container = schemas["io.k8s.api.core.v1.Container"]["properties"]
    assert container["imagePullPolicy"]["description"] == "Always, IfNotPresent, Never"  # a model comment
    host_ip = schemas["io.k8s.api.core.v1.PodStatus"]["properties"]["hostIP"]["description"]
    assert "wire" not in host_ip  # notes to the programmer are not descriptions


def test_paths_list_the_rest_operations_of_every_resource(v3: dict[str, dict[str, Any]], v2: dict[str, Any]) -> None:
    pods = v3["api/v1"]["paths"]
    collection, item = pods["/api/v1/namespaces/{namespace}/pods"], pods["/api/v1/namespaces/{namespace}/pods/{name}"]
    assert collection["get"]["operationId"] == "listCoreV1NamespacedPod"
    assert {p["name"] for p in collection["get"]["parameters"]} >= {"labelSelector", "fieldSelector", "watch", "limit"}
    assert set(item) >= {"get", "put", "patch", "delete", "parameters"}
    assert {"fieldValidation", "dryRun"} <= {p["name"] for p in item["patch"]["parameters"]}
    assert "dryRun" in {p["name"] for p in item["delete"]["parameters"]}
    assert pods["/api/v1/namespaces/{namespace}/pods/{name}/binding"]["post"]["x-kubernetes-group-version-kind"] == {
        "group": "", "kind": "Binding", "version": "v1"
    }
    assert "/api/v1/nodes/{name}/status" in pods and "/api/v1/pods" in pods
    scale = v3["apis/apps/v1"]["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert scale["patch"]["operationId"] == "patchAppsV1NamespacedDeploymentScale"
    for rt in registry.all_resources():
        prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
        base = f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
        assert {"get", "post"} <= set(v2["paths"][base]), base
        assert {"get", "put", "patch", "delete"} <= set(v2["paths"][base + "/{name}"]), base
    body = v2["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" in body["consumes"]
