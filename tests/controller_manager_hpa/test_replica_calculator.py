"""The replica calculator, case by case against Kubernetes' arithmetic (replica_calculator.go):
utilization over requests, tolerance, and the pessimistic recount for unready and missing pods."""

from __future__ import annotations

import pytest

from controller_manager.controllers.hpa_replica_calculator import (
    PodMetric,
    ReplicaCalculationError,
    ReplicaCalculator,
    Tolerances,
    calculate_requests,
    group_pods,
    resource_utilization_ratio,
)
from tests.controller_manager_hpa.helpers import NOW, pod

CALC = ReplicaCalculator(cpu_initialization_period=300.0, delay_of_initial_readiness_status=30.0)
TOL = Tolerances(0.1, 0.1)


def sample(milli: int, taken: float = 10.0, window: float = 15.0) -> PodMetric:
    return PodMetric(milli, NOW - taken, window)


def metrics(**milli: int) -> dict[str, PodMetric]:
    return {name.replace("_", "-"): sample(v) for name, v in milli.items()}


def replicas(current: int, target: int, pods: list, pod_metrics: dict, resource: str = "cpu") -> tuple[int, int, int]:
    return CALC.resource_replicas(current, target, resource, TOL, pods, pod_metrics, NOW)


# -- the plain case ---------------------------------------------------------------------------------
def test_scale_up_is_the_usage_ratio_times_the_ready_pods_rounded_up() -> None:
    pods = [pod("a"), pod("b"), pod("c")]  # 1 cpu requested each
    got = replicas(3, 30, pods, metrics(a=300, b=500, c=700))
    assert got == (5, 50, 500)  # 1500m of 3000m = 50%; 50/30 * 3 = 5


def test_scale_down_uses_go_integer_division_for_the_percentage() -> None:
    pods = [pod(n) for n in "abcde"]
    got = replicas(5, 50, pods, metrics(a=100, b=300, c=500, d=250, e=250))
    assert got == (3, 28, 280)  # 1400/5000 = 28%; 0.56 * 5 = 2.8 → 3


def test_a_ratio_within_the_tolerance_keeps_the_current_count() -> None:
    pods = [pod("a"), pod("b")]
    assert replicas(2, 50, pods, metrics(a=540, b=540)) == (2, 54, 540)  # 1.08: within 10%
    assert replicas(2, 50, pods, metrics(a=560, b=560))[0] == 3  # 1.12: outside


def test_tolerance_may_differ_by_direction() -> None:
    pods = [pod("a"), pod("b")]
    wide_down = Tolerances(scale_down=0.5, scale_up=0.0)
    assert CALC.resource_replicas(2, 50, "cpu", wide_down, pods, metrics(a=300, b=300), NOW)[0] == 2  # 0.6
    assert CALC.resource_replicas(2, 50, "cpu", wide_down, pods, metrics(a=510, b=510), NOW)[0] == 3  # 1.02


