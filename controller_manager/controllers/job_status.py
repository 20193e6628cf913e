"""Writing a Job's status: count its finished pods through their finalizers, then finish the Job.

Desired state: `status` says what the pods did — `succeeded`/`failed` (and, Indexed,
`completedIndexes`/`failedIndexes`) count every finished pod exactly once — and, once the Job has
stopped, its final condition (`Complete` or `Failed`).
Current state: the pods of this sync (job.py's `SyncContext`): finished pods still carrying the
`batch.kubernetes.io/job-tracking` finalizer are not counted yet; uids already listed in
`status.uncountedTerminatedPods` are counted once their finalizer is gone.
What it does, each step safe to repeat after a crash (job_tracking.py tells why):

    1. newly finished pods go into uncountedTerminatedPods (an Indexed Job's succeeded pods straight
       into completedIndexes), with the target condition (FailureTarget / SuccessCriteriaMet)
       if the Job is stopping — one PUT /status;
    2. their finalizers are removed (strategic-merge PATCH per pod);
    3. the uids whose pods lost the finalizer move into the counters; when nothing is uncounted and
       nothing terminating, the final condition (Failed / Complete, with the target's reason and
       message) is added — one more PUT /status — and the event is recorded.

A failed pod whose index will be retried under `backoffLimitPerIndex` keeps its finalizer until its
replacement exists (job_backoff_per_index.py): the replacement's failure count is read from it.

This is Kubernetes' trackJobStatusAndRemoveFinalizers, as a mixin of the JobController.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field
from typing import Any, ClassVar

from api.timestamps import now_rfc3339
from client import NORMAL, WARNING, EventRecorder, RESTClient
from controller_manager.controllers import job_indexed
from controller_manager.controllers.job_backoff import BackoffRecord, BackoffStore
from controller_manager.controllers.job_failure_policy import match_pod_failure_policy
from controller_manager.controllers.job_tracking import (
    MAX_UNCOUNTED_PODS,
    FinalizerExpectations,
    clean_uncounted_pods_without_finalizers,
    has_tracking_finalizer,
    is_pod_failed,
    phase,
    remove_tracking_finalizer,
    uncounted_of,
)

Obj = dict[str, Any]

# Condition types, reasons and messages as Kubernetes writes them.
COMPLETE, FAILED, SUSPENDED = "Complete", "Failed", "Suspended"
SUCCESS_CRITERIA_MET, FAILURE_TARGET = "SuccessCriteriaMet", "FailureTarget"
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")


@dataclass
class SyncContext:
    """What one sync knows about a job (Kubernetes' syncJobCtx)."""

    job: Obj  # a private copy; its status is what we will write
    pods: list[Obj]
    active: list[Obj]
    ready: int
    terminating: int
    uncounted_succeeded: set[str]
    uncounted_failed: set[str]
    expected_rm: set[str]  # uids whose finalizer removal we have not seen yet
    succeeded: int = 0
    failed: int = 0
    finished: Obj | None = None  # the condition the job is heading for
    prev_succeeded_indexes: set[int] = field(default_factory=set)
    succeeded_indexes: set[int] = field(default_factory=set)
    failed_indexes: set[int] | None = None  # only with backoffLimitPerIndex
    delayed: dict[int, Obj] = field(default_factory=dict)  # index → failed pod kept for its replacement
    backoff: BackoffRecord = field(default_factory=BackoffRecord)


def condition(status: Obj, type_: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), None)


def condition_true(status: Obj, type_: str) -> bool:
    cond = condition(status, type_)
    return cond is not None and cond.get("status") == "True"


def is_finished(job: Obj) -> bool:
    status = job.get("status") or {}
    return condition_true(status, COMPLETE) or condition_true(status, FAILED)


