"""JobController: run a batch/v1 Job's pods until enough of them have succeeded (NonIndexed mode).

Desired state: `spec.completions` pods that exit successfully, with never more than
`spec.parallelism` running at once — `min(parallelism, completions - succeeded)` active pods while
the job runs, none while it is suspended (`spec.suspend: true`) or finished. Without `completions`
(work-queue mode) `parallelism` pods run until one of them succeeds; after that no more are created
and the job completes once none is active. A job fails when more than `spec.backoffLimit` pods have
failed, or when it has been running longer than `spec.activeDeadlineSeconds`.
Current state: the job's pods in the informer cache (claimed through ownerReferences and the
generated `batch.kubernetes.io/controller-uid` selector, adopting and releasing like the replica
manager) and the counts already recorded in the job's `status`.
What it does about the difference: creates pods from `spec.template` (`<job>-xxxxx`, a controller
ownerReference with blockOwnerDeletion) or deletes the surplus, and writes `status` through the
`/status` subresource: active, ready, succeeded, failed, startTime, completionTime and conditions.
Finishing takes two steps, as in Kubernetes ≥ 1.31: first a *target* condition
(`SuccessCriteriaMet` or `FailureTarget`) is written and the remaining active pods are deleted;
once no pod of the job is still running or terminating, the final condition (`Complete` or
`Failed`) follows. A finished job is never touched again. Events come "From job-controller":

    Normal   SuccessfulCreate      Created pod: pi-7xk2p
    Normal   Completed             Job completed
    Warning  BackoffLimitExceeded  Job has reached the specified backoff limit

Why a subclass of ReplicaManager: everything between "a pod changed" and "this owner's key is
queued" (controller-ref resolution, orphans, expectations so a burst never over-creates), creating a
pod from a template with its events, deleting one, and writing status are exactly what the
ReplicationController and ReplicaSet need too. Only the decision — how many pods, and when the
owner is done — differs, and that is `reconcile` here.

Simplification — counting without finalizers. Kubernetes puts a `batch.kubernetes.io/job-tracking`
finalizer on every job pod and removes it only after the pod's outcome is in `status`
(via `status.uncountedTerminatedPods`), so a finished pod that is deleted is never lost. mini-k8s
does not: it counts the Succeeded/Failed pods that exist and remembers, per job and in memory,
which pod uids it has already counted, so `status.succeeded`/`status.failed` only ever grow and a
pod is counted once. A controller that first sees a job (a fresh process, a new leader) takes the
larger of `status` and what exists, assuming `status` already includes the finished pods that are
still there. What this cannot see: a pod that finishes *and* disappears between two looks, or
finishes while the controller-manager is down and is deleted before it is back. Pods this
controller deletes itself (suspend, surplus, a finishing job) are not counted either way.
Indexed completion mode is in `job_indexed.py`; ttlSecondsAfterFinished is the ttl-after-finished
controller's. Also left out: the exponential back-off before recreating failed pods,
podFailurePolicy, successPolicy, backoffLimitPerIndex and `status.terminating`.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from api.labels import Selector, from_label_selector
from client import NORMAL, WARNING, meta_namespace_key
from controller_manager.controllers import job_indexed
from controller_manager.controllers.controller_ref_manager import ControllerRefManager, recheck_owner
from controller_manager.controllers.pod_util import deletion_order, is_active, is_ready, parse_time
from controller_manager.controllers.replica_manager import (
    ORPHAN_INDEX,
    OWNER_INDEX,
    SLOW_START_INITIAL_BATCH,
    ReplicaManager,
    slow_start_batch,
)
from controller_manager.controllers.timeutil import now_rfc3339

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]

# Condition types, reasons and messages as Kubernetes writes them.
COMPLETE, FAILED, SUSPENDED = "Complete", "Failed", "Suspended"
SUCCESS_CRITERIA_MET, FAILURE_TARGET = "SuccessCriteriaMet", "FailureTarget"
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")


@dataclass
class _Tally:
    """What this process has counted for one job (see "counting without finalizers" above)."""

    succeeded: int = 0
    failed: int = 0
    counted: set[str] = field(default_factory=set)  # pod uids already in succeeded/failed
    deleted_by_us: set[str] = field(default_factory=set)  # pod uids never to count


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _is_terminating(pod: Obj) -> bool:
    """Being deleted but not finished yet: still running on its node."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and _phase(pod) not in ("Succeeded", "Failed")


