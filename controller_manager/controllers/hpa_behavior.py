"""Behavior: how fast an HPA may go from the replicas it has to the replicas its metrics want (pure).

The metrics propose a number every sync; following it blindly makes a workload flap (a dip in
load, scale down, a spike, scale up...). Kubernetes damps it in two steps, each remembered per HPA
in a `ScalingHistory` that lives only in the controller's memory, as in Kubernetes (a restarted
controller starts with an empty one):

1. Stabilization, over the *recommendations* of the last `stabilizationWindowSeconds`:
   scaling down goes only as low as the highest recent recommendation, scaling up only as high as
   the lowest. With the defaults (up: 0 s, down: --horizontal-pod-autoscaler-downscale-
   stabilization, 5m) an HPA scales up at once and down only after five quiet minutes.
2. Rate limits, over the *scale events* of each policy's `periodSeconds`: a policy says "at most
   4 pods" or "at most 100%" per period, counted from the size at the start of the period;
   `selectPolicy: Max` takes the policy allowing the biggest change, `Min` the smallest,
   `Disabled` forbids that direction. Then minReplicas / maxReplicas bound the result.

    spec.behavior unset (Kubernetes' older rules)          spec.behavior set (missing parts defaulted)
    ─────────────────────────────────────────────          ──────────────────────────────────────────
    down: max of recommendations in the flag's window      up: 0 s window, Pods 4 / Percent 100 per 15 s, Max
    up: at most max(2 × current, 4) in one step            down: the flag's window unless given,
    conditions: ScaleDownStabilized, ScaleUpLimit,               Percent 100 per 15 s, Max
                TooFewReplicas, TooManyReplicas            conditions: Scale{Up,Down}Stabilized,
                                                                 Scale{Up,Down}Limit, Too{Few,Many}Replicas

Each function returns what the HPA's conditions should say about its step (`Normalized`); the
caller writes them. Time comes in as `now`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from api.quantity import Quantity, QuantityError

Obj = Mapping[str, Any]

PODS, PERCENT = "Pods", "Percent"
MAX, MIN, DISABLED = "Max", "Min", "Disabled"
SCALE_UP_LIMIT_FACTOR, SCALE_UP_LIMIT_MINIMUM = 2.0, 4.0  # the rate when spec.behavior is unset
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class ScalingPolicy:
    type: str  # Pods or Percent
    value: int
    period_seconds: int


@dataclass(frozen=True)
class ScalingRules:
    """One direction of `spec.behavior`, every field filled in."""

    stabilization_window_seconds: int
    select_policy: str = MAX
    policies: tuple[ScalingPolicy, ...] = ()
    tolerance: float | None = None  # autoscaling/v2 `tolerance`: overrides the flag in this direction


DEFAULT_SCALE_UP = ScalingRules(0, MAX, (ScalingPolicy(PODS, 4, 15), ScalingPolicy(PERCENT, 100, 15)))
DEFAULT_SCALE_DOWN_POLICIES = (ScalingPolicy(PERCENT, 100, 15),)


def _rules(given: Obj | None, default: ScalingRules) -> ScalingRules:
    """Kubernetes' copyHPAScalingRules: each field set in `given` wins over the default."""
    given = given or {}
    policies = default.policies
    if given.get("policies") is not None:
        policies = tuple(ScalingPolicy(str(p.get("type")), int(p.get("value") or 0), int(p.get("periodSeconds") or 0))
                         for p in given["policies"])  # fmt: skip
    tolerance = default.tolerance
    if given.get("tolerance") is not None:
        try:
            tolerance = float(Quantity(given["tolerance"]).as_decimal())
        except (QuantityError, TypeError):
            pass
    window = given.get("stabilizationWindowSeconds")
    return ScalingRules(
        stabilization_window_seconds=default.stabilization_window_seconds if window is None else int(window),
        select_policy=str(given.get("selectPolicy") or default.select_policy),
        policies=policies,
        tolerance=tolerance,
    )


def behavior_rules(behavior: Obj, downscale_stabilization: float) -> tuple[ScalingRules, ScalingRules]:
    """(scaleUp, scaleDown) of a set `spec.behavior`, with what it leaves out defaulted as the API
    server defaults it; scaleDown's window, which Kubernetes leaves nil on purpose, comes from
    --horizontal-pod-autoscaler-downscale-stabilization."""
    down_default = ScalingRules(int(downscale_stabilization), MAX, DEFAULT_SCALE_DOWN_POLICIES)
    return _rules(behavior.get("scaleUp"), DEFAULT_SCALE_UP), _rules(behavior.get("scaleDown"), down_default)