def new_condition(type_: str, reason: str, message: str) -> Obj:
    now = now_rfc3339()
    return {
        "type": type_,
        "status": "True",
        "lastProbeTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def set_condition(status: Obj, type_: str, state: str, reason: str, message: str, now: str) -> bool:
    """Add or update a condition; lastTransitionTime moves only when the status flips. True if changed."""
    conditions: list[Obj] = status.setdefault("conditions", [])
    cond = condition(status, type_)
    if cond is None:
        conditions.append(
            {
                "type": type_,
                "status": state,
                "lastProbeTime": now,
                "lastTransitionTime": now,
                "reason": reason,
                "message": message,
            }
        )
        return True
    if (cond.get("status"), cond.get("reason"), cond.get("message")) == (state, reason, message):
        return False
    if cond.get("status") != state:
        cond["lastTransitionTime"] = now
    cond.update(status=state, reason=reason, message=message, lastProbeTime=now)
    return True


def can_remove_finalizer(ctx: SyncContext, pod: Obj, failed: bool) -> bool:
    """Kubernetes' canRemoveFinalizer: the Job is going away or stopping, or the pod finished (unless it
    is the failed pod an index's replacement still has to read its failure count from)."""
    if ctx.job["metadata"].get("deletionTimestamp") or ctx.finished is not None or phase(pod) == "Succeeded":
        return True
    if not failed:
        return False
    index = job_indexed.pod_index(pod)
    kept = ctx.delayed.get(index) if index is not None else None
    return kept is None or kept["metadata"].get("uid") != pod["metadata"].get("uid")


class JobStatusMixin:
    client: RESTClient
    recorder: EventRecorder
    resource: ClassVar[str]
    finalizer_expectations: FinalizerExpectations
    backoff: BackoffStore

    async def track_status_and_remove_finalizers(self, key: str, ctx: SyncContext, old_status: Obj) -> None:
        """List newly finished pods as uncounted, remove their finalizers, count them; then finish."""
        job = ctx.job
        spec, status = job.get("spec") or {}, job["status"]
        indexed = spec.get("completionMode") == "Indexed"
        completions = int(spec.get("completions") or 0)
        policy = spec.get("podFailurePolicy")
        needs_flush = pruned(status) != pruned(old_status)
        pods = sorted(ctx.pods, key=lambda p: job_indexed.pod_index(p) or 0) if indexed else ctx.pods
        uids_with_finalizer = {p["metadata"].get("uid") or "" for p in pods if has_tracking_finalizer(p)}
        uids_with_finalizer -= ctx.expected_rm
        if clean_uncounted_pods_without_finalizers(status, uids_with_finalizer):
            needs_flush = True
        uncounted = uncounted_of(status)
        to_remove: list[Obj] = []
        new_indexes: set[int] = set()
        reached_max = False
        failing = ctx.finished is not None and ctx.finished["type"] != SUCCESS_CRITERIA_MET
        for pod in pods:
            uid = pod["metadata"].get("uid") or ""
            if not has_tracking_finalizer(pod) or uid in ctx.expected_rm:
                continue  # counted by an earlier sync
            failed = is_pod_failed(pod, job)
            if not can_remove_finalizer(ctx, pod, failed):
                continue  # still running (or kept for its replacement): its finalizer stays
            to_remove.append(pod)
            index = job_indexed.pod_index(pod)
            valid_index = index if index is not None and 0 <= index < completions else None
            if phase(pod) == "Succeeded" and uid not in ctx.uncounted_failed:
                if indexed:
                    if valid_index is not None and valid_index not in ctx.prev_succeeded_indexes:
                        new_indexes.add(valid_index)
                        needs_flush = True
                elif uid not in ctx.uncounted_succeeded:
                    uncounted.setdefault("succeeded", []).append(uid)
                    needs_flush = True
            elif failed or failing:  # a job that fails takes its unfinished pods with it
                if uid not in ctx.uncounted_failed and (not indexed or valid_index is not None):
                    if match_pod_failure_policy(policy, pod)[1]:
                        uncounted.setdefault("failed", []).append(uid)
                        needs_flush = True
            listed = len(new_indexes) + len(uncounted.get("succeeded") or []) + len(uncounted.get("failed") or [])
            if listed >= MAX_UNCOUNTED_PODS:
                reached_max = True  # the status writes and pod updates bring us back for the rest
                break
        if indexed:
            needs_flush = self._record_indexes(ctx, new_indexes) or needs_flush
        now = now_rfc3339()
        if ctx.finished is not None and ctx.finished["type"] == FAILURE_TARGET:
            reason, message = ctx.finished["reason"], ctx.finished["message"]
            set_condition(status, FAILURE_TARGET, "True", reason, message, now)
            needs_flush = True
            ctx.finished = new_condition(FAILED, reason, message)
        if ctx.finished is not None and ctx.finished["type"] == SUCCESS_CRITERIA_MET:
            reason, message = ctx.finished.get("reason") or "", ctx.finished.get("message") or ""
            if not condition_true(status, SUCCESS_CRITERIA_MET):
                set_condition(status, SUCCESS_CRITERIA_MET, "True", reason, message, now)
                needs_flush = True
            ctx.finished = new_condition(COMPLETE, reason, message)

        # Step 1 → 2: the uids are in the status before any finalizer goes.
        if needs_flush:
            await self.write_status(ctx)
            self.backoff.update(key, ctx.backoff)
            needs_flush = False
        status = ctx.job["status"]
        rm_err: Exception | None = None
        if to_remove:
            uids = [p["metadata"].get("uid") or "" for p in to_remove]
            self.finalizer_expectations.expect_removed(key, uids)
            results = await asyncio.gather(
                *(remove_tracking_finalizer(self.client, p) for p in to_remove), return_exceptions=True
            )
            for uid, result in zip(uids, results, strict=True):
                if isinstance(result, Exception):
                    self.finalizer_expectations.removal_observed(key, uid)  # no update is coming
                    rm_err = rm_err or result
                else:
                    uids_with_finalizer.discard(uid)
        # Step 3.
        if clean_uncounted_pods_without_finalizers(status, uids_with_finalizer):
            needs_flush = True
        if rm_err is not None:
            if needs_flush:
                await self.write_status(ctx)  # keep the progress that was made
            raise rm_err
        finished = not reached_max and self._enact_job_finished(ctx)
        if needs_flush or finished:
            await self.write_status(ctx)
        if finished:
            self._record_job_finished(ctx)

    @staticmethod
    def _record_indexes(ctx: SyncContext, new_indexes: set[int]) -> bool:
        """completedIndexes/succeeded (and failedIndexes) from this sync's indexes; True if changed."""
        status = ctx.job["status"]
        ctx.succeeded_indexes |= new_indexes
        text = job_indexed.format_intervals(ctx.succeeded_indexes)
        changed = text != (status.get("completedIndexes") or "")
        status["completedIndexes"] = text
        status["succeeded"] = len(ctx.succeeded_indexes)
        failed_text = None if ctx.failed_indexes is None else job_indexed.format_intervals(ctx.failed_indexes)
        if status.get("failedIndexes") != failed_text:
            changed = True
            if failed_text is None:
                status.pop("failedIndexes", None)
            else:
                status["failedIndexes"] = failed_text
        return changed

    def _enact_job_finished(self, ctx: SyncContext) -> bool:
        """Write the final condition, once nothing is uncounted and nothing terminating."""
        if ctx.finished is None:
            return False
        status = ctx.job["status"]
        uncounted = uncounted_of(status)
        if uncounted.get("succeeded") or uncounted.get("failed") or ctx.terminating > 0:
            return False
        now = now_rfc3339()
        cond = ctx.finished
        set_condition(status, cond["type"], "True", cond.get("reason") or "", cond.get("message") or "", now)
        if cond["type"] == COMPLETE:
            status["completionTime"] = now
        return True

    def _record_job_finished(self, ctx: SyncContext) -> None:
        job, cond = ctx.job, ctx.finished or {}
        if cond.get("type") == COMPLETE:
            completions = (job.get("spec") or {}).get("completions")
            if completions is not None and int(job["status"].get("succeeded") or 0) > int(completions):
                message = "Too many succeeded pods running after completion count reached"
                self.recorder.event(job, WARNING, "TooManySucceededPods", message)
            self.recorder.event(job, NORMAL, "Completed", "Job completed")
        else:
            self.recorder.event(job, WARNING, cond.get("reason") or "", cond.get("message") or "")

    async def write_status(self, ctx: SyncContext) -> None:
        """PUT /status with the resourceVersion we computed from: a stale view gets a 409 and is retried."""
        job = ctx.job
        body = {k: v for k, v in job.items() if k != "status"}
        body["status"] = pruned(job["status"])
        updated = await self.client.update_status(self.resource, body)
        updated_status = updated.setdefault("status", {})
        uncounted_of(updated_status)
        ctx.job = updated


def pruned(status: Obj) -> Obj:
    """The status as written: zero counters and empty lists omitted, as Kubernetes' omitempty does
    (`failedIndexes` is a pointer there: `""` is written, only an absent value is left out)."""
    out = copy.deepcopy(status)
    for counter in ("active", "succeeded", "failed"):
        if not out.get(counter):
            out.pop(counter, None)
    for key in ("conditions", "completedIndexes"):
        if not out.get(key):
            out.pop(key, None)
    if out.get("failedIndexes") is None:
        out.pop("failedIndexes", None)
    uncounted = out.setdefault("uncountedTerminatedPods", {})
    for kind in ("succeeded", "failed"):
        if not uncounted.get(kind):
            uncounted.pop(kind, None)
    return out