def test_requests_of_every_container_and_restartable_init_container_add_up() -> None:
    containers = [{"name": "app", "resources": {"requests": {"cpu": "500m"}}},
                  {"name": "side", "resources": {"requests": {"cpu": "250m"}}}]  # fmt: skip
    init = [{"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}},
            {"name": "setup", "resources": {}}]  # fmt: skip
    assert calculate_requests([pod("a", containers=containers, init_containers=init)], "", "cpu") == {"a": 1000}
    assert calculate_requests([pod("a", containers=containers)], "side", "cpu") == {"a": 250}


def test_a_container_without_a_request_is_an_error_naming_it() -> None:
    with pytest.raises(ReplicaCalculationError, match="^missing request for cpu in container app of Pod a$"):
        replicas(1, 50, [pod("a", cpu=None)], metrics(a=100))
    with pytest.raises(ReplicaCalculationError, match="^container sidecar not found in Pod a$"):
        calculate_requests([pod("a")], "sidecar", "cpu")


def test_no_pods_and_no_usable_metrics_are_errors() -> None:
    with pytest.raises(ReplicaCalculationError, match="no pods returned by selector while calculating replica count"):
        replicas(1, 50, [], metrics(a=100))
    with pytest.raises(ReplicaCalculationError, match=r"did not receive metrics for targeted pods \(pods might be"):
        replicas(1, 50, [pod("a", phase="Pending")], metrics(a=100))
    with pytest.raises(ReplicaCalculationError, match="no metrics returned matched known pods"):
        resource_utilization_ratio(metrics(x=100), {"a": 1000}, 50)


# -- which pods count -------------------------------------------------------------------------------
def test_deleted_and_failed_pods_are_ignored_and_pending_ones_are_unready() -> None:
    pods = [pod("a"), pod("gone", deleting=True), pod("dead", phase="Failed"), pod("new", phase="Pending")]
    groups = group_pods(pods, metrics(a=1, gone=1, dead=1, new=1), "cpu", 300, 30, NOW)
    assert (groups.ready_count, groups.ignored, groups.unready, groups.missing) == (1, {"gone", "dead"}, {"new"}, set())


def test_a_cpu_sample_taken_before_a_new_pod_was_ready_for_a_whole_window_is_not_trusted() -> None:
    young = pod("young", started=60, ready_since=20)  # ready 20 s ago, in its initialization period
    early = {"young": PodMetric(900, NOW - 10, 15.0)}  # sampled 10 s ago over 15 s: straddles readiness
    late = {"young": PodMetric(900, NOW - 1, 15.0)}  # sampled a whole window after readiness
    assert group_pods([young], early, "cpu", 300, 30, NOW).unready == {"young"}
    assert group_pods([young], late, "cpu", 300, 30, NOW).ready_count == 1
    assert group_pods([pod("x", started=60, ready="False", ready_since=50)], {"x": sample(1)}, "cpu", 300, 30,
                      NOW).unready == {"x"}  # fmt: skip


def test_after_the_cpu_initialization_period_only_a_pod_that_was_never_ready_is_unready() -> None:
    never_ready = pod("a", started=3600, ready="False", ready_since=3590)  # went False 10 s after start
    lost_readiness = pod("b", started=3600, ready="False", ready_since=60)  # was Ready, now not: a real reading
    ms = metrics(a=500, b=500)
    groups = group_pods([never_ready, lost_readiness], ms, "cpu", 300, 30, NOW)
    assert (groups.unready, groups.ready_count) == ({"a"}, 1)


def test_readiness_does_not_matter_for_memory() -> None:
    young = pod("young", cpu=None, memory="100Mi", started=60, ready="False", ready_since=50)
    assert group_pods([young], metrics(young=1), "memory", 300, 30, NOW).ready_count == 1


def test_a_pod_without_a_ready_condition_or_start_time_is_unready_for_cpu() -> None:
    assert group_pods([pod("a", ready=None)], metrics(a=1), "cpu", 300, 30, NOW).unready == {"a"}
    assert group_pods([pod("a", started=None)], metrics(a=1), "cpu", 300, 30, NOW).unready == {"a"}


# -- unready pods -----------------------------------------------------------------------------------
def test_unready_pods_count_as_idle_when_scaling_up() -> None:
    pods = [pod("a", ready="False", started=60, ready_since=60), pod("b"), pod("c")]
    # ready pods alone: 1200/2000 = 60% = 2x the target; with the unready one idle: 1200/3000 = 40%
    assert replicas(3, 30, pods, metrics(a=300, b=500, c=700)) == (4, 60, 600)


def test_unready_pods_are_left_out_when_scaling_down() -> None:
    pods = [pod("a", ready="False", started=60, ready_since=60), pod("b", phase="Pending")]
    pods += [pod(n) for n in "cde"]
    assert replicas(5, 50, pods, metrics(a=100, b=300, c=500, d=250, e=250)) == (2, 33, 333)


def test_unready_pods_that_would_bring_the_ratio_within_tolerance_keep_the_count() -> None:
    pods = [pod("a", ready="False", started=60, ready_since=60), pod("b")]
    assert replicas(2, 50, pods, metrics(a=0, b=1100))[0] == 2  # 110% → with a idle 55%: ratio 1.1


# -- missing metrics --------------------------------------------------------------------------------
def test_pods_without_metrics_count_as_idle_when_scaling_up() -> None:
    pods = [pod("a"), pod("b"), pod("c"), pod("d")]
    # a, b at 100% of request, target 50 → 2x; c, d missing count 0 → 2000/4000 = 50%: on target
    assert replicas(4, 50, pods, metrics(a=1000, b=1000))[0] == 4
    # a, b, c at 90% with one missing: 2700/4000 = 67.5% → 1.35 * 4 = 5.4 → 6
    assert replicas(4, 50, pods, metrics(a=900, b=900, c=900)) == (6, 90, 900)


def test_pods_without_metrics_count_as_fully_used_when_scaling_down() -> None:
    pods = [pod("a"), pod("b"), pod("c"), pod("d")]
    # 100m of 2000m = 5%; with c, d at their request: 2100/4000 = 52.5% of a 100% target → 0.52 * 4 → 3
    assert replicas(4, 100, pods, metrics(a=50, b=50)) == (3, 5, 50)


def test_missing_pods_count_at_the_target_when_it_is_above_100_percent() -> None:
    pods = [pod("a"), pod("b")]
    # a at 50% of a 200% target; b counted at 200%: 2500/2000 = 125% → ratio 0.62 → ceil(1.25) = 2
    assert replicas(2, 200, pods, metrics(a=500))[0] == 2
    pods = [pod("a"), pod("b"), pod("c"), pod("d")]
    # 200m/3000m = 6%; with d at 200%: 2200/4000 = 55% → 0.27 * 4 = 1.1 → 2
    assert replicas(4, 200, pods, metrics(a=100, b=50, c=50))[0] == 2


def test_missing_pods_that_turn_the_direction_round_keep_the_count() -> None:
    pods = [pod("a"), pod("b"), pod("c")]
    # a, b at 40% of a 50% target: down; c counted at 100%: 180% / 3 = 60% > target: up. No change.
    assert replicas(3, 50, pods, metrics(a=400, b=400))[0] == 3


def test_missing_metrics_at_exactly_the_target_change_nothing() -> None:
    pods = [pod("a"), pod("b")]
    assert replicas(2, 50, pods, metrics(a=500))[0] == 2


# -- averageValue targets ---------------------------------------------------------------------------
def test_an_average_value_target_divides_the_mean_usage_by_it() -> None:
    pods = [pod("a"), pod("b"), pod("c")]
    got = CALC.raw_resource_replicas(3, 200, "cpu", TOL, pods, metrics(a=300, b=500, c=700), NOW)
    assert got == (8, 500)  # mean 500m / 200m = 2.5 → 7.5 → 8


def test_an_average_value_target_counts_missing_pods_at_the_target_when_scaling_down() -> None:
    pods = [pod("a", cpu=None, memory="1Gi"), pod("b", cpu=None, memory="1Gi"), pod("c", cpu=None, memory="1Gi")]
    mi = 1024 * 1024 * 1000  # milli-bytes in a MiB
    # a, b use 10Mi of a 100Mi target; c counted at 100Mi: mean 40Mi → 0.4 * 3 = 1.2 → 2
    got = CALC.raw_resource_replicas(3, 100 * mi, "memory", TOL, pods, metrics(a=10 * mi, b=10 * mi), NOW)
    assert got == (2, 10 * mi)
