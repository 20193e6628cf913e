"""PATCH in all three formats, and the /scale subresource kubectl scale uses."""

from __future__ import annotations

import httpx

from tests.apiserver.conftest import deployment

SMP = {"Content-Type": "application/strategic-merge-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
JSONP = {"Content-Type": "application/json-patch+json"}


def _containers(d: dict) -> dict[str, dict]:
    return {c["name"]: c for c in d["spec"]["template"]["spec"]["containers"]}


def test_strategic_merge_patch_keeps_the_sidecar_a_merge_patch_would_lose(api: httpx.Client, ns: str) -> None:
    api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web"))
    url = f"/apis/apps/v1/namespaces/{ns}/deployments/web"
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.9.1"}]}}}}
    r = api.patch(url, json=patch, headers=SMP)
    assert r.status_code == 200, r.text
    cs = _containers(r.json())
    assert cs["app"]["image"] == "nginx:1.9.1" and cs["app"]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert cs["sidecar"]["image"] == "busybox:1.36"
    assert cs["sidecar"]["ports"][0]["name"] == "metrics"
    assert r.json()["metadata"]["generation"] == 2
    # The same body as a JSON merge patch replaces the whole list: the sidecar is gone.
    r = api.patch(url, json=patch, headers=MERGE)
    assert list(_containers(r.json())) == ["app"]


def test_json_patch_and_failed_test_op(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "cm"}, "data": {"a": "1"}})
    url = f"/api/v1/namespaces/{ns}/configmaps/cm"
    r = api.patch(
        url,
        json=[{"op": "replace", "path": "/data/a", "value": "2"}, {"op": "add", "path": "/data/b", "value": "3"}],
        headers=JSONP,
    )
    assert r.status_code == 200 and r.json()["data"] == {"a": "2", "b": "3"}
    r = api.patch(url, json=[{"op": "test", "path": "/data/a", "value": "nope"}], headers=JSONP)
    assert r.status_code == 422 and r.json()["kind"] == "Status"
    assert api.get(url).json()["data"] == {"a": "2", "b": "3"}


def test_patch_with_stale_resource_version_conflicts(api: httpx.Client, ns: str) -> None:
    cm = api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "cm"}}).json()
    api.patch(f"/api/v1/namespaces/{ns}/configmaps/cm", json={"data": {"x": "1"}}, headers=MERGE)
    r = api.patch(
        f"/api/v1/namespaces/{ns}/configmaps/cm",
        json={"metadata": {"resourceVersion": cm["metadata"]["resourceVersion"]}, "data": {"x": "2"}},
        headers=MERGE,
    )
    assert r.status_code == 409


def test_unsupported_patch_type_is_415(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "cm"}})
    r = api.patch(f"/api/v1/namespaces/{ns}/configmaps/cm", content=b"{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415 and r.json()["reason"] == "UnsupportedMediaType"


def test_scale_subresource_reads_and_patches_replicas(api: httpx.Client, ns: str) -> None:
    api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("web", replicas=2))
    url = f"/apis/apps/v1/namespaces/{ns}/deployments/web/scale"
    scale = api.get(url).json()
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 2 and scale["status"]["selector"] == "app=web"
    r = api.patch(url, json={"spec": {"replicas": 5}}, headers=MERGE)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["replicas"] == 5
    d = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()
    assert d["spec"]["replicas"] == 5 and d["metadata"]["generation"] == 2
    bad = api.patch(url, json={"spec": {"replicas": -1}}, headers=MERGE)
    assert bad.status_code == 422


def test_rc_scale_uses_a_map_selector(api: httpx.Client, ns: str) -> None:
    rc = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "rc"},
        "spec": {
            "replicas": 1,
            "selector": {"app": "rc"},
            "template": {
                "metadata": {"labels": {"app": "rc"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    assert api.post(f"/api/v1/namespaces/{ns}/replicationcontrollers", json=rc).status_code == 201
    r = api.put(
        f"/api/v1/namespaces/{ns}/replicationcontrollers/rc/scale",
        json={"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "rc"}, "spec": {"replicas": 3}},
    )
    assert r.status_code == 200, r.text
    assert r.json()["status"]["selector"] == "app=rc" and r.json()["spec"]["replicas"] == 3
