"""`?dryRun=All` runs a write through defaulting, admission and validation and persists nothing.

Every test reads the object's raw bytes and the list resourceVersion (a storage-wide revision)
before and after the dry run: both must be identical. A watch opened at the revision read before
must see, as its first event, the real write the test makes afterwards — never the dry run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx

from tests.apiserver.conftest import deployment, pod

DRY = {"dryRun": "All"}
MERGE = {"Content-Type": "application/merge-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}


def _list_rv(api: httpx.Client, collection: str) -> str:
    r = api.get(collection)
    assert r.status_code == 200, r.text
    return r.json()["metadata"]["resourceVersion"]


def _raw(api: httpx.Client, url: str) -> bytes:
    r = api.get(url)
    assert r.status_code in (200, 404), r.text
    return r.content


@contextmanager
def untouched(api: httpx.Client, collection: str, *urls: str) -> Iterator[str]:
    """Asserts that the block changes neither the objects' bytes nor the storage revision."""
    before = [_raw(api, u) for u in urls]
    rv = _list_rv(api, collection)
    yield rv
    assert [_raw(api, u) for u in urls] == before
    assert _list_rv(api, collection) == rv


def first_event_after(api: httpx.Client, collection: str, rv: str, write: Callable[[], httpx.Response]) -> dict:
    """Make a real write, then return the first event a watch from `rv` delivers."""
    assert write().status_code in (200, 201), "the real write after the dry run failed"
    params = {"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "5"}
    with api.stream("GET", collection, params=params, timeout=10) as r:
        for line in r.iter_lines():
            if line.strip():
                event = json.loads(line)
                if event["type"] != "BOOKMARK":
                    return event
    raise AssertionError("the watch ended without an event")


def _label(api: httpx.Client, url: str) -> Callable[[], httpx.Response]:
    return lambda: api.patch(url, content=json.dumps({"metadata": {"labels": {"real": "write"}}}), headers=MERGE)


# -- create --------------------------------------------------------------------------------------
def test_create_answers_201_with_the_object_it_would_store(api: httpx.Client, ns: str) -> None:
    coll = f"/api/v1/namespaces/{ns}/pods"
    with untouched(api, coll, f"{coll}/web") as rv:
        r = api.post(coll, json=pod("web"), params=DRY)
        assert r.status_code == 201, r.text
        made = r.json()
        assert made["metadata"]["uid"] and made["metadata"]["creationTimestamp"]
        assert "resourceVersion" not in made["metadata"]
        assert made["spec"]["restartPolicy"] == "Always"  # defaulted
        assert made["spec"]["serviceAccountName"] == "default"  # admitted
        gen = api.post(coll, json={**pod(""), "metadata": {"generateName": "web-"}}, params=DRY)
        assert gen.status_code == 201 and gen.json()["metadata"]["name"].startswith("web-")
    assert api.get(coll).json()["items"] == []
    event = first_event_after(api, coll, rv, lambda: api.post(coll, json=pod("web")))
    assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "web"


def test_create_errors_are_returned_under_dry_run(api: httpx.Client, ns: str) -> None:
    coll = f"/api/v1/namespaces/{ns}/pods"
    assert api.post(coll, json=pod("there")).status_code == 201
    with untouched(api, coll, f"{coll}/there", f"{coll}/bad"):
        bad = pod("bad")
        del bad["spec"]["containers"][0]["image"]
        r = api.post(coll, json=bad, params=DRY)
        assert r.status_code == 422 and r.json()["reason"] == "Invalid", r.text
        assert "spec.containers[0].image: Required value" in r.json()["message"]
        r = api.post(coll, json=pod("there"), params=DRY)
        assert r.status_code == 409 and r.json()["reason"] == "AlreadyExists"
        r = api.post("/api/v1/namespaces/no-such-ns/pods", json=pod("x"), params=DRY)  # admission
        assert r.status_code == 404 and r.json()["message"] == 'namespaces "no-such-ns" not found'


# -- update and patch ----------------------------------------------------------------------------
def test_put_and_every_patch_type_answer_the_change_and_store_nothing(api: httpx.Client, ns: str) -> None:
    coll = f"/apis/apps/v1/namespaces/{ns}/deployments"
    url = f"{coll}/d"
    stored = api.post(coll, json=deployment("d")).json()
    rv, gen = stored["metadata"]["resourceVersion"], stored["metadata"]["generation"]
    with untouched(api, coll, url) as list_rv:
        body = json.loads(json.dumps(stored))
        body["spec"]["replicas"] = 7
        r = api.put(url, json=body, params=DRY)
        assert r.status_code == 200, r.text
        assert r.json()["spec"]["replicas"] == 7 and r.json()["metadata"]["generation"] == gen + 1
        assert r.json()["metadata"]["resourceVersion"] == rv
        patches = [
            (MERGE, {"spec": {"replicas": 8}}),
            (STRATEGIC, {"spec": {"replicas": 8}}),
            (JSON_PATCH, [{"op": "replace", "path": "/spec/replicas", "value": 8}]),
        ]
        for headers, patch in patches:
            r = api.patch(url, content=json.dumps(patch), headers=headers, params=DRY)
            assert r.status_code == 200, r.text
            assert r.json()["spec"]["replicas"] == 8 and r.json()["metadata"]["resourceVersion"] == rv
        bad = api.patch(url, content=json.dumps({"spec": {"replicas": -1}}), headers=MERGE, params=DRY)
        assert bad.status_code == 422 and "spec.replicas" in bad.json()["message"]
        stale = api.patch(url, content='{"metadata":{"resourceVersion":"1"}}', headers=MERGE, params=DRY)
        assert stale.status_code == 409
    event = first_event_after(api, coll, list_rv, _label(api, url))
    assert event["type"] == "MODIFIED" and event["object"]["metadata"]["labels"] == {"real": "write"}
    assert event["object"]["spec"]["replicas"] == 2


def test_status_and_scale_subresources(api: httpx.Client, ns: str) -> None:
    coll = f"/apis/apps/v1/namespaces/{ns}/deployments"
    url = f"{coll}/d"
    stored = api.post(coll, json=deployment("d")).json()
    with untouched(api, coll, url) as list_rv:
        body = json.loads(json.dumps(stored))
        body["status"] = {"replicas": 2, "readyReplicas": 1}
        r = api.put(f"{url}/status", json=body, params=DRY)
        assert r.status_code == 200 and r.json()["status"]["readyReplicas"] == 1, r.text
        r = api.patch(f"{url}/status", content='{"status":{"readyReplicas":2}}', headers=MERGE, params=DRY)
        assert r.status_code == 200 and r.json()["status"]["readyReplicas"] == 2, r.text
        scale = api.get(f"{url}/scale").json()
        scale["spec"]["replicas"] = 9
        r = api.put(f"{url}/scale", json=scale, params=DRY)
        assert r.status_code == 200 and r.json()["spec"]["replicas"] == 9, r.text
        r = api.patch(f"{url}/scale", content='{"spec":{"replicas":4}}', headers=MERGE, params=DRY)
        assert r.status_code == 200 and r.json()["spec"]["replicas"] == 4, r.text
        r = api.patch(f"{url}/scale", content='{"spec":{"replicas":-4}}', headers=MERGE, params=DRY)
        assert r.status_code == 422
    assert first_event_after(api, coll, list_rv, _label(api, url))["type"] == "MODIFIED"


# -- delete --------------------------------------------------------------------------------------
def test_delete_answers_as_the_delete_would(api: httpx.Client, ns: str) -> None:
    coll = f"/api/v1/namespaces/{ns}/configmaps"
    api.post(coll, json={"metadata": {"name": "plain"}})
    api.post(coll, json={"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    with untouched(api, coll, f"{coll}/plain", f"{coll}/held") as list_rv:
        r = api.delete(f"{coll}/plain", params=DRY)
        assert r.status_code == 200 and r.json()["status"] == "Success", r.text
        # kubectl sends dryRun in the DeleteOptions body
        r = api.request("DELETE", f"{coll}/held", json={"kind": "DeleteOptions", "dryRun": ["All"]})
        assert r.status_code == 200 and r.json()["metadata"]["deletionTimestamp"], r.text
        r = api.request("DELETE", f"{coll}/plain", json={"dryRun": ["All"], "preconditions": {"uid": "nope"}})
        assert r.status_code == 409
        r = api.request("DELETE", coll, params={**DRY})
        assert r.status_code == 200 and {i["metadata"]["name"] for i in r.json()["items"]} == {"plain", "held"}
    event = first_event_after(api, coll, list_rv, _label(api, f"{coll}/plain"))
    assert event["type"] == "MODIFIED" and event["object"]["metadata"]["name"] == "plain"


def test_delete_of_a_running_pod_and_the_pod_subresources(api: httpx.Client, ns: str) -> None:
    coll = f"/api/v1/namespaces/{ns}/pods"
    api.post(coll, json=pod("free"))
    api.post(coll, json=pod("bound"))
    assert api.post(f"{coll}/bound/binding", json={"target": {"kind": "Node", "name": "n1"}}).status_code == 201
    with untouched(api, coll, f"{coll}/free", f"{coll}/bound") as list_rv:
        r = api.delete(f"{coll}/bound", params=DRY)
        assert r.status_code == 200 and r.json()["metadata"]["deletionGracePeriodSeconds"] == 30, r.text
        r = api.post(f"{coll}/free/binding", json={"target": {"kind": "Node", "name": "n1"}}, params=DRY)
        assert r.status_code == 201, r.text
        r = api.post(f"{coll}/bound/binding", json={"target": {"kind": "Node", "name": "n2"}}, params=DRY)
        assert r.status_code == 409
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "free"}}
        r = api.post(f"{coll}/free/eviction", json={**eviction, "deleteOptions": {"dryRun": ["All"]}})
        assert r.status_code == 201, r.text
        r = api.post(f"{coll}/free/eviction", json=eviction, params=DRY)
        assert r.status_code == 201, r.text
        r = api.post(f"{coll}/free/eviction", json={**eviction, "deleteOptions": {"dryRun": ["x"]}}, params=DRY)
        assert r.status_code == 400 and "Non-matching dry-run options" in r.json()["message"]
    assert first_event_after(api, coll, list_rv, _label(api, f"{coll}/free"))["object"]["metadata"]["name"] == "free"


def test_namespace_delete_and_finalize(api: httpx.Client, ns: str) -> None:
    url = f"/api/v1/namespaces/{ns}"
    with untouched(api, "/api/v1/namespaces", url) as list_rv:
        r = api.delete(url, params=DRY)
        assert r.status_code == 200 and r.json()["status"]["phase"] == "Terminating", r.text
        r = api.put(f"{url}/finalize", json={"metadata": {"name": ns}, "spec": {"finalizers": []}}, params=DRY)
        assert r.status_code == 200 and "finalizers" not in r.json()["spec"], r.text
    event = first_event_after(api, "/api/v1/namespaces", list_rv, _label(api, url))
    assert event["object"]["metadata"]["name"] == ns


# -- services: nothing is allocated ------------------------------------------------------------
def _svc(name: str, *, cluster_ip: str | None = None, node_port: int | None = None) -> dict:
    port: dict = {"port": 80}
    spec: dict = {"type": "NodePort" if node_port else "ClusterIP", "selector": {"app": name}, "ports": [port]}
    if node_port:
        port["nodePort"] = node_port
    if cluster_ip:
        spec["clusterIP"] = cluster_ip
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def test_service_dry_runs_neither_take_nor_release_ips_and_ports(api: httpx.Client, ns: str) -> None:
    coll = f"/api/v1/namespaces/{ns}/services"
    with untouched(api, coll, f"{coll}/a", f"{coll}/b"):
        r = api.post(coll, json=_svc("a", cluster_ip="10.96.200.1", node_port=31001), params=DRY)
        assert r.status_code == 201, r.text
        assert r.json()["spec"]["clusterIP"] == "10.96.200.1" and r.json()["spec"]["ports"][0]["nodePort"] == 31001
        picked = api.post(coll, json=_svc("b", node_port=None), params=DRY).json()["spec"]["clusterIP"]
    # what the dry runs answered is still free: the same requests succeed for real
    assert api.post(coll, json=_svc("a", cluster_ip="10.96.200.1", node_port=31001)).status_code == 201
    assert api.post(coll, json=_svc("b", cluster_ip=picked)).status_code == 201
    # and what real services hold is still held after dry runs that would release it
    with untouched(api, coll, f"{coll}/a", f"{coll}/b"):
        taken = api.post(coll, json=_svc("c", cluster_ip="10.96.200.1"), params=DRY)
        assert taken.status_code == 422 and "provided IP is already allocated" in taken.json()["message"]
        to_cluster_ip = {"spec": {"type": "ClusterIP", "ports": [{"port": 80, "nodePort": None}]}}
        r = api.patch(f"{coll}/a", content=json.dumps(to_cluster_ip), headers=MERGE, params=DRY)
        assert r.status_code == 200 and "nodePort" not in r.json()["spec"]["ports"][0], r.text
        assert api.delete(f"{coll}/a", params=DRY).status_code == 200
    r = api.post(coll, json=_svc("d", node_port=31001))
    assert r.status_code == 422 and "provided port is already allocated" in r.json()["message"]
    r = api.post(coll, json=_svc("d", cluster_ip="10.96.200.1"))
    assert r.status_code == 422 and "provided IP is already allocated" in r.json()["message"]


# -- the parameter itself ----------------------------------------------------------------------
def test_unknown_dry_run_values_are_refused_before_anything_happens(api: httpx.Client, ns: str) -> None:
    coll = f"/api/v1/namespaces/{ns}/configmaps"
    api.post(coll, json={"metadata": {"name": "cm"}})
    url = f"{coll}/cm"
    with untouched(api, coll, url, f"{coll}/new"):
        cases = [
            ("POST", coll, "CreateOptions", {"json": {"metadata": {"name": "new"}}}),
            ("PUT", url, "UpdateOptions", {"json": {"metadata": {"name": "cm"}, "data": {"a": "b"}}}),
            ("PATCH", url, "PatchOptions", {"content": '{"data":{"a":"b"}}', "headers": MERGE}),
            ("DELETE", url, "DeleteOptions", {}),
            ("DELETE", coll, "DeleteOptions", {}),
        ]
        for method, target, kind, kwargs in cases:
            r = api.request(method, target, params={"dryRun": "server"}, **kwargs)
            assert r.status_code == 422, (method, r.text)
            assert r.json()["message"] == (
                f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{{"server"}}: '
                'supported values: "All"'
            )
            assert r.json()["details"]["causes"] == [
                {
                    "reason": "FieldValueNotSupported",
                    "message": 'Unsupported value: []string{"server"}: supported values: "All"',
                    "field": "dryRun",
                }
            ]
        r = api.post(coll, json={"metadata": {"name": "new"}}, params=[("dryRun", "All"), ("dryRun", "x")])
        assert r.status_code == 422 and '[]string{"All", "x"}' in r.json()["message"]
        r = api.request("DELETE", url, json={"dryRun": ["All", ""]})
        assert r.status_code == 422 and '[]string{"All", ""}' in r.json()["message"]
        r = api.post(coll, json={"metadata": {"name": "new"}}, params=[("dryRun", "All"), ("dryRun", "All")])
        assert r.status_code == 201


# -- preconditions -------------------------------------------------------------------------------
def test_put_changing_the_uid_is_a_precondition_conflict(api: httpx.Client, ns: str) -> None:
    coll = f"/api/v1/namespaces/{ns}/configmaps"
    cm = api.post(coll, json={"metadata": {"name": "cm"}}).json()
    uid = cm["metadata"]["uid"]
    with untouched(api, coll, f"{coll}/cm"):
        for params in ({}, DRY):
            body = {**cm, "metadata": {**cm["metadata"], "uid": "other-uid"}, "data": {"a": "b"}}
            r = api.put(f"{coll}/cm", json=body, params=params)
            assert r.status_code == 409 and r.json()["reason"] == "Conflict"
            assert r.json()["message"] == (
                f'Operation cannot be fulfilled on configmaps "cm": StorageError: invalid object, Code: 4, '
                f"Key: /registry/configmaps/{ns}/cm, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
                f"UID in precondition: other-uid, UID in object meta: {uid}"
            )
    body = {**cm, "metadata": {**cm["metadata"], "uid": uid}, "data": {"a": "b"}}
    assert api.put(f"{coll}/cm", json=body).status_code == 200


def test_delete_preconditions(api: httpx.Client, ns: str) -> None:
    coll = f"/apis/apps/v1/namespaces/{ns}/deployments"
    d = api.post(coll, json=deployment("d")).json()
    uid, rv = d["metadata"]["uid"], d["metadata"]["resourceVersion"]
    with untouched(api, coll, f"{coll}/d"):
        r = api.request("DELETE", f"{coll}/d", json={"preconditions": {"uid": "nope"}})
        assert r.status_code == 409 and r.json()["message"] == (
            f'Operation cannot be fulfilled on Deployment.apps "d": the UID in the precondition (nope) does not '
            f"match the UID in record ({uid}). The object might have been deleted and then recreated"
        )
        r = api.request("DELETE", f"{coll}/d", json={"preconditions": {"uid": uid, "resourceVersion": "1"}})
        assert r.status_code == 409 and r.json()["message"].endswith(
            f"AdditionalErrorMsg: Precondition failed: ResourceVersion in precondition: 1, "
            f"ResourceVersion in object meta: {rv}"
        )
    r = api.request("DELETE", f"{coll}/d", json={"preconditions": {"uid": uid, "resourceVersion": rv}})
    assert r.status_code == 200 and r.json()["status"] == "Success"
