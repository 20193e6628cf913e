"""Deletion: immediate, graceful (pods on a node), held by finalizers, and propagation policies."""

from __future__ import annotations

import threading

import httpx

from tests.apiserver.conftest import deployment, pod


def _bind(api: httpx.Client, ns: str, name: str, node: str = "node-1") -> httpx.Response:
    return api.post(
        f"/api/v1/namespaces/{ns}/pods/{name}/binding",
        json={
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        },
    )


def test_unbound_pod_is_deleted_at_once(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p"))
    r = api.delete(f"/api/v1/namespaces/{ns}/pods/p")
    assert r.status_code == 200
    assert api.get(f"/api/v1/namespaces/{ns}/pods/p").status_code == 404


def test_binding_sets_node_once(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p"))
    assert _bind(api, ns, "p").status_code == 201
    p = api.get(f"/api/v1/namespaces/{ns}/pods/p").json()
    assert p["spec"]["nodeName"] == "node-1"
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in p["status"]["conditions"])
    again = _bind(api, ns, "p", "node-2")
    assert again.status_code == 409


def test_bound_pod_waits_for_its_kubelet_then_grace_zero_removes_it(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p"))
    _bind(api, ns, "p")
    r = api.delete(f"/api/v1/namespaces/{ns}/pods/p")
    assert r.status_code == 200
    p = api.get(f"/api/v1/namespaces/{ns}/pods/p").json()
    assert p["metadata"]["deletionTimestamp"] and p["metadata"]["deletionGracePeriodSeconds"] == 30
    r = api.delete(f"/api/v1/namespaces/{ns}/pods/p", params={"gracePeriodSeconds": 0})
    assert r.status_code == 200
    assert api.get(f"/api/v1/namespaces/{ns}/pods/p").status_code == 404


def test_finalizer_holds_the_object_until_removed(api: httpx.Client, ns: str) -> None:
    api.post(
        f"/api/v1/namespaces/{ns}/configmaps",
        json={"metadata": {"name": "held", "finalizers": ["example.com/cleanup"]}},
    )
    r = api.delete(f"/api/v1/namespaces/{ns}/configmaps/held")
    assert r.status_code == 200 and r.json()["metadata"]["deletionTimestamp"]  # the object, still there
    cm = api.get(f"/api/v1/namespaces/{ns}/configmaps/held").json()
    assert cm["metadata"]["deletionTimestamp"]
    r = api.patch(
        f"/api/v1/namespaces/{ns}/configmaps/held",
        json={"metadata": {"finalizers": None}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    assert api.get(f"/api/v1/namespaces/{ns}/configmaps/held").status_code == 404


def test_propagation_policies_are_recorded_as_finalizers(api: httpx.Client, ns: str) -> None:
    for name, policy, finalizer in (("o", "Orphan", "orphan"), ("f", "Foreground", "foregroundDeletion")):
        api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment(name))
        r = api.request(
            "DELETE",
            f"/apis/apps/v1/namespaces/{ns}/deployments/{name}",
            json={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy},
        )
        assert r.status_code == 200, r.text
        d = api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}").json()
        assert d["metadata"]["finalizers"] == [finalizer] and d["metadata"]["deletionTimestamp"]
    api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("b"))
    r = api.delete(f"/apis/apps/v1/namespaces/{ns}/deployments/b", params={"propagationPolicy": "Background"})
    assert r.status_code == 200 and r.json()["status"] == "Success"
    assert api.get(f"/apis/apps/v1/namespaces/{ns}/deployments/b").status_code == 404


def test_precondition_uid_mismatch_is_conflict(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "cm"}})
    r = api.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/cm", json={"preconditions": {"uid": "nope"}})
    assert r.status_code == 409
    assert api.get(f"/api/v1/namespaces/{ns}/configmaps/cm").status_code == 200


def test_deletecollection_by_label(api: httpx.Client, ns: str) -> None:
    for i in range(3):
        api.post(f"/api/v1/namespaces/{ns}/pods", json=pod(f"a{i}", labels={"tier": "a"}))
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("b0", labels={"tier": "b"}))
    r = api.delete(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": "tier=a"})
    assert r.status_code == 200 and len(r.json()["items"]) == 3
    left = [p["metadata"]["name"] for p in api.get(f"/api/v1/namespaces/{ns}/pods").json()["items"]]
    assert left == ["b0"]


def test_eviction_deletes_the_pod(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p"))
    r = api.post(
        f"/api/v1/namespaces/{ns}/pods/p/eviction",
        json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p", "namespace": ns}},
    )
    assert r.status_code == 201, r.text
    assert api.get(f"/api/v1/namespaces/{ns}/pods/p").status_code == 404


def test_namespace_deletion_terminates_and_blocks_new_content(api: httpx.Client, ns: str) -> None:
    r = api.delete(f"/api/v1/namespaces/{ns}")
    assert r.status_code == 200
    assert r.json()["status"]["phase"] == "Terminating"
    r = api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "late"}})
    assert r.status_code == 403 and "is being terminated" in r.json()["message"]
    r = api.put(
        f"/api/v1/namespaces/{ns}/finalize",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}, "spec": {"finalizers": []}},
    )
    assert r.status_code == 200, r.text
    assert api.get(f"/api/v1/namespaces/{ns}").status_code == 404


def test_system_namespace_cannot_be_deleted(api: httpx.Client) -> None:
    r = api.delete("/api/v1/namespaces/kube-system")
    assert r.status_code == 403
    assert api.get("/api/v1/namespaces/kube-system").json()["status"]["phase"] == "Active"


def test_create_in_missing_namespace_is_not_found(api: httpx.Client) -> None:
    r = api.post("/api/v1/namespaces/does-not-exist/pods", json=pod("p"))
    assert r.status_code == 404 and r.json()["message"] == 'namespaces "does-not-exist" not found'


def test_delete_retries_when_a_writer_changes_the_object_meanwhile(api: httpx.Client, ns: str) -> None:
    """A controller writing an object between the server's read and its delete must not turn a
    plain DELETE into a 409: only the client's own resourceVersion precondition may."""
    base = f"{str(api.base_url).rstrip('/')}/api/v1/namespaces/{ns}/configmaps"
    merge = {"Content-Type": "application/merge-patch+json"}
    for i in range(20):
        name = f"busy-{i}"
        assert api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": name}}).status_code == 201
        stop, writing = threading.Event(), threading.Barrier(5)

        def writer(name: str = name, stop: threading.Event = stop, writing: threading.Barrier = writing) -> None:
            with httpx.Client(timeout=10) as c:
                n = 0
                while not stop.is_set():
                    n += 1
                    try:
                        c.patch(f"{base}/{name}", json={"data": {"n": str(n)}}, headers=merge)
                    finally:
                        if n == 1:
                            writing.wait(timeout=30)

        threads = [threading.Thread(target=writer) for _ in range(4)]
        for t in threads:
            t.start()
        writing.wait(timeout=30)  # every writer is writing: the delete races them
        try:
            r = api.delete(f"/api/v1/namespaces/{ns}/configmaps/{name}")
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert r.status_code == 200, r.text
    stale = api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "pinned"}}).json()
    api.patch(f"/api/v1/namespaces/{ns}/configmaps/pinned", json={"data": {"a": "b"}}, headers=merge)
    pinned = {"preconditions": {"resourceVersion": stale["metadata"]["resourceVersion"]}}
    assert api.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps/pinned", json=pinned).status_code == 409
