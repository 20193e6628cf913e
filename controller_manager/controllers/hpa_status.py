"""An HPA's status: the numbers it observed, and three conditions saying what held it back.

    type            True means                                    reasons (Kubernetes')
    AbleToScale     it can read and write the target's /scale     SucceededGetScale, ReadyForNewScale,
                                                                  SucceededRescale, ScaleUpStabilized,
                                                                  ScaleDownStabilized | False: FailedGetScale,
                                                                  FailedUpdateScale
    ScalingActive   it could compute a replica count from the     ValidMetricFound | False: ScalingDisabled,
                    metrics                                       FailedGetResourceMetric, InvalidSelector, ...
    ScalingLimited  the count it wanted was cut by minReplicas,   TooFewReplicas, TooManyReplicas,
                    maxReplicas or a rate limit                   ScaleUpLimit, ScaleDownLimit
                                                                  | False: DesiredWithinRange

A condition keeps its place in the list and its `lastTransitionTime` until its *status* flips; a
new reason or message alone is not a transition. A condition not touched in a sync keeps what it
said. The status is rebuilt each sync from the old one, and written (through `/status`) only when
it differs, so an HPA in a steady state costs no writes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from api.timestamps import rfc3339

Obj = dict[str, Any]

ABLE_TO_SCALE = "AbleToScale"
SCALING_ACTIVE = "ScalingActive"
SCALING_LIMITED = "ScalingLimited"
TRUE, FALSE = "True", "False"


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str
    message: str


def set_condition(conditions: list[Obj], cond: Condition, now: float) -> list[Obj]:
    """`conditions` with `cond` set in place (appended if new); lastTransitionTime moves only when
    the status changes."""
    out = [dict(c) for c in conditions]
    existing = next((c for c in out if c.get("type") == cond.type), None)
    if existing is None:
        existing = {"type": cond.type}
        out.append(existing)
    if existing.get("status") != cond.status:
        existing["lastTransitionTime"] = rfc3339(now)
    existing.update(status=cond.status, reason=cond.reason, message=cond.message)
    return out


def unable_to_compute(reason: str, error: str) -> Condition:
    """ScalingActive False: what a metric that could not be evaluated says."""
    return Condition(SCALING_ACTIVE, FALSE, reason, f"the HPA was unable to compute the replica count: {error}")


def scaling_disabled() -> Condition:
    return Condition(SCALING_ACTIVE, FALSE, "ScalingDisabled",
                     "scaling is disabled since the replica count of the target is zero")  # fmt: skip


def valid_metric_found(metric: str) -> Condition:
    return Condition(SCALING_ACTIVE, TRUE, "ValidMetricFound",
                     f"the HPA was able to successfully calculate a replica count from {metric}")  # fmt: skip


def failed_get_scale(error: str) -> Condition:
    return Condition(ABLE_TO_SCALE, FALSE, "FailedGetScale",
                     f"the HPA controller was unable to get the target's current scale: {error}")  # fmt: skip


def succeeded_get_scale() -> Condition:
    return Condition(
        ABLE_TO_SCALE, TRUE, "SucceededGetScale", "the HPA controller was able to get the target's current scale"
    )


def failed_update_scale(error: str) -> Condition:
    return Condition(ABLE_TO_SCALE, FALSE, "FailedUpdateScale",
                     f"the HPA controller was unable to update the target scale: {error}")  # fmt: skip


def succeeded_rescale(replicas: int) -> Condition:
    return Condition(ABLE_TO_SCALE, TRUE, "SucceededRescale",
                     f"the HPA controller was able to update the target scale to {replicas}")  # fmt: skip


class StatusBuilder:
    """The status of one HPA during one sync: starts as a copy of the stored one."""

    def __init__(self, hpa: Mapping[str, Any], now: float) -> None:
        self.original: Obj = copy.deepcopy(dict(hpa.get("status") or {}))
        self.status: Obj = copy.deepcopy(self.original)
        self.generation = (hpa.get("metadata") or {}).get("generation")
        self.now = now

    def set_condition(self, cond: Condition) -> None:
        self.status["conditions"] = set_condition(self.status.get("conditions") or [], cond, self.now)

    def set_status(
        self, current: int, desired: int, metrics: Sequence[Mapping[str, Any]] | None, rescaled: bool
    ) -> None:
        """Kubernetes' setStatus: the numbers and metrics are replaced; conditions and
        lastScaleTime carry over, the latter moving to now on a rescale."""
        new: Obj = {"desiredReplicas": desired}
        if current:  # Go's omitempty: zero replicas is left out
            new["currentReplicas"] = current
        if metrics:
            new["currentMetrics"] = [dict(m) for m in metrics]
        if rescaled:
            new["lastScaleTime"] = rfc3339(self.now)
        elif self.status.get("lastScaleTime"):
            new["lastScaleTime"] = self.status["lastScaleTime"]
        if self.status.get("conditions"):
            new["conditions"] = self.status["conditions"]
        self.status = new

    def set_current(self, current: int, metrics: Sequence[Mapping[str, Any]] | None) -> None:
        """After a failure: new current numbers, the desired count left as it was."""
        self.set_status(current, int(self.status.get("desiredReplicas") or 0), metrics, rescaled=False)

    def result(self) -> Obj:
        out = dict(self.status)
        if self.generation is not None:
            out["observedGeneration"] = self.generation
        return out

    def changed(self) -> bool:
        return self.result() != self.original
