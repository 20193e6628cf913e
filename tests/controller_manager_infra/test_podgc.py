"""The pod garbage collector: too many finished pods, and pods bound to nodes that do not exist."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.controller_manager_infra.conftest import start_manager
from tests.controller_manager_infra.helpers import Cluster, FakeKubelet
from tests.support.apiserver import APIServerProcess
from tests.support.component import wait_for


@pytest.fixture(scope="module")
def c(apiserver: APIServerProcess) -> Iterator[Cluster]:
    cm = start_manager(apiserver, "podgc", "--terminated-pod-gc-threshold", "2")
    try:
        yield Cluster(apiserver, cm)
    finally:
        cm.stop()


def names(c: Cluster, ns: str) -> set[str]:
    return {p["metadata"]["name"] for p in c.items(f"/api/v1/namespaces/{ns}/pods")}


def test_terminated_pods_beyond_the_threshold_are_deleted_oldest_first(c):
    ns = "gc-finished"
    c.namespace(ns)
    for i, phase in enumerate(["Succeeded", "Failed", "Succeeded", "Failed"]):
        pod = c.pod(f"done-{i}", namespace=ns)
        c.set_pod_status(pod, ip=None, ready=False, phase=phase)
    c.pod("running", namespace=ns)
    wait_for(lambda: names(c, ns) == {"done-2", "done-3", "running"}, timeout=15, what="two oldest collected")


def test_pods_on_a_node_that_does_not_exist_are_deleted_after_the_quarantine(c):
    ns = "gc-orphans"
    c.namespace(ns)
    FakeKubelet(c, "real-node").register()
    c.pod("on-ghost", namespace=ns, node="ghost-node", grace=30)
    c.pod("on-real", namespace=ns, node="real-node", grace=30)
    wait_for(lambda: names(c, ns) == {"on-real"}, timeout=15, what="pod on the missing node force-deleted")
    assert "PodGC is force deleting Pod: gc-orphans/on-ghost" in c.cm.log_tail(400)
