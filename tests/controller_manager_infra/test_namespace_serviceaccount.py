"""The namespace controller empties and finalizes Terminating namespaces; the service account
controller keeps a `default` ServiceAccount in every live namespace."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.controller_manager_infra.conftest import start_manager
from tests.controller_manager_infra.helpers import Cluster
from tests.support.apiserver import APIServerProcess
from tests.support.component import wait_for


@pytest.fixture(scope="module")
def c(apiserver: APIServerProcess) -> Iterator[Cluster]:
    cm = start_manager(apiserver, "namespace,serviceaccount")
    try:
        yield Cluster(apiserver, cm)
    finally:
        cm.stop()


def test_every_namespace_gets_a_default_service_account_and_gets_it_back_when_deleted(c):
    c.namespace("sa-team")
    path = "/api/v1/namespaces/sa-team/serviceaccounts/default"
    first = wait_for(lambda: c.get(path), timeout=15, what="default service account")
    c.delete(path)
    wait_for(
        lambda: (c.get(path) or {}).get("metadata", {}).get("uid") not in (None, first["metadata"]["uid"]),
        timeout=10,
        what="default service account recreated",
    )
    assert c.get("/api/v1/namespaces/kube-system/serviceaccounts/default") is not None


def test_deleting_a_namespace_deletes_its_content_waits_for_it_then_removes_the_namespace(c):
    ns = "doomed"
    c.namespace(ns)
    c.post(
        f"/api/v1/namespaces/{ns}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "1"}},
    )
    c.post(
        f"/api/v1/namespaces/{ns}/secrets", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    )
    c.post(
        f"/api/v1/namespaces/{ns}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc"},
            "spec": {"ports": [{"port": 80}]},
        },
    )
    c.pod("loose", namespace=ns)
    c.pod("running", namespace=ns, node="some-node", grace=30)  # its "kubelet" is this test
    wait_for(lambda: c.get(f"/api/v1/namespaces/{ns}/serviceaccounts/default"), timeout=15, what="default SA")

    c.delete(f"/api/v1/namespaces/{ns}")
    assert c.get(f"/api/v1/namespaces/{ns}")["status"]["phase"] == "Terminating"

    def only_the_running_pod_remains() -> bool:
        return (
            not c.items(f"/api/v1/namespaces/{ns}/configmaps")
            and not c.items(f"/api/v1/namespaces/{ns}/secrets")
            and not c.items(f"/api/v1/namespaces/{ns}/services")
            and not c.items(f"/api/v1/namespaces/{ns}/serviceaccounts")
            and [p["metadata"]["name"] for p in c.items(f"/api/v1/namespaces/{ns}/pods")] == ["running"]
        )

    wait_for(only_the_running_pod_remains, timeout=15, what="content deleted but the running pod")
    pod = c.get(f"/api/v1/namespaces/{ns}/pods/running")
    assert pod["metadata"].get("deletionTimestamp"), "the pod is being terminated gracefully"

    def remaining_condition() -> dict:
        conds = (c.get(f"/api/v1/namespaces/{ns}") or {}).get("status", {}).get("conditions") or []
        return next(
            (x for x in conds if x["type"] == "NamespaceContentRemaining" and x["status"] == "True"), {}
        )

    cond = wait_for(remaining_condition, timeout=10, what="NamespaceContentRemaining")
    assert cond["reason"] == "SomeResourcesRemain"
    assert cond["message"] == "Some resources are remaining: pods. has 1 resource instances"
    assert c.get(f"/api/v1/namespaces/{ns}") is not None, "the namespace waits for its pods"

    # The kubelet finishes the pod's termination; then nothing holds the namespace any more.
    c.delete(f"/api/v1/namespaces/{ns}/pods/running", gracePeriodSeconds=0)
    wait_for(lambda: c.get(f"/api/v1/namespaces/{ns}") is None, timeout=15, what="namespace removed")
