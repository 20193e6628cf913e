"""The scheduler's pure parts: the node-count rule, the failure message, pod requests, the queue."""

from __future__ import annotations

from collections import Counter

import pytest

from scheduler.algorithm import num_feasible_nodes_to_find
from scheduler.fit_error import FitError
from scheduler.framework import pod_requests
from scheduler.queue import ACTIVE, BACKOFF, UNSCHEDULABLE, SchedulingQueue


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        (0, 50, 50),  # under 100 nodes: all of them
        (0, 100, 100),  # 50 - 0 = 50% of 100 = 50, raised to the minimum of 100
        (0, 1000, 420),  # 50 - 8 = 42%
        (0, 5000, 500),  # 50 - 40 = 10%
        (0, 6000, 300),  # 50 - 48 = 2% -> floor of 5%
        (30, 1000, 300),
        (100, 1000, 1000),
        (1, 1000, 100),  # never fewer than 100
    ],
)
def test_num_feasible_nodes_follows_kubernetes_adaptive_rule(percentage: int, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def test_fit_error_groups_reasons_and_sorts_count_strings() -> None:
    reasons = Counter(
        {"Insufficient cpu": 2, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }": 1}
    )
    assert str(FitError(3, reasons, unresolvable=1)) == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )


def test_pod_requests_take_the_largest_init_container_and_add_sidecars_and_overhead() -> None:
    def c(cpu: str, mem: str, **extra: str) -> dict:
        return {"name": "x", "resources": {"requests": {"cpu": cpu, "memory": mem}}, **extra}

    spec = {
        "containers": [c("100m", "64Mi"), c("200m", "64Mi")],
        "initContainers": [c("1", "32Mi"), c("50m", "16Mi", restartPolicy="Always")],
        "overhead": {"cpu": "10m"},
    }
    req = pod_requests(spec)
    assert req["cpu"] == 1000 + 10  # the init container (1 cpu) beats 300m + 50m sidecar
    assert req["memory"] == (64 + 64 + 16) * 1024 * 1024  # app containers + sidecar beat 32Mi


def test_limits_without_requests_count_as_requests_and_empty_pods_get_non_zero_defaults() -> None:
    assert pod_requests({"containers": [{"resources": {"limits": {"cpu": "500m"}}}]}) == {"cpu": 500}
    assert pod_requests({"containers": [{}]}, non_zero=True) == {"cpu": 100, "memory": 200 * 1024 * 1024}


def _pod(name: str, priority: int = 0, created: str = "2026-01-01T00:00:00Z") -> dict:
    return {"metadata": {"name": name, "namespace": "d", "creationTimestamp": created}, "spec": {"priority": priority}}


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_queue_pops_by_priority_then_age_and_parks_unschedulable_until_a_move() -> None:
    clock = FakeClock()
    q = SchedulingQueue(initial_backoff=1, max_backoff=10, clock=clock)
    q.add(_pod("young", created="2026-01-01T00:00:02Z"))
    q.add(_pod("old", created="2026-01-01T00:00:01Z"))
    q.add(_pod("vip", priority=1000, created="2026-01-01T00:00:09Z"))
    assert [(await q.pop()).key for _ in range(3)] == ["d/vip", "d/old", "d/young"]


async def test_failed_pod_waits_for_a_cluster_event_then_respects_its_backoff() -> None:
    clock = FakeClock()
    q = SchedulingQueue(initial_backoff=1, max_backoff=10, clock=clock)
    q.add(_pod("p"))
    qp = await q.pop()
    q.add_unschedulable(qp)
    assert q.pending()[UNSCHEDULABLE] == 1
    clock.now += 5  # backoff (1 s) long over, but nothing changed: still parked
    q.flush_backoff_completed()
    assert q.pending()[UNSCHEDULABLE] == 1
    q.move_all_to_active_or_backoff("NodeAdd")
    assert q.pending()[ACTIVE] == 1
    qp = await q.pop()  # second attempt: backoff 2 s
    q.add_unschedulable(qp)
    q.move_all_to_active_or_backoff("NodeUpdate")  # a change right away: wait out the backoff first
    assert q.pending()[BACKOFF] == 1
    clock.now += 2.5
    q.flush_backoff_completed()
    assert q.pending()[ACTIVE] == 1


async def test_a_cluster_change_during_the_attempt_sends_the_pod_to_backoff_not_to_sleep() -> None:
    clock = FakeClock()
    q = SchedulingQueue(initial_backoff=1, max_backoff=10, clock=clock)
    q.add(_pod("p"))
    qp = await q.pop()
    q.move_all_to_active_or_backoff("NodeUpdate")  # the node got its label while we were filtering
    q.add_unschedulable(qp)
    assert q.pending() == {ACTIVE: 0, BACKOFF: 1, UNSCHEDULABLE: 0}


async def test_backoff_doubles_up_to_the_maximum() -> None:
    q = SchedulingQueue(initial_backoff=1, max_backoff=10)
    q.add(_pod("p"))
    qp = await q.pop()
    durations = []
    for attempts in range(1, 7):
        qp.attempts = attempts
        durations.append(q.backoff_duration(qp))
    assert durations == [1, 2, 4, 8, 10, 10]