@dataclass
class Recommendation:
    replicas: int
    timestamp: float


@dataclass
class ScaleEvent:
    change: int  # replicas added or removed, never negative
    timestamp: float
    outdated: bool = False  # older than the longest policy period: its slot may be reused


@dataclass
class ScalingHistory:
    """What one HPA recommended and did recently (Kubernetes' recommendations and scale events)."""

    recommendations: list[Recommendation] = field(default_factory=list)
    scale_up_events: list[ScaleEvent] = field(default_factory=list)
    scale_down_events: list[ScaleEvent] = field(default_factory=list)

    def record_initial_recommendation(self, current_replicas: int, now: float) -> None:
        """The first sync counts the present size as a recommendation, so an HPA created on a
        busy target does not scale it down in its first five minutes."""
        if not self.recommendations:
            self.recommendations.append(Recommendation(current_replicas, now))

    def remember(self, replicas: int, now: float, old_index: int | None) -> None:
        if old_index is None:
            self.recommendations.append(Recommendation(replicas, now))
        else:  # reuse the slot of one that fell out of every window
            self.recommendations[old_index] = Recommendation(replicas, now)

    def record_scale(self, up: ScalingRules, down: ScalingRules, previous: int, new: int, now: float) -> None:
        """Remember a rescale for the rate limits (Kubernetes' storeScaleEvent)."""
        rules, events = (up, self.scale_up_events) if new > previous else (down, self.scale_down_events)
        longest = max((p.period_seconds for p in rules.policies), default=0)
        old_index = None
        for i, event in enumerate(events):
            if event.timestamp < now - longest:
                event.outdated = True
            if event.outdated:
                old_index = i
        event = ScaleEvent(abs(new - previous), now)
        if old_index is None:
            events.append(event)
        else:
            events[old_index] = event


@dataclass(frozen=True)
class Normalized:
    """A normalized replica count and what AbleToScale (True) and ScalingLimited say about it."""

    replicas: int
    able_reason: str
    able_message: str
    limited: bool
    limited_reason: str
    limited_message: str


READY_FOR_NEW_SCALE = ("ReadyForNewScale", "recommended size matches current size")
SCALE_DOWN_STABILIZED = (
    "ScaleDownStabilized",
    "recent recommendations were higher than current one, applying the highest recent recommendation",
)
SCALE_UP_STABILIZED = (
    "ScaleUpStabilized",
    "recent recommendations were lower than current one, applying the lowest recent recommendation",
)
SCALE_UP_LIMIT = ("ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
SCALE_DOWN_LIMIT = ("ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate")
TOO_MANY_REPLICAS = ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
TOO_FEW_REPLICAS = ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
DESIRED_WITHIN_RANGE = ("DesiredWithinRange", "the desired count is within the acceptable range")


# -- spec.behavior unset ------------------------------------------------------------------------
def stabilize_recommendation(history: ScalingHistory, desired: int, window: float, now: float) -> int:
    """The highest recommendation of the last `window` seconds (this one included), recorded."""
    highest, old_index = desired, None
    for i, rec in enumerate(history.recommendations):
        if rec.timestamp < now - window:
            old_index = i
        elif rec.replicas > highest:
            highest = rec.replicas
    history.remember(desired, now, old_index)
    return highest


def convert_desired_replicas_with_rules(current: int, desired: int, min_replicas: int, max_replicas: int
                                        ) -> tuple[int, tuple[str, str]]:  # fmt: skip
    """Clamp to [minReplicas, min(maxReplicas, max(2 × current, 4))]."""
    scale_up_limit = int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))
    maximum, why = (
        (scale_up_limit, SCALE_UP_LIMIT) if max_replicas > scale_up_limit else (max_replicas, TOO_MANY_REPLICAS)
    )
    if desired < min_replicas:
        return min_replicas, TOO_FEW_REPLICAS
    if desired > maximum:
        return maximum, why
    return desired, DESIRED_WITHIN_RANGE


def normalize_desired_replicas(
    history: ScalingHistory, current: int, desired: int, min_replicas: int, max_replicas: int, window: float,
    now: float,
) -> Normalized:  # fmt: skip
    stabilized = stabilize_recommendation(history, desired, window, now)
    able = SCALE_DOWN_STABILIZED if stabilized != desired else READY_FOR_NEW_SCALE
    replicas, (reason, message) = convert_desired_replicas_with_rules(current, stabilized, min_replicas, max_replicas)
    return Normalized(replicas, *able, replicas != stabilized, reason, message)


