"""The pure rules under the workload controllers: surge arithmetic, template hashes, revision
annotations, which pod goes first, and expectations. No processes needed: these are functions."""

from __future__ import annotations

import re
from typing import Any

import pytest

from controller_manager.controllers import deployment_util as du
from controller_manager.controllers.expectations import ControllerExpectations
from controller_manager.controllers.pod_util import deletion_order, is_available


def deployment(replicas: int, surge: Any = "25%", unavailable: Any = "25%", **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "d", "generation": 1, **meta},
        "spec": {
            "replicas": replicas,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "expected"),
    [
        (10, "25%", "25%", (3, 2)),  # surge rounds up, unavailable rounds down
        (2, "25%", "25%", (1, 0)),
        (1, "25%", "25%", (1, 0)),
        (3, 0, "10%", (0, 1)),  # both would be 0: unavailable becomes 1 so the rollout can move
        (4, 2, 1, (2, 1)),
        (1000, "25%", "25%", (250, 250)),
    ],
)
def test_max_surge_rounds_up_and_max_unavailable_rounds_down(
    replicas: int, surge: Any, unavailable: Any, expected: tuple[int, int]
) -> None:
    d = deployment(replicas, surge, unavailable)
    assert (du.max_surge(d), du.max_unavailable(d)) == expected


def test_recreate_has_no_surge_and_no_unavailability_budget() -> None:
    d = deployment(4)
    d["spec"]["strategy"] = {"type": "Recreate"}
    assert (du.max_surge(d), du.max_unavailable(d)) == (0, 0)
    assert du.new_rs_new_replicas(d, [], {"spec": {"replicas": 0}}) == 4


def test_new_replica_set_grows_only_up_to_replicas_plus_surge() -> None:
    d = deployment(4, 1, 0)
    old = {"spec": {"replicas": 4}, "status": {"replicas": 4}}
    new = {"spec": {"replicas": 0}}
    assert du.new_rs_new_replicas(d, [old, new], new) == 1
    old_shrinking = {"spec": {"replicas": 3}, "status": {"replicas": 4}}  # a pod not yet deleted still counts
    assert du.new_rs_new_replicas(d, [old_shrinking, {"spec": {"replicas": 1}}], {"spec": {"replicas": 1}}) == 1


def test_template_hash_is_stable_safe_encoded_and_changes_with_collisions() -> None:
    template = deployment(1)["spec"]["template"]
    h = du.compute_hash(template, None)
    assert re.fullmatch("[bcdfghjklmnpqrstvwxz2456789]{6,10}", h)
    assert du.compute_hash({**template, "metadata": {**template["metadata"], "creationTimestamp": None}}, None) == h
    assert du.compute_hash(template, 1) != h
    other = deployment(1)["spec"]["template"]
    other["spec"]["containers"][0]["image"] = "y"
    assert du.compute_hash(other, None) != h


def test_templates_are_compared_without_the_pod_template_hash_label() -> None:
    template = deployment(1)["spec"]["template"]
    in_rs = {**template, "metadata": {"labels": {"app": "d", "pod-template-hash": "abc"}}}
    assert du.equal_ignore_hash(in_rs, template)
    changed = {**in_rs, "spec": {"containers": [{"name": "c", "image": "z"}]}}
    assert not du.equal_ignore_hash(changed, template)


def test_revision_moves_forward_and_remembers_history() -> None:
    d = deployment(3, **{"annotations": {"kubernetes.io/change-cause": "undo", du.REVISION: "3"}})
    rs: dict[str, Any] = {"metadata": {"annotations": {du.REVISION: "1"}}}
    assert du.set_new_rs_annotations(d, rs, 3, exists=True)
    ann = rs["metadata"]["annotations"]
    assert (ann[du.REVISION], ann[du.REVISION_HISTORY], ann["kubernetes.io/change-cause"]) == ("3", "1", "undo")
    assert not du.set_new_rs_annotations(d, rs, 2, exists=True)  # never backwards
    fresh: dict[str, Any] = {"metadata": {}}
    du.set_new_rs_annotations(d, fresh, 1, exists=False)
    assert fresh["metadata"]["annotations"][du.MAX_REPLICAS] == "4"


def pod(name: str, node: str = "", phase: str = "Pending", ready: bool = False, created: str = "2024-01-01T00:00:00Z",
        ready_since: str = "2024-01-01T00:00:10Z", restarts: int = 0) -> dict[str, Any]:  # fmt: skip
    return {
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"nodeName": node} if node else {},
        "status": {
            "phase": phase,
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ready_since}
            ],
            "containerStatuses": [{"restartCount": restarts}],
        },
    }


def test_deletion_order_prefers_unscheduled_pending_notready_then_newest() -> None:
    pods = [
        pod("old-ready", "n1", "Running", True, created="2024-01-01T00:00:00Z"),
        pod("new-ready", "n2", "Running", True, created="2024-01-01T00:05:00Z"),
        pod("not-ready", "n3", "Running", False),
        pod("pending", "n4", "Pending"),
        pod("unscheduled"),
    ]
    order = [p["metadata"]["name"] for p in deletion_order(pods, pods)]
    assert order == ["unscheduled", "pending", "not-ready", "new-ready", "old-ready"]


def test_deletion_order_prefers_crowded_nodes_and_restarts() -> None:
    pods = [
        pod("alone", "n1", "Running", True),
        pod("crowd-a", "n2", "Running", True),
        pod("crowd-b", "n2", "Running", True),
    ]
    assert deletion_order(pods, pods)[0]["metadata"]["name"].startswith("crowd")
    flaky = [pod("steady", "n1", "Running", True), pod("flaky", "n2", "Running", True, restarts=3)]
    assert deletion_order(flaky, flaky)[0]["metadata"]["name"] == "flaky"


def test_available_needs_ready_for_min_ready_seconds() -> None:
    p = pod("p", "n", "Running", True, ready_since="2024-01-01T00:00:10Z")
    t = 1704067210.0  # 2024-01-01T00:00:10Z
    assert is_available(p, 0, t)
    assert not is_available(p, 5, t + 4)
    assert is_available(p, 5, t + 5)


def test_expectations_hold_the_controller_until_the_informer_catches_up() -> None:
    exp = ControllerExpectations(ttl=60)
    assert exp.satisfied("ns/rs")  # nothing asked yet
    exp.expect_creations("ns/rs", 2)
    assert not exp.satisfied("ns/rs")
    exp.creation_observed("ns/rs")
    assert not exp.satisfied("ns/rs")
    exp.creation_observed("ns/rs")
    assert exp.satisfied("ns/rs")
    exp.expect_deletions("ns/rs", ["ns/a", "ns/b"])
    exp.deletion_observed("ns/rs", "ns/a")
    exp.deletion_observed("ns/rs", "ns/a")  # the same deletion seen twice counts once
    assert not exp.satisfied("ns/rs")
    exp.deletion_observed("ns/rs", "ns/b")
    assert exp.satisfied("ns/rs")


def test_expectations_expire_after_their_ttl() -> None:
    exp = ControllerExpectations(ttl=60)
    exp.expect_creations("ns/rs", 5)
    assert not exp.satisfied("ns/rs")
    exp._by_key["ns/rs"].stamp -= 61  # as if the five ADD events had been lost a minute ago
    assert exp.satisfied("ns/rs")
