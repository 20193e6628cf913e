"""Server-side apply and managedFields over HTTP, on both storage backends."""

from __future__ import annotations

import httpx

APPLY = {"Content-Type": "application/apply-patch+yaml"}
MERGE = {"Content-Type": "application/merge-patch+json"}


def deploy_config(name: str, replicas: int | None = 2, image: str = "nginx:1.25") -> str:
    spec = f"  replicas: {replicas}\n" if replicas is not None else ""
    return (
        "apiVersion: apps/v1\nkind: Deployment\n"
        f"metadata:\n  name: {name}\n"
        f"spec:\n{spec}"
        f"  selector:\n    matchLabels: {{app: {name}}}\n"
        f"  template:\n    metadata:\n      labels: {{app: {name}}}\n"
        f"    spec:\n      containers:\n      - name: web\n        image: {image}\n"
    )


def entries(obj: dict) -> dict[tuple[str, str], dict]:
    return {(e["manager"], e["operation"]): e for e in obj["metadata"]["managedFields"]}


def test_create_and_update_record_managed_fields(api: httpx.Client, ns: str) -> None:
    url = f"/api/v1/namespaces/{ns}/configmaps"
    r = api.post(url + "?fieldManager=maker", json={"metadata": {"name": "cm"}, "data": {"a": "1"}})
    assert r.status_code == 201, r.text
    (entry,) = r.json()["metadata"]["managedFields"]
    assert entry["manager"] == "maker" and entry["operation"] == "Update" and entry["apiVersion"] == "v1"
    assert entry["fieldsType"] == "FieldsV1" and entry["fieldsV1"] == {"f:data": {"f:a": {}}}
    assert entry["time"].endswith("Z")
    # A patch without ?fieldManager= is recorded under the User-Agent's program name.
    r = api.patch(url + "/cm", json={"data": {"a": "2", "b": "x"}}, headers={**MERGE, "User-Agent": "tool/1.0"})
    by = entries(r.json())
    assert by[("tool", "Update")]["fieldsV1"] == {"f:data": {"f:a": {}, "f:b": {}}}
    assert ("maker", "Update") not in by  # it lost its only field
    # Removing a field removes it from its owner.
    r = api.patch(url + "/cm?fieldManager=other", json={"data": {"b": None}}, headers=MERGE)
    assert entries(r.json())[("tool", "Update")]["fieldsV1"] == {"f:data": {"f:a": {}}}


def test_the_creator_owns_what_it_sent_and_the_defaults_not_what_admission_added(api: httpx.Client, ns: str) -> None:
    # Kubernetes records managedFields before mutating admission: the ServiceAccount plugin's
    # serviceAccountName and DefaultTolerationSeconds' tolerations belong to nobody.
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}
    r = api.post(f"/api/v1/namespaces/{ns}/pods?fieldManager=maker", json=pod)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["spec"]["serviceAccountName"] == "default" and created["spec"]["tolerations"]
    (entry,) = created["metadata"]["managedFields"]
    spec = entry["fieldsV1"]["f:spec"]
    assert "f:dnsPolicy" in spec and "f:restartPolicy" in spec  # defaults are the creator's
    assert "f:serviceAccountName" not in spec and "f:tolerations" not in spec
    assert set(spec["f:containers"]['k:{"name":"c"}']) >= {".", "f:name", "f:image", "f:imagePullPolicy"}


def test_apply_creates_then_conflicts_then_forces(api: httpx.Client, ns: str) -> None:
    url = f"/apis/apps/v1/namespaces/{ns}/deployments/web"
    r = api.patch(url + "?fieldManager=alice", content=deploy_config("web"), headers=APPLY)
    assert r.status_code == 201, r.text
    alice = entries(r.json())[("alice", "Apply")]
    assert alice["fieldsV1"]["f:spec"]["f:replicas"] == {}
    containers = alice["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert set(containers['k:{"name":"web"}']) == {".", "f:name", "f:image"}
    # An Update manager changes replicas; applying another value conflicts with it.
    api.patch(url + "?fieldManager=kubectl-scale", json={"spec": {"replicas": 5}}, headers=MERGE).raise_for_status()
    r = api.patch(url + "?fieldManager=alice", content=deploy_config("web", 3), headers=APPLY)
    assert r.status_code == 409, r.text
    status = r.json()
    assert status["reason"] == "Conflict"
    assert status["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-scale" using apps/v1: .spec.replicas'
    )
    assert status["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "kubectl-scale" using apps/v1',
         "field": ".spec.replicas"}
    ]
    assert api.get(url).json()["spec"]["replicas"] == 5  # nothing changed
    # Applying the value it already has is no conflict: ownership is shared.
    r = api.patch(url + "?fieldManager=alice", content=deploy_config("web", 5), headers=APPLY)
    assert r.status_code == 200, r.text
    # force=true takes ownership.
    r = api.patch(url + "?fieldManager=alice&force=true", content=deploy_config("web", 3), headers=APPLY)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["replicas"] == 3
    assert ("kubectl-scale", "Update") not in entries(r.json())


