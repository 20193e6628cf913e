"""The pod failure back-off: after failures, a Job waits before it creates replacement pods.

Kubernetes' rule (backoff_utils.go): count the failures since the last success —
`failuresAfterLastSuccess` — and remember when the latest of them finished. The wait after *n*
such failures is `base · 2^(n-1)`, capped at `max` (DefaultJobPodFailureBackOff 10 s and
MaxJobPodFailureBackOff 10 min: 10 s, 20 s, 40 s, … 10 min), counted from that last failure. A
success resets the count, except for failures that finished after it.

The record is kept per Job in memory and fed with each sync's *newly* finished pods (those still
carrying the tracking finalizer and not yet in `uncountedTerminatedPods`), exactly as Kubernetes'
backoffStore is; a restarted controller-manager starts with no record, so at worst it creates a
replacement sooner. mini-k8s makes base and cap flags (`--job-pod-failure-backoff-base`,
`--job-pod-failure-backoff-max`) so that tests need not wait ten seconds per failure.

When did a pod finish? The latest `finishedAt` of its terminated containers; else the
`lastTransitionTime` of a `Ready: False` condition; else `deletionTimestamp` minus the grace period;
else its creation time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.timestamps import parse_time

Obj = dict[str, Any]

DEFAULT_JOB_POD_FAILURE_BACKOFF = 10.0  # seconds
MAX_JOB_POD_FAILURE_BACKOFF = 600.0


@dataclass(frozen=True)
class BackoffRecord:
    failures_after_last_success: int = 0
    last_failure_time: float | None = None

    def remaining_time(self, now: float, base: float, cap: float) -> float:
        return remaining_time_for_failures(now, base, cap, self.failures_after_last_success, self.last_failure_time)


def remaining_time_for_failures(
    now: float, base: float, cap: float, failures: int, last_failure: float | None
) -> float:
    """Seconds still to wait after `failures` consecutive failures, the last at `last_failure`."""
    if failures <= 0 or last_failure is None:
        return 0.0
    backoff = base
    for _ in range(1, failures):
        backoff *= 2
        if backoff >= cap:
            backoff = cap
            break
    return max(0.0, backoff - (now - last_failure))


def finished_time(pod: Obj) -> float:
    status, meta = pod.get("status") or {}, pod.get("metadata") or {}
    latest: float | None = None
    statuses = status.get("containerStatuses") or []
    for cs in statuses:
        terminated = (cs.get("state") or {}).get("terminated")
        when = parse_time((terminated or {}).get("finishedAt"))
        if not when:
            latest = None
            break
        latest = when if latest is None else max(latest, when)
    if latest is not None:
        return latest
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Ready" and cond.get("status") == "False":
            when = parse_time(cond.get("lastTransitionTime"))
            if when:
                return when
    deleted = parse_time(meta.get("deletionTimestamp"))
    if deleted:
        return deleted - float(meta.get("deletionGracePeriodSeconds") or 0)
    return parse_time(meta.get("creationTimestamp")) or 0.0


class BackoffStore:
    """Job key → BackoffRecord, for this process only."""

    def __init__(self) -> None:
        self._records: dict[str, BackoffRecord] = {}

    def new_record(self, key: str, new_succeeded: list[Obj], new_failed: list[Obj]) -> BackoffRecord:
        """The record once this sync's newly finished pods are taken in (not stored yet)."""
        old = self._records.get(key, BackoffRecord())
        if not new_failed:
            return old if not new_succeeded else BackoffRecord()
        failed_times = sorted(finished_time(p) for p in new_failed)
        if not new_succeeded:
            return BackoffRecord(old.failures_after_last_success + len(failed_times), failed_times[-1])
        last_success = max(finished_time(p) for p in new_succeeded)
        after = [t for t in failed_times if t > last_success]
        return BackoffRecord(len(after), after[-1] if after else None)

    def update(self, key: str, record: BackoffRecord) -> None:
        self._records[key] = record

    def remove(self, key: str) -> None:
        self._records.pop(key, None)
