"""The garbage collector: background, foreground and orphan deletion through ownerReferences.

Owners here are hand-made (ConfigMaps, Secrets) and no workload controller runs, so nothing but the
garbage collector deletes or recreates anything."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.controller_manager_infra.conftest import start_manager
from tests.controller_manager_infra.helpers import Cluster, owner_ref
from tests.support.apiserver import APIServerProcess
from tests.support.component import wait_for


@pytest.fixture(scope="module")
def c(apiserver: APIServerProcess) -> Iterator[Cluster]:
    cm = start_manager(apiserver, "garbagecollector")
    try:
        yield Cluster(apiserver, cm)
    finally:
        cm.stop()


def configmap(c: Cluster, ns: str, name: str, owners: list[dict] | None = None) -> dict:
    meta: dict = {"name": name, "namespace": ns}
    if owners:
        meta["ownerReferences"] = owners
    return c.post(
        f"/api/v1/namespaces/{ns}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    )


def cm_path(ns: str, name: str) -> str:
    return f"/api/v1/namespaces/{ns}/configmaps/{name}"


def test_background_deletion_removes_dependents_whose_owners_are_all_gone(c):
    ns = "gc-bg"
    c.namespace(ns)
    owner = configmap(c, ns, "owner")
    other = configmap(c, ns, "other-owner")
    c.pod("child-1", namespace=ns, owner=owner_ref(owner, controller=True))
    c.pod("child-2", namespace=ns, owner=owner_ref(owner, controller=True))
    shared = configmap(c, ns, "shared", owners=[owner_ref(owner), owner_ref(other)])

    c.delete(cm_path(ns, "owner"), propagationPolicy="Background")
    wait_for(
        lambda: not c.items(f"/api/v1/namespaces/{ns}/pods"),
        timeout=15,
        what="both children garbage collected",
    )

    def shared_lost_its_dead_owner() -> bool:
        refs = (c.get(cm_path(ns, "shared")) or {}).get("metadata", {}).get("ownerReferences") or []
        return [r["uid"] for r in refs] == [other["metadata"]["uid"]]

    wait_for(shared_lost_its_dead_owner, timeout=10, what="the dangling reference dropped, the object kept")
    assert c.get(cm_path(ns, "shared"))["metadata"]["uid"] == shared["metadata"]["uid"]


def test_an_object_whose_owner_never_existed_is_collected(c):
    ns = "gc-virtual"
    c.namespace(ns)
    ghost = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "ghost",
        "uid": "00000000-dead-beef-0000-000000000000",
    }
    c.pod("haunted", namespace=ns, owner=ghost)
    wait_for(
        lambda: c.get(f"/api/v1/namespaces/{ns}/pods/haunted") is None,
        timeout=15,
        what="haunted pod collected",
    )


def test_foreground_deletion_waits_for_blocking_dependents_down_the_chain(c):
    ns = "gc-fg"
    c.namespace(ns)
    top = configmap(c, ns, "top")
    middle = c.post(
        f"/api/v1/namespaces/{ns}/secrets",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "middle", "ownerReferences": [owner_ref(top, block=True)]},
        },
    )
    configmap(c, ns, "leaf", owners=[owner_ref(middle, block=True)])
    # A pod on a node terminates gracefully: it lingers until its "kubelet" (this test) finishes it.
    c.pod("worker", namespace=ns, node="n1", grace=30, owner=owner_ref(top, block=True))

    c.delete(cm_path(ns, "top"), propagationPolicy="Foreground")
    assert "foregroundDeletion" in c.get(cm_path(ns, "top"))["metadata"]["finalizers"]
    wait_for(lambda: c.get(cm_path(ns, "leaf")) is None, timeout=15, what="leaf deleted")
    wait_for(
        lambda: c.get(f"/api/v1/namespaces/{ns}/secrets/middle") is None, timeout=10, what="middle deleted"
    )
    wait_for(
        lambda: (
            (c.get(f"/api/v1/namespaces/{ns}/pods/worker") or {}).get("metadata", {}).get("deletionTimestamp")
        ),
        timeout=10,
        what="worker terminating",
    )
    assert c.get(cm_path(ns, "top")) is not None, "the owner waits for its blocking pod"

    c.delete(f"/api/v1/namespaces/{ns}/pods/worker", gracePeriodSeconds=0)
    wait_for(lambda: c.get(cm_path(ns, "top")) is None, timeout=15, what="owner deleted after its dependents")


def test_orphan_deletion_keeps_dependents_and_strips_their_owner_references(c):
    ns = "gc-orphan"
    c.namespace(ns)
    owner = configmap(c, ns, "owner")
    other = configmap(c, ns, "other")
    c.pod("kept", namespace=ns, owner=owner_ref(owner, controller=True, block=True))
    configmap(c, ns, "kept-too", owners=[owner_ref(owner), owner_ref(other)])

    c.delete(cm_path(ns, "owner"), propagationPolicy="Orphan")
    wait_for(lambda: c.get(cm_path(ns, "owner")) is None, timeout=15, what="owner deleted")
    pod = c.get(f"/api/v1/namespaces/{ns}/pods/kept")
    assert pod is not None and not pod["metadata"].get("ownerReferences")
    refs = c.get(cm_path(ns, "kept-too"))["metadata"]["ownerReferences"]
    assert [r["name"] for r in refs] == ["other"]