# -- spec.behavior set --------------------------------------------------------------------------
def stabilize_recommendation_with_behaviors(
    history: ScalingHistory, up: ScalingRules, down: ScalingRules, current: int, desired: int, now: float
) -> tuple[int, tuple[str, str]]:
    """Keep `current` unless every recommendation in the up window is above it (then go to their
    lowest) or every one in the down window is below it (then to their highest)."""
    up_cutoff = now - up.stabilization_window_seconds
    down_cutoff = now - down.stabilization_window_seconds
    up_recommendation = down_recommendation = desired
    old_index = None
    for i, rec in enumerate(history.recommendations):
        if rec.timestamp > up_cutoff:
            up_recommendation = min(rec.replicas, up_recommendation)
        if rec.timestamp > down_cutoff:
            down_recommendation = max(rec.replicas, down_recommendation)
        if rec.timestamp < up_cutoff and rec.timestamp < down_cutoff:
            old_index = i
    recommendation = min(max(current, up_recommendation), down_recommendation)
    history.remember(desired, now, old_index)
    return recommendation, (SCALE_UP_STABILIZED if desired >= current else SCALE_DOWN_STABILIZED)


def _changed_in_period(period_seconds: int, events: list[ScaleEvent], now: float) -> int:
    return sum(e.change for e in events if e.timestamp > now - period_seconds)


def _replicas_at_period_start(current: int, history: ScalingHistory, period_seconds: int, now: float) -> int:
    """The replica count before the changes of the last `period_seconds`: what a policy's period starts from."""
    return (current - _changed_in_period(period_seconds, history.scale_up_events, now)
            + _changed_in_period(period_seconds, history.scale_down_events, now))  # fmt: skip


def scale_up_limit(current: int, history: ScalingHistory, rules: ScalingRules, now: float) -> int:
    """The most replicas the scale-up policies allow now (Kubernetes' calculateScaleUpLimitWithScalingRules)."""
    if rules.select_policy == DISABLED:
        return current
    pick, result = (min, _INT32_MAX) if rules.select_policy == MIN else (max, _INT32_MIN)
    for policy in rules.policies:
        start = _replicas_at_period_start(current, history, policy.period_seconds, now)
        if policy.type == PODS:
            proposed = start + policy.value
        elif policy.type == PERCENT:  # rounded up, or a small workload could never grow
            proposed = math.ceil(start * (1 + policy.value / 100))
        else:
            continue
        result = pick(result, proposed)
    return result


def scale_down_limit(current: int, history: ScalingHistory, rules: ScalingRules, now: float) -> int:
    """The fewest replicas the scale-down policies allow now (Kubernetes' calculateScaleDownLimitWithBehaviors)."""
    if rules.select_policy == DISABLED:
        return current
    pick, result = (max, _INT32_MIN) if rules.select_policy == MIN else (min, _INT32_MAX)
    for policy in rules.policies:
        start = _replicas_at_period_start(current, history, policy.period_seconds, now)
        if policy.type == PODS:
            proposed = start - policy.value
        elif policy.type == PERCENT:
            proposed = int(start * (1 - policy.value / 100))
        else:
            continue
        result = pick(result, proposed)
    return result


def convert_desired_replicas_with_behavior_rate(
    history: ScalingHistory, up: ScalingRules, down: ScalingRules, current: int, desired: int,
    min_replicas: int, max_replicas: int, now: float,
) -> tuple[int, tuple[str, str]]:  # fmt: skip
    if desired > current:
        limit = max(scale_up_limit(current, history, up, now), current)
        maximum, why = (limit, SCALE_UP_LIMIT) if max_replicas > limit else (max_replicas, TOO_MANY_REPLICAS)
        if desired > maximum:
            return maximum, why
    elif desired < current:
        limit = min(scale_down_limit(current, history, down, now), current)
        minimum, why = (limit, SCALE_DOWN_LIMIT) if min_replicas < limit else (min_replicas, TOO_FEW_REPLICAS)
        if desired < minimum:
            return minimum, why
    return desired, DESIRED_WITHIN_RANGE


def normalize_desired_replicas_with_behaviors(
    history: ScalingHistory, up: ScalingRules, down: ScalingRules, current: int, desired: int,
    min_replicas: int, max_replicas: int, now: float,
) -> Normalized:  # fmt: skip
    stabilized, stabilized_why = stabilize_recommendation_with_behaviors(history, up, down, current, desired, now)
    able = stabilized_why if stabilized != desired else READY_FOR_NEW_SCALE
    replicas, (reason, message) = convert_desired_replicas_with_behavior_rate(
        history, up, down, current, stabilized, min_replicas, max_replicas, now
    )
    return Normalized(replicas, *able, replicas != stabilized, reason, message)