def _condition(status: Obj, type_: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), None)


def _condition_true(status: Obj, type_: str) -> bool:
    cond = _condition(status, type_)
    return cond is not None and cond.get("status") == "True"


def is_finished(job: Obj) -> bool:
    status = job.get("status") or {}
    return _condition_true(status, COMPLETE) or _condition_true(status, FAILED)


def _set_condition(status: Obj, type_: str, state: str, reason: str, message: str, now: str) -> bool:
    """Add or update a condition; lastTransitionTime moves only when the status flips. True if changed."""
    conditions: list[Obj] = status.setdefault("conditions", [])
    cond = _condition(status, type_)
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


def _restarts(pod: Obj) -> int:
    return sum(int(c.get("restartCount") or 0) for c in (pod.get("status") or {}).get("containerStatuses") or [])


class JobController(ReplicaManager):
    name = "job"
    component = "job-controller"
    resource = "jobs.batch"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tallies: dict[str, _Tally] = {}  # job uid → what we counted

    def selector_of(self, owner: Obj) -> Selector:
        return from_label_selector((owner.get("spec") or {}).get("selector"))

    def _owner_deleted(self, owner: Obj) -> None:
        super()._owner_deleted(owner)
        self._tallies.pop((owner.get("metadata") or {}).get("uid") or "", None)

    # ------------------------------------------------------------------ counting
    def _count(self, job: Obj, pods: list[Obj]) -> _Tally:
        """Fold newly finished pods into the job's tally; the counts never go down."""
        meta, spec, status = job["metadata"], job.get("spec") or {}, job.get("status") or {}
        # Pods deleted while the job was suspended or finishing were deleted by us (perhaps by a
        # previous process): their outcome says nothing about the work.
        ours_to_ignore = bool(spec.get("suspend")) or _condition_true(status, FAILURE_TARGET)
        ours_to_ignore = ours_to_ignore or _condition_true(status, SUCCESS_CRITERIA_MET)
        tally = self._tallies.setdefault(meta["uid"], _Tally())
        for pod in pods:
            pmeta = pod["metadata"]
            uid, phase = pmeta.get("uid") or "", _phase(pod)
            if phase not in ("Succeeded", "Failed") or uid in tally.counted or uid in tally.deleted_by_us:
                continue
            if pmeta.get("deletionTimestamp") and ours_to_ignore:
                continue
            tally.counted.add(uid)
            if phase == "Succeeded":
                tally.succeeded += 1
            else:
                tally.failed += 1
        # On a first look `status` may already hold pods that are gone; later it may lag behind our
        # own writes (a stale cache) or hold what another controller-manager counted: take the larger.
        tally.succeeded = max(tally.succeeded, int(status.get("succeeded") or 0))
        tally.failed = max(tally.failed, int(status.get("failed") or 0))
        return tally

    # ------------------------------------------------------------------ the reconcile
    async def reconcile(self, key: str) -> None:
        job = self.owners.get(key)
        if job is None:
            self.expectations.delete(key)
            return
        meta = job["metadata"]
        if is_finished(job) or meta.get("deletionTimestamp"):
            return  # done (or on its way out: the garbage collector removes the pods)
        candidates = {meta_namespace_key(p): p for p in self.pods.by_index(OWNER_INDEX, meta["uid"])}
        for p in self.pods.by_index(ORPHAN_INDEX, meta.get("namespace") or ""):
            candidates.setdefault(meta_namespace_key(p), p)
        refs = ControllerRefManager(
            self.client, "pods", job, self.selector_of(job), recheck_owner(self.client, self.resource, job)
        )
        pods = await refs.claim(list(candidates.values()))
        tally = self._count(job, pods)

        status: Obj = copy.deepcopy(job.get("status") or {})
        if (job.get("spec") or {}).get("completionMode") == "Indexed":
            tally.succeeded = self._completed_indexes(job, pods, status)
        active = [p for p in pods if is_active(p)]
        status["succeeded"], status["failed"] = tally.succeeded, tally.failed
        status["ready"] = sum(1 for p in active if is_ready(p))
        status["active"] = len(active)
        err: Exception | None = None
        if self.expectations.satisfied(key):  # else the cache is behind our own creations/deletions
            try:
                await self._sync(key, job, status, tally, active, pods)
            except Exception as exc:  # noqa: BLE001 - status first, then retried with back-off
                err = exc
        for counter in ("active", "succeeded", "failed"):
            if not status.get(counter):
                status.pop(counter)  # omitted when zero, as Kubernetes' omitempty does
        if not status.get("conditions"):
            status.pop("conditions", None)
        await self.update_status(job, status)
        if err is not None:
            raise err

    @staticmethod
    def _completed_indexes(job: Obj, pods: list[Obj], status: Obj) -> int:
        """Fold succeeded pods into `status.completedIndexes`; the number of finished pieces."""
        completions = int((job.get("spec") or {}).get("completions") or 0)
        done = job_indexed.parse_intervals(status.get("completedIndexes"))
        for pod in pods:
            index = job_indexed.pod_index(pod)
            if _phase(pod) == "Succeeded" and index is not None and 0 <= index < completions:
                done.add(index)
        if done:
            status["completedIndexes"] = job_indexed.format_intervals(done)
        return len(done)

    async def _sync(self, key: str, job: Obj, status: Obj, tally: _Tally, active: list[Obj], pods: list[Obj]) -> None:
        """Decide and act; `status` is updated in place."""
        spec = job.get("spec") or {}
        now = now_rfc3339()
        completions = spec.get("completions")
        parallelism = int(spec.get("parallelism") or 0)
        suspended = bool(spec.get("suspend"))

        # 1. Should the job stop? Decided once, then recorded as a target condition.
        if not (_condition_true(status, FAILURE_TARGET) or _condition_true(status, SUCCESS_CRITERIA_MET)):
            failures = tally.failed
            if ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") == "OnFailure":
                failures += sum(_restarts(p) for p in active)  # restarted in place: failures all the same
            if failures > int(spec.get("backoffLimit", 6)):
                _set_condition(status, FAILURE_TARGET, "True", *BACKOFF_LIMIT_EXCEEDED, now)
            elif not suspended and self._past_deadline(spec, status):
                _set_condition(status, FAILURE_TARGET, "True", *DEADLINE_EXCEEDED, now)
            elif (completions is not None and tally.succeeded >= int(completions)) or (
                completions is None and tally.succeeded > 0 and not active
            ):
                _set_condition(status, SUCCESS_CRITERIA_MET, "True", *COMPLETIONS_REACHED, now)

        # 2. Stopping: remove what still runs, then make it final once nothing runs any more.
        failing = _condition(status, FAILURE_TARGET)
        if (failing is not None and failing.get("status") == "True") or _condition_true(status, SUCCESS_CRITERIA_MET):
            await self._delete_pods(key, job, active, tally)
            status["active"] = 0
            if any(_is_terminating(p) for p in pods) or active:
                return  # the deletions (or earlier ones) show up as pod events: we come back then
            if failing is not None and failing.get("status") == "True":
                reason, message = failing.get("reason") or "", failing.get("message") or ""
                _set_condition(status, FAILED, "True", reason, message, now)
                self.recorder.event(job, WARNING, reason, message)
            else:
                _set_condition(status, COMPLETE, "True", *COMPLETIONS_REACHED, now)
                status["completionTime"] = now
                self.recorder.event(job, NORMAL, "Completed", "Job completed")
            return

        # 3. Suspended: nothing runs. Resumed: the clock (startTime, the deadline) starts again.
        if suspended:
            await self._delete_pods(key, job, active, tally)
            status["active"] = 0
            if _set_condition(status, SUSPENDED, "True", "JobSuspended", "Job suspended", now):
                self.recorder.event(job, NORMAL, "Suspended", "Job suspended")
            return
        if _condition_true(status, SUSPENDED):
            _set_condition(status, SUSPENDED, "False", "JobResumed", "Job resumed", now)
            status["startTime"] = now
            self.recorder.event(job, NORMAL, "Resumed", "Job resumed")
        status.setdefault("startTime", now)

        # 4. Running: keep the wanted number of pods active.
        if spec.get("completionMode") == "Indexed":
            await self._sync_indexes(key, job, status, active, tally)
            return
        if completions is None:
            want = parallelism if tally.succeeded == 0 else len(active)  # work queue: no new pods after a success
        else:
            want = max(0, min(parallelism, int(completions) - tally.succeeded))
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None:
            left = parse_time(status["startTime"]) + float(deadline) - datetime.now(UTC).timestamp()
            self.enqueue_after(key, max(left, 0.0) + 0.1)
        if want > len(active):
            created = await self._create_pods(key, job, want - len(active))
            status["active"] = len(active) + created
        elif want < len(active):
            surplus = deletion_order(active, active)[: len(active) - want]
            await self._delete_pods(key, job, surplus, tally)
            status["active"] = want

    async def _sync_indexes(self, key: str, job: Obj, status: Obj, active: list[Obj], tally: _Tally) -> None:
        """One active pod for each unfinished index, lowest first, at most `parallelism` of them."""
        spec = job.get("spec") or {}
        completions, parallelism = int(spec.get("completions") or 0), int(spec.get("parallelism") or 0)
        done = job_indexed.parse_intervals(status.get("completedIndexes"))
        running: dict[int, Obj] = {}
        extra: list[Obj] = []
        for pod in active:
            index = job_indexed.pod_index(pod)
            if index is None or index >= completions or index in done or index in running:
                extra.append(pod)  # out of range, already finished, or a second pod for the index
            else:
                running[index] = pod
        await self._delete_pods(key, job, extra, tally)
        pending = [i for i in range(completions) if i not in done and i not in running]
        room = max(0, parallelism - len(running))
        created = await self._create_index_pods(key, job, pending[: min(room, self.burst_replicas)])
        status["active"] = len(running) + created

    async def _create_index_pods(self, key: str, job: Obj, indexes: list[int]) -> int:
        if not indexes:
            return 0
        self.expectations.expect_creations(key, len(indexes))
        name = job["metadata"]["name"]
        results = await asyncio.gather(
            *(self._create_pod(job, lambda pod, i=i: job_indexed.for_index(pod, name, i)) for i in indexes),
            return_exceptions=True,
        )
        errs = [r for r in results if isinstance(r, Exception)]
        for _ in errs:
            self.expectations.creation_observed(key)
        if errs:
            raise errs[0]
        return len(indexes)

    @staticmethod
    def _past_deadline(spec: Obj, status: Obj) -> bool:
        deadline, started = spec.get("activeDeadlineSeconds"), parse_time(status.get("startTime"))
        if deadline is None or not started:
            return False
        return datetime.now(UTC).timestamp() - started >= float(deadline)

    # ------------------------------------------------------------------ acting on pods
    async def _create_pods(self, key: str, job: Obj, count: int) -> int:
        count = min(count, self.burst_replicas)
        # Expect before the first POST: the informer may deliver the pod before create() returns.
        self.expectations.expect_creations(key, count)
        log.info("Job %s: creating %d pod(s)", key, count)
        ok, err = await slow_start_batch(count, SLOW_START_INITIAL_BATCH, lambda: self._create_pod(job))
        for _ in range(count - ok):
            self.expectations.creation_observed(key)  # never coming: do not wait for them
        if err is not None:
            raise err
        return ok

    async def _delete_pods(self, key: str, job: Obj, pods: list[Obj], tally: _Tally) -> None:
        if not pods:
            return
        tally.deleted_by_us.update(p["metadata"].get("uid") or "" for p in pods)
        self.expectations.expect_deletions(key, [meta_namespace_key(p) for p in pods])
        log.info("Job %s: deleting %d pod(s)", key, len(pods))
        results = await asyncio.gather(*(self._delete_pod(job, p) for p in pods), return_exceptions=True)
        errs = [r for r in results if isinstance(r, Exception)]
        if errs:
            raise errs[0]
