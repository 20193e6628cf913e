"""Deleting a Deployment with each propagation policy, with every controller running (`--controllers=*`).

The Deployment owns ReplicaSets, which own pods; the garbage collector follows those
ownerReferences. Background: the owner goes at once and the GC removes the dependents after it.
Orphan: the dependents stay and lose the reference to the deleted owner. Foreground: the owner stays
(with the `foregroundDeletion` finalizer) until every dependent is gone, and only then disappears —
observed here through one watch, so the order of the DELETED events is the proof.
"""

from __future__ import annotations

import json
import threading
import uuid

import httpx
import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for

APPS = "/apis/apps/v1/namespaces/default"


@pytest.fixture(scope="module")
def all_controllers(start_manager) -> ComponentProcess:  # type: ignore[no-untyped-def]
    return start_manager(controllers="*")


def _deployment(api: httpx.Client, name: str, replicas: int = 2) -> None:
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}  # fmt: skip
    assert api.post(f"{APPS}/deployments", json=body).status_code == 201
    wait_for(lambda: len(_pods(api, name)) == replicas and _replica_sets(api, name), what=f"{name}'s pods")


def _pods(api: httpx.Client, app: str) -> list[dict]:
    return api.get("/api/v1/namespaces/default/pods", params={"labelSelector": f"app={app}"}).json()["items"]


def _replica_sets(api: httpx.Client, app: str) -> list[dict]:
    return api.get(f"{APPS}/replicasets", params={"labelSelector": f"app={app}"}).json()["items"]


def _delete(api: httpx.Client, name: str, policy: str) -> None:
    r = api.request("DELETE", f"{APPS}/deployments/{name}", json={"propagationPolicy": policy})
    assert r.status_code in (200, 202), r.text


def test_background_deletion_removes_replica_sets_and_pods(api, all_controllers):  # type: ignore[no-untyped-def]
    name = f"bg-{uuid.uuid4().hex[:6]}"
    _deployment(api, name)
    _delete(api, name, "Background")
    assert api.get(f"{APPS}/deployments/{name}").status_code == 404
    wait_for(lambda: not _replica_sets(api, name) and not _pods(api, name), what="dependents collected")


def test_orphan_deletion_keeps_dependents_and_strips_the_reference(api, all_controllers):  # type: ignore[no-untyped-def]
    name = f"or-{uuid.uuid4().hex[:6]}"
    _deployment(api, name)
    _delete(api, name, "Orphan")
    wait_for(lambda: api.get(f"{APPS}/deployments/{name}").status_code == 404, what="the deployment gone")
    wait_for(lambda: all(not rs["metadata"].get("ownerReferences") for rs in _replica_sets(api, name)),
             what="ReplicaSets orphaned")  # fmt: skip
    assert len(_replica_sets(api, name)) == 1 and len(_pods(api, name)) == 2
    # The same for a ReplicaSet and its pods: the pods stay and lose their ownerReferences.
    rs = _replica_sets(api, name)[0]["metadata"]["name"]
    r = api.request("DELETE", f"{APPS}/replicasets/{rs}", json={"propagationPolicy": "Orphan"})
    assert r.status_code in (200, 202), r.text
    wait_for(lambda: not _replica_sets(api, name), what="the ReplicaSet gone")
    wait_for(lambda: all(not p["metadata"].get("ownerReferences") for p in _pods(api, name)), what="pods orphaned")
    assert len(_pods(api, name)) == 2


def test_foreground_deletion_removes_children_before_the_owner(
    api, apiserver: APIServerProcess, all_controllers  # type: ignore[no-untyped-def]
) -> None:
    name = f"fg-{uuid.uuid4().hex[:6]}"
    _deployment(api, name)
    deleted_at: list[tuple[int, str]] = []  # (resourceVersion of the DELETED event, kind)
    start = api.get("/api/v1/namespaces/default/pods").json()["metadata"]["resourceVersion"]

    def watch(path: str, kind: str, expect: int) -> None:
        """Record this kind's DELETED events for our objects until `expect` of them arrived."""
        seen = 0
        params = {"watch": "1", "resourceVersion": start, "timeoutSeconds": "20"}
        with httpx.Client(base_url=apiserver.url, timeout=30) as c, c.stream("GET", path, params=params) as r:
            for line in r.iter_lines():
                obj = json.loads(line)["object"] if line else {}
                md = obj.get("metadata") or {}
                ours = name in (md.get("name"), (md.get("labels") or {}).get("app"))
                if line and json.loads(line)["type"] == "DELETED" and ours:
                    deleted_at.append((int(md["resourceVersion"]), kind))
                    seen += 1
                    if seen == expect:
                        return

    watchers = [threading.Thread(target=watch, args=(f"{APPS}/deployments", "Deployment", 1)),
                threading.Thread(target=watch, args=(f"{APPS}/replicasets", "ReplicaSet", 1)),
                threading.Thread(target=watch, args=("/api/v1/namespaces/default/pods", "Pod", 2))]  # fmt: skip
    for t in watchers:
        t.start()
    _delete(api, name, "Foreground")
    owner = api.get(f"{APPS}/deployments/{name}")
    if owner.status_code == 200:  # still there, waiting for its dependents
        assert "foregroundDeletion" in owner.json()["metadata"]["finalizers"]
    for t in watchers:
        t.join(30)
    wait_for(lambda: api.get(f"{APPS}/deployments/{name}").status_code == 404, what="the deployment gone")
    assert not _replica_sets(api, name) and not _pods(api, name)
    # Three streams deliver independently, so order by the store's revision, not by arrival.
    deleted = [kind for _, kind in sorted(deleted_at)]
    assert deleted[-1] == "Deployment" and deleted.count("Pod") == 2 and "ReplicaSet" in deleted, deleted