def test_apply_removes_fields_the_manager_stopped_applying(api: httpx.Client, ns: str) -> None:
    url = f"/apis/apps/v1/namespaces/{ns}/deployments/web"
    api.patch(url + "?fieldManager=alice", content=deploy_config("web"), headers=APPLY).raise_for_status()
    r = api.patch(url + "?fieldManager=alice", content=deploy_config("web", None), headers=APPLY)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["replicas"] == 1  # gone from the object, so defaulted again
    assert "f:replicas" not in entries(r.json())[("alice", "Apply")]["fieldsV1"]["f:spec"]


def test_apply_merges_lists_by_key_and_keeps_other_managers_items(api: httpx.Client, ns: str) -> None:
    url = f"/apis/apps/v1/namespaces/{ns}/deployments/web"
    api.patch(url + "?fieldManager=alice", content=deploy_config("web"), headers=APPLY).raise_for_status()
    sidecar = {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}}
    r = api.patch(url + "?fieldManager=bob", headers=APPLY,
                  content=f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\n{_yaml(sidecar)}")
    assert r.status_code == 200, r.text
    names = [c["name"] for c in r.json()["spec"]["template"]["spec"]["containers"]]
    assert names == ["web", "side"]
    # alice re-applies without the sidecar: bob's container stays.
    r = api.patch(url + "?fieldManager=alice", content=deploy_config("web", 2, "nginx:1.26"), headers=APPLY)
    containers = r.json()["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("web", "nginx:1.26"), ("side", "busybox")]


def _yaml(doc: dict) -> str:
    import json

    return "spec: " + json.dumps(doc["spec"]) + "\n"


def test_apply_needs_a_field_manager(api: httpx.Client, ns: str) -> None:
    r = api.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/web", content=deploy_config("web"), headers=APPLY)
    assert r.status_code == 422, r.text
    assert r.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").status_code == 404


def test_status_writes_are_recorded_with_their_subresource(api: httpx.Client, ns: str) -> None:
    url = f"/apis/apps/v1/namespaces/{ns}/deployments/web"
    api.patch(url + "?fieldManager=alice", content=deploy_config("web"), headers=APPLY).raise_for_status()
    r = api.patch(url + "/status?fieldManager=ctrl", json={"status": {"replicas": 2}}, headers=MERGE)
    assert r.status_code == 200, r.text
    entry = entries(r.json())[("ctrl", "Update")]
    assert entry["subresource"] == "status" and entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}


def test_bad_apply_bodies_are_refused_cleanly(api: httpx.Client, ns: str) -> None:
    url = f"/apis/apps/v1/namespaces/{ns}/deployments/web?fieldManager=alice"
    head = "apiVersion: apps/v1\nkind: Deployment\n"
    for body, code in [
        ("- a\n- b\n", 400),
        ("kind: Deployment\nmetadata: {name: web}\n", 400),
        (head + "metadata: {name: other}\n", 400),
        (head + "metadata: {name: web}\nspec: {replicas: many}\n", 400),
        (head + "metadata: {name: web, managedFields: []}\n", 400),
    ]:
        r = api.patch(url, content=body, headers=APPLY)
        assert r.status_code == code, (body, r.text)
        assert r.json()["kind"] == "Status"
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").status_code == 404
    # Odd but decodable YAML is never a server error.
    r = api.patch(url, content=head + "metadata: {name: web, labels: {1: 2}}\nspec: {x: 2020-01-01}\n",
                  headers=APPLY)
    assert r.status_code < 500, r.text


def test_apply_with_dry_run_answers_and_stores_nothing(api: httpx.Client, ns: str) -> None:
    """`kubectl apply --server-side --dry-run=server`: the answer is the applied object, storage unchanged."""
    url = f"/apis/apps/v1/namespaces/{ns}/deployments/dry"
    r = api.patch(url + "?fieldManager=alice&dryRun=All", content=deploy_config("dry"), headers=APPLY)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["replicas"] == 2
    assert api.get(url).status_code == 404  # a dry-run apply of a new object creates nothing
    api.patch(url + "?fieldManager=alice", content=deploy_config("dry"), headers=APPLY).raise_for_status()
    before = api.get(url).content
    r = api.patch(url + "?fieldManager=alice&dryRun=All", content=deploy_config("dry", 7), headers=APPLY)
    assert r.status_code == 200 and r.json()["spec"]["replicas"] == 7, r.text
    assert api.get(url).content == before  # byte for byte
