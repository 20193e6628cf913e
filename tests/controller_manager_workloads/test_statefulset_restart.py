"""A StatefulSet rolling update survives a SIGKILL of the controller-manager half-way (issue 13's
measure): after the restart the update goes on where it stopped, highest ordinal first, and every
ordinal is replaced exactly once — none skipped, none twice.

The order is read from the controller's own events ("delete Pod web-3 in StatefulSet web
successful"), which both processes write into the API server; their resourceVersions order them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.controller_manager_workloads.conftest import scheduler_and_kubelet
from tests.controller_manager_workloads.test_statefulset import MERGE, create_web, pod_events, sts_path, wait_running
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace

NEW_IMAGE = "nginx:1.25"


@pytest.fixture(scope="module")
def nodes(apiserver: APIServerProcess) -> Iterator[None]:
    with scheduler_and_kubelet(apiserver, "stsrestart", nodes=2):
        yield


def test_a_rollout_killed_half_way_resumes_without_skipping_or_repeating_an_ordinal(
    nodes: None, api: httpx.Client, start_manager: Callable[..., ComponentProcess]
) -> None:
    manager = start_manager(controllers="statefulset")
    ns = new_namespace(api, "sts-kill")
    uid = create_web(api, ns, replicas=5)["metadata"]["uid"]
    wait_running(api, ns, lambda r: len(r) == 5, "web-0 … web-4")

    patch = {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": NEW_IMAGE}]}}}}
    api.patch(sts_path(ns, "web"), content=json.dumps(patch), headers=MERGE)
    wait_for(lambda: len([m for m in pod_events(api, ns, uid) if m.startswith("delete")]) >= 2, timeout=60,
             what="two ordinals replaced")  # fmt: skip
    manager.kill()  # SIGKILL, half-way through the rollout
    before = [m for m in pod_events(api, ns, uid) if m.startswith("delete")]
    assert len(before) < 5, "the rollout finished before the kill: the test proved nothing"

    start_manager(controllers="statefulset")
    wait_running(api, ns, lambda r: len(r) == 5 and set(r.values()) == {NEW_IMAGE}, "all five updated")
    deleted = [m for m in pod_events(api, ns, uid) if m.startswith("delete")]
    assert deleted == [f"delete Pod web-{i} in StatefulSet web successful" for i in (4, 3, 2, 1, 0)], deleted

    def settled() -> dict | None:  # type: ignore[type-arg]
        status = api.get(sts_path(ns, "web")).json().get("status") or {}
        done = status.get("updatedReplicas") == 5 and status.get("currentRevision") == status.get("updateRevision")
        return status if done else None

    wait_for(settled, timeout=30, what="the status to say the rollout is complete")
