"""The pure decisions behind the controllers: tolerations, zone states, taint sets, endpoint subsets."""

from __future__ import annotations

from controller_manager.controllers.endpoints import compute_subsets
from controller_manager.controllers.nodelifecycle_taints import (
    desired_taints,
    eviction_time,
    reconcile_taints,
    tolerates,
)
from controller_manager.controllers.nodelifecycle_zones import FULL, NORMAL, PARTIAL, zone_state

UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "effect": "NoExecute",
    "timeAdded": "2024-01-01T00:00:00Z",
}
T0 = 1704067200.0  # 2024-01-01T00:00:00Z


def test_toleration_matching_follows_operator_key_value_and_effect():
    assert tolerates({"operator": "Exists"}, UNREACHABLE)
    assert tolerates({"key": "node.kubernetes.io/unreachable", "operator": "Exists"}, UNREACHABLE)
    assert not tolerates({"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}, UNREACHABLE)
    assert tolerates({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoExecute"})
    assert not tolerates({"key": "k", "value": "w"}, {"key": "k", "value": "v", "effect": "NoExecute"})


def test_eviction_time_is_now_untolerated_deadline_for_seconds_and_never_without():
    assert eviction_time([UNREACHABLE], [], first_seen=0) == 0.0
    t = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}]
    assert eviction_time([UNREACHABLE], t, first_seen=0) == T0 + 300
    assert eviction_time([UNREACHABLE], [{"operator": "Exists"}], first_seen=0) is None


def test_zone_states_as_kubernetes_computes_them():
    assert zone_state(["True", "True", "Unknown"], 0.55) == NORMAL
    assert zone_state(["Unknown", "False", None], 0.55) == FULL
    assert zone_state(["True", "Unknown", "Unknown", "Unknown"], 0.55) == PARTIAL
    assert zone_state(["True", "Unknown", "Unknown"], 0.55) == NORMAL  # needs more than 2 unhealthy


def test_taints_keep_their_time_added_and_swap_between_not_ready_and_unreachable():
    assert desired_taints("True", no_execute=True) == set()
    current = [dict(UNREACHABLE), {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}]
    assert reconcile_taints(current, desired_taints("Unknown", no_execute=True), "later") is None
    swapped = reconcile_taints(
        current + [{"key": "mine", "effect": "NoSchedule"}], desired_taints("False", no_execute=True), "now"
    )
    assert swapped is not None
    assert {(t["key"], t["effect"]) for t in swapped} == {
        ("mine", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoExecute"),
    }
    assert next(t for t in swapped if t["effect"] == "NoExecute")["timeAdded"] == "now"


def _pod(name: str, ip: str, port: int, ready: bool) -> dict:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": name},
        "spec": {"containers": [{"name": "c", "ports": [{"name": "http", "containerPort": port}]}]},
        "status": {"podIP": ip, "conditions": [{"type": "Ready", "status": str(ready)}]},
    }


def test_subsets_group_pods_by_identical_port_sets():
    svc = {"metadata": {"name": "s"}, "spec": {"ports": [{"name": "http", "port": 80, "targetPort": "http"}]}}
    subsets = compute_subsets(
        svc,
        [
            _pod("a", "10.0.0.2", 8080, True),
            _pod("b", "10.0.0.1", 8080, False),
            _pod("c", "10.0.0.3", 9090, True),
        ],
    )
    assert subsets == [
        {
            "addresses": [
                {"ip": "10.0.0.2", "targetRef": {"kind": "Pod", "namespace": "ns", "name": "a", "uid": "a"}}
            ],
            "notReadyAddresses": [
                {"ip": "10.0.0.1", "targetRef": {"kind": "Pod", "namespace": "ns", "name": "b", "uid": "b"}}
            ],
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
        },
        {
            "addresses": [
                {"ip": "10.0.0.3", "targetRef": {"kind": "Pod", "namespace": "ns", "name": "c", "uid": "c"}}
            ],
            "ports": [{"name": "http", "port": 9090, "protocol": "TCP"}],
        },
    ]
