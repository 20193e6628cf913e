"""JobController: run a batch/v1 Job's pods until enough of them have succeeded.

Desired state: `spec.completions` pods that exit successfully, with never more than
`spec.parallelism` running at once — `min(parallelism, completions - succeeded)` active pods while
the job runs, none while it is suspended (`spec.suspend: true`) or finished. Without `completions`
(work-queue mode) `parallelism` pods run until one of them succeeds; after that no more are created
and the job completes once none is active. In Indexed mode each index 0…completions-1 must succeed
once (job_indexed.py), and a `successPolicy` may declare success earlier (job_success_policy.py);
with `backoffLimitPerIndex` each index may instead fail, on its own budget of failures or at once
by a FailIndex rule, and is then never retried (job_backoff_per_index.py).
A job fails when more than `spec.backoffLimit` pods have failed, when it has been running longer
than `spec.activeDeadlineSeconds`, when a failed pod matches a FailJob rule of its
`spec.podFailurePolicy` (job_failure_policy.py; Ignore rules keep a failure from counting at all),
or, with `backoffLimitPerIndex`, when more than `spec.maxFailedIndexes` indexes failed or every
index is done and some failed.
Current state: the job's pods in the informer cache (claimed through ownerReferences and the
generated `batch.kubernetes.io/controller-uid` selector, adopting and releasing like the replica
manager), and the job's `status`: the counters, `status.uncountedTerminatedPods` and, Indexed,
`completedIndexes`/`failedIndexes`.
What it does about the difference: creates pods from `spec.template` (`<job>-xxxxx`, a controller
ownerReference with blockOwnerDeletion, and the `batch.kubernetes.io/job-tracking` finalizer) or
deletes the surplus, and writes `status` through the `/status` subresource: active, ready,
terminating, succeeded, failed, uncountedTerminatedPods, completedIndexes, failedIndexes,
startTime, completionTime and conditions.

Counting is Kubernetes' (≥ 1.26) finalizer tracking, job_tracking.py, written by job_status.py
(the second half of every sync, a mixin of this class): a finished pod is first
listed in `status.uncountedTerminatedPods`, then its finalizer is removed, then it moves into
`status.succeeded`/`status.failed` — so every finished pod is counted exactly once, across
controller-manager restarts, and even when it is deleted while nobody is looking (the finalizer
keeps it until it is counted). After failures, replacement pods wait for the pod failure back-off
(job_backoff.py: 10 s doubling to 10 min, computed from when the failed pods finished; with
`backoffLimitPerIndex` counted per index instead, from the index's own failures).

Finishing takes two steps, as in Kubernetes ≥ 1.31: first a *target* condition
(`SuccessCriteriaMet` or `FailureTarget`) is written and the remaining active pods are deleted;
once nothing is uncounted and no pod of the job is still terminating (`status.terminating` is 0),
the final condition (`Complete` or `Failed`) follows. A finished job is never touched again.
Events come "From job-controller":

    Normal   SuccessfulCreate      Created pod: pi-7xk2p
    Normal   Completed             Job completed
    Warning  BackoffLimitExceeded  Job has reached the specified backoff limit
    Warning  PodFailurePolicy      Container main for pod ns/x failed with exit code 42 matching FailJob rule at index 0
    Warning  FailedIndexes         Job has failed indexes

Why a subclass of ReplicaManager: everything between "a pod changed" and "this owner's key is
queued" (controller-ref resolution, orphans, expectations so a burst never over-creates), creating a
pod from a template with its events, and deleting one are exactly what the ReplicationController and
ReplicaSet need too. The decision — how many pods, what has been counted, when the owner is done —
is `reconcile` here (what has been counted, and finishing, in job_status.py); the pod handlers add
what finalizers need (expectations of their removal, and a queue entry `orphan-pod:<ns>/<name>` for
a pod that lost its job but still carries one).
Left out: `managedBy`; ttlSecondsAfterFinished is the ttl-after-finished controller's.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from api.labels import Selector, from_label_selector
from api.timestamps import now_rfc3339
from client import NORMAL, index_by_owner_uid, meta_namespace_key
from controller_manager.controllers import job_backoff_per_index as per_index
from controller_manager.controllers import job_indexed
from controller_manager.controllers.controller_ref_manager import controller_of, recheck_owner
from controller_manager.controllers.job_backoff import BackoffStore
from controller_manager.controllers.job_failure_policy import REASON_POD_FAILURE_POLICY, match_pod_failure_policy
from controller_manager.controllers.job_status import (
    BACKOFF_LIMIT_EXCEEDED,
    COMPLETIONS_REACHED,
    DEADLINE_EXCEEDED,
    FAILED,
    FAILURE_TARGET,
    SUCCESS_CRITERIA_MET,
    SUSPENDED,
    JobStatusMixin,
    SyncContext,
    condition,
    condition_true,
    is_finished,
    new_condition,
    set_condition,
)
from controller_manager.controllers.job_success_policy import REASON_SUCCESS_POLICY, match_success_policy
from controller_manager.controllers.job_tracking import (
    FinalizerExpectations,
    JobPodRefManager,
    has_tracking_finalizer,
    is_pod_failed,
    is_terminating,
    only_replace_failed_pods,
    phase,
    remove_tracking_finalizer,
    uncounted_of,
    with_tracking_finalizer,
)
from controller_manager.controllers.pod_util import deletion_order, is_active, is_ready, parse_time
from controller_manager.controllers.replica_manager import (
    ORPHAN_INDEX,
    OWNER_INDEX,
    SLOW_START_INITIAL_BATCH,
    ReplicaManager,
    orphans_by_namespace,
    slow_start_batch,
)

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]

ORPHAN_POD_PREFIX = "orphan-pod:"  # queue keys of pods whose finalizer must go (never a job key: no ':')
MAX_POD_CREATE_DELETE_PER_SYNC = 500


def _past_backoff_limit_on_failure(job: Obj, pods: list[Obj]) -> bool:
    """restartPolicy OnFailure: container restarts of running pods are failures all the same."""
    spec = job.get("spec") or {}
    if ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
        return False
    restarts = 0
    for pod in pods:
        if phase(pod) in ("Running", "Pending"):
            status = pod.get("status") or {}
            for cs in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
                restarts += int(cs.get("restartCount") or 0)
    limit = int(spec.get("backoffLimit", 6))
    return restarts > 0 if limit == 0 else restarts >= limit


def _past_deadline(spec: Obj, status: Obj) -> bool:
    deadline, started = spec.get("activeDeadlineSeconds"), parse_time(status.get("startTime"))
    if deadline is None or not started or spec.get("suspend"):
        return False
    return datetime.now(UTC).timestamp() - started >= float(deadline)


class JobController(JobStatusMixin, ReplicaManager):
    name = "job"
    component = "job-controller"
    resource = "jobs.batch"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.finalizer_expectations = FinalizerExpectations()
        self.backoff = BackoffStore()
        self.backoff_base = float(getattr(self.ctx.options, "job_pod_failure_backoff_base", 10.0))
        self.backoff_max = float(getattr(self.ctx.options, "job_pod_failure_backoff_max", 600.0))

    def selector_of(self, owner: Obj) -> Selector:
        return from_label_selector((owner.get("spec") or {}).get("selector"))

    # ------------------------------------------------------------------ informers → keys
    def setup(self) -> None:
        self.owners = self.ctx.informers.informer_for(self.resource)
        self.pods = self.ctx.informers.informer_for("pods")
        self.pods.add_indexers({OWNER_INDEX: index_by_owner_uid, ORPHAN_INDEX: orphans_by_namespace})
        self.owners.add_event_handler(self.enqueue, self._job_updated, self._owner_deleted)
        self.pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_deleted)

    def _job_updated(self, _old: Obj, new: Obj) -> None:
        self.enqueue(new)
        if is_finished(new):
            self._cleanup_pod_finalizers(new)  # a backup: finishing already removed them

    def _owner_deleted(self, owner: Obj) -> None:
        super()._owner_deleted(owner)
        self.enqueue(owner)
        self._cleanup_pod_finalizers(owner)

    def _cleanup_pod_finalizers(self, job: Obj) -> None:
        uid = (job.get("metadata") or {}).get("uid")
        for pod in self.pods.by_index(OWNER_INDEX, uid or ""):
            ref = controller_of(pod)
            if ref is not None and ref.get("uid") == uid and has_tracking_finalizer(pod):
                self._enqueue_orphan_pod(pod)

    def _enqueue_orphan_pod(self, pod: Obj) -> None:
        self.enqueue(ORPHAN_POD_PREFIX + meta_namespace_key(pod))

    def _pod_added(self, pod: Obj) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._pod_deleted(pod, final=False)  # seen for the first time already dying: not a creation
            return
        ref = controller_of(pod)
        if ref is not None:
            job = self._resolve(pod, ref)
            if job is not None:
                key = meta_namespace_key(job)
                self.expectations.creation_observed(key)
                self.enqueue(key)
            elif ref.get("kind") == "Job" and has_tracking_finalizer(pod):
                self._enqueue_orphan_pod(pod)  # its job is gone (deleted while we were down?): re-checked there
            return
        if has_tracking_finalizer(pod):
            self._enqueue_orphan_pod(pod)
        for job in self._matching_owners(pod):
            self.enqueue(job)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        if new["metadata"].get("deletionTimestamp"):
            self._pod_deleted(new, final=False)  # graceful deletion started: for us the pod is gone now
            return
        finalizer_removed = not has_tracking_finalizer(new)
        old_ref, new_ref = controller_of(old), controller_of(new)
        uid = new["metadata"].get("uid") or ""
        if old_ref != new_ref and old_ref is not None:
            old_job = self._resolve(old, old_ref)
            if old_job is not None:
                if finalizer_removed:
                    self.finalizer_expectations.removal_observed(meta_namespace_key(old_job), uid)
                self.enqueue(old_job)  # it lost a pod
        if new_ref is not None:
            job = self._resolve(new, new_ref)
            if job is not None:
                if finalizer_removed:
                    self.finalizer_expectations.removal_observed(meta_namespace_key(job), uid)
                self.enqueue(job)
            return
        if has_tracking_finalizer(new):
            self._enqueue_orphan_pod(new)
        if (old["metadata"].get("labels") or {}) != (new["metadata"].get("labels") or {}) or old_ref != new_ref:
            for job in self._matching_owners(new):
                self.enqueue(job)

    def _pod_deleted(self, pod: Obj, final: bool = True) -> None:
        ref = controller_of(pod)
        has_finalizer = has_tracking_finalizer(pod)
        if ref is None:
            if has_finalizer:
                self._enqueue_orphan_pod(pod)  # perhaps the garbage collector took its job's reference
            return
        job = self._resolve(pod, ref)
        if job is None or is_finished(job):
            if has_finalizer:
                self._enqueue_orphan_pod(pod)  # no sync of a job will remove this finalizer
            return
        key = meta_namespace_key(job)
        self.expectations.deletion_observed(key, meta_namespace_key(pod))
        if final or not has_finalizer:
            self.finalizer_expectations.removal_observed(key, pod["metadata"].get("uid") or "")
        self.enqueue(key)

    # ------------------------------------------------------------------ orphans
    async def _sync_orphan_pod(self, pod_key: str) -> None:
        """Remove the finalizer of a pod no running job will count (checked again, caches synced)."""
        pod = self.pods.get(pod_key)
        if pod is None:
            return
        ref = controller_of(pod)
        if ref is not None:
            if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return  # controlled by something else: not ours to touch
            job = self._resolve(pod, ref)
            if job is not None and not is_finished(job):
                return  # its job is alive (perhaps it adopted the pod): the job's sync counts it
        await remove_tracking_finalizer(self.client, pod)

    # ------------------------------------------------------------------ the reconcile
    async def reconcile(self, key: str) -> None:
        if key.startswith(ORPHAN_POD_PREFIX):
            await self._sync_orphan_pod(key.removeprefix(ORPHAN_POD_PREFIX))
            return
        shared = self.owners.get(key)
        if shared is None:
            self.expectations.delete(key)
            self.finalizer_expectations.delete(key)
            self.backoff.remove(key)
            return
        if is_finished(shared):
            self.backoff.remove(key)
            return
        job = copy.deepcopy(shared)
        spec, status = job.get("spec") or {}, job.setdefault("status", {})
        old_status = copy.deepcopy(status)
        uncounted = uncounted_of(status)
        # Expectations first: a pod arriving after this look is seen by the next sync.
        satisfied = self.expectations.satisfied(key)
        pods = await self._pods_for_job(job)
        active = [p for p in pods if is_active(p)]
        ctx = SyncContext(
            job=job,
            pods=pods,
            active=active,
            ready=sum(1 for p in active if is_ready(p)),
            terminating=sum(1 for p in pods if is_terminating(p)),
            uncounted_succeeded={str(u) for u in uncounted.get("succeeded") or []},
            uncounted_failed={str(u) for u in uncounted.get("failed") or []},
            expected_rm=self.finalizer_expectations.expected(key),
        )
        new_succeeded, new_failed = self._new_finished_pods(ctx)
        policy = spec.get("podFailurePolicy")
        counted_failures = [p for p in new_failed if match_pod_failure_policy(policy, p)[1]]
        ctx.succeeded = int(status.get("succeeded") or 0) + len(new_succeeded) + len(ctx.uncounted_succeeded)
        ctx.failed = int(status.get("failed") or 0) + len(counted_failures) + len(ctx.uncounted_failed)
        suspended = bool(spec.get("suspend"))
        if not status.get("startTime") and not suspended:
            status["startTime"] = now_rfc3339()
        ctx.backoff = self.backoff.new_record(key, new_succeeded, new_failed)

        # 1. Should the job stop? Decided once, then recorded as a target condition.
        if condition_true(status, SUCCESS_CRITERIA_MET):
            ctx.finished = condition(status, SUCCESS_CRITERIA_MET)
        else:
            target = condition(status, FAILURE_TARGET)
            if target is not None and target.get("status") == "True":
                ctx.finished = new_condition(FAILED, target.get("reason") or "", target.get("message") or "")
            elif (message := self._fail_job_message(job, pods)) is not None:
                ctx.finished = new_condition(FAILURE_TARGET, REASON_POD_FAILURE_POLICY, message)
        if ctx.finished is None:
            if ctx.failed > int(spec.get("backoffLimit", 6)) or _past_backoff_limit_on_failure(job, pods):
                ctx.finished = new_condition(FAILURE_TARGET, *BACKOFF_LIMIT_EXCEEDED)
            elif _past_deadline(spec, status):
                ctx.finished = new_condition(FAILURE_TARGET, *DEADLINE_EXCEEDED)
            elif spec.get("activeDeadlineSeconds") is not None and not suspended:
                left = parse_time(status["startTime"]) + float(spec["activeDeadlineSeconds"]) - time.time()
                self.enqueue_after(key, max(left, 0.0) + 0.1)
        if spec.get("completionMode") == "Indexed":
            self._sync_indexes(ctx)

        # 2. Stopping: remove what still runs. Running: keep the wanted number of pods active.
        manage_err: Exception | None = None
        active_count = len(active)
        if ctx.finished is not None:
            deleted, deleted_ready, manage_err = await self._delete_active_pods(job, active)
            if deleted != len(active) or not satisfied:
                ctx.finished = None  # pods may be left (or not yet in the cache): not finished yet
            active_count -= deleted
            ctx.terminating += deleted
            ctx.ready -= deleted_ready
        else:
            manage_called = False
            if satisfied and not job["metadata"].get("deletionTimestamp"):
                active_count, manage_err = await self._manage_job(key, ctx)
                manage_called = True
            completions = spec.get("completions")
            if completions is None:
                complete = ctx.succeeded > 0 and active_count == 0  # work queue: any success, then none active
            else:
                complete = ctx.succeeded >= int(completions) and active_count == 0
            if complete:
                ctx.finished = new_condition(SUCCESS_CRITERIA_MET, *COMPLETIONS_REACHED)
            elif manage_called:
                self._update_suspended_condition(job, status, suspended)
        status["active"] = active_count
        status["ready"] = ctx.ready
        status["terminating"] = ctx.terminating
        await self.track_status_and_remove_finalizers(key, ctx, old_status)
        if manage_err is not None:
            raise manage_err

    @staticmethod
    def _sync_indexes(ctx: SyncContext) -> None:
        """Indexed: which indexes succeeded (and failed, with backoffLimitPerIndex); may the job stop?"""
        job, pods = ctx.job, ctx.pods
        spec = job.get("spec") or {}
        pieces = int(spec.get("completions") or 0)
        ctx.prev_succeeded_indexes, ctx.succeeded_indexes = job_indexed.calculate_succeeded_indexes(job, pods)
        ctx.succeeded = len(ctx.succeeded_indexes)
        if per_index.has_backoff_limit_per_index(job):
            failed = ctx.failed_indexes = per_index.calculate_failed_indexes(job, pods)
            if ctx.finished is None:
                max_failed = spec.get("maxFailedIndexes")
                if max_failed is not None and len(failed) > int(max_failed):
                    ctx.finished = new_condition(FAILURE_TARGET, *per_index.MAX_FAILED_INDEXES_EXCEEDED)
                elif failed and len(failed) + len(ctx.succeeded_indexes) >= pieces:
                    ctx.finished = new_condition(FAILURE_TARGET, *per_index.FAILED_INDEXES)
            done = ctx.succeeded_indexes | failed
            ctx.delayed = per_index.pods_with_delayed_deletion(job, pods, ctx.active, done, ctx.expected_rm)
        if ctx.finished is None:
            message, met = match_success_policy(spec.get("successPolicy"), pieces, ctx.succeeded_indexes)
            if met:
                ctx.finished = new_condition(SUCCESS_CRITERIA_MET, REASON_SUCCESS_POLICY, message)

    def _update_suspended_condition(self, job: Obj, status: Obj, suspended: bool) -> None:
        now = now_rfc3339()
        if suspended:
            if set_condition(status, SUSPENDED, "True", "JobSuspended", "Job suspended", now):
                self.recorder.event(job, NORMAL, "Suspended", "Job suspended")
        elif condition(status, SUSPENDED) is not None:
            if set_condition(status, SUSPENDED, "False", "JobResumed", "Job resumed", now):
                self.recorder.event(job, NORMAL, "Resumed", "Job resumed")
                status["startTime"] = now  # activeDeadlineSeconds counts continuous activity

    async def _pods_for_job(self, job: Obj) -> list[Obj]:
        meta = job["metadata"]
        candidates = {meta_namespace_key(p): p for p in self.pods.by_index(OWNER_INDEX, meta["uid"])}
        for p in self.pods.by_index(ORPHAN_INDEX, meta.get("namespace") or ""):
            candidates.setdefault(meta_namespace_key(p), p)
        refs = JobPodRefManager(self.client, job, self.selector_of(job), recheck_owner(self.client, self.resource, job))
        return await refs.claim(list(candidates.values()))

    def _new_finished_pods(self, ctx: SyncContext) -> tuple[list[Obj], list[Obj]]:
        """Finished pods not yet in the status: they still carry the finalizer and are not listed."""
        spec = ctx.job.get("spec") or {}
        indexed = spec.get("completionMode") == "Indexed"
        completions = int(spec.get("completions") or 0)
        succeeded, failed = [], []
        for pod in ctx.pods:
            uid = pod["metadata"].get("uid") or ""
            if not has_tracking_finalizer(pod) or uid in ctx.expected_rm:
                continue
            index = job_indexed.pod_index(pod)
            if indexed and (index is None or not 0 <= index < completions):
                continue
            if phase(pod) == "Succeeded" and uid not in ctx.uncounted_succeeded:
                succeeded.append(pod)
            elif is_pod_failed(pod, ctx.job) and uid not in ctx.uncounted_failed:
                failed.append(pod)
        return succeeded, failed

    @staticmethod
    def _fail_job_message(job: Obj, pods: list[Obj]) -> str | None:
        policy = (job.get("spec") or {}).get("podFailurePolicy")
        if not policy:
            return None
        for pod in pods:
            if is_pod_failed(pod, job):
                message, _, _ = match_pod_failure_policy(policy, pod)
                if message is not None:
                    return message
        return None

    # ------------------------------------------------------------------ pods: how many, which
    async def _manage_job(self, key: str, ctx: SyncContext) -> tuple[int, Exception | None]:
        """Create or delete pods; returns the number active afterwards and the first error."""
        job = ctx.job
        spec = job.get("spec") or {}
        active = ctx.active
        parallelism = int(spec.get("parallelism") or 0)
        if spec.get("suspend"):
            removed, removed_ready, err = await self._delete_job_pods(key, job, active)
            ctx.terminating += removed
            ctx.ready -= removed_ready
            return len(active) - removed, err
        completions = spec.get("completions")
        if completions is None:
            want = len(active) if ctx.succeeded > 0 else parallelism  # work queue: no new pods after a success
        else:
            want = max(0, min(int(completions) - ctx.succeeded, parallelism))
        to_delete = self._pods_for_removal(job, active, max(0, len(active) - want))[:MAX_POD_CREATE_DELETE_PER_SYNC]
        if to_delete:
            removed, removed_ready, err = await self._delete_job_pods(key, job, to_delete)
            ctx.terminating += removed
            ctx.ready -= removed_ready
            return len(active) - removed, err  # deletion or creation in one sync, never both
        replace_failed_only = only_replace_failed_pods(job)
        diff = want - (ctx.terminating if replace_failed_only else 0) - len(active)
        if diff <= 0:
            return len(active), None
        now = time.time()
        has_per_index = per_index.has_backoff_limit_per_index(job)
        if not has_per_index:  # with backoffLimitPerIndex the back-off is counted per index, below
            remaining = ctx.backoff.remaining_time(now, self.backoff_base, self.backoff_max)
            if remaining > 0:
                log.info("Job %s: %d failure(s) since the last success, next pod in %.1fs",
                         key, ctx.backoff.failures_after_last_success, remaining)
                self.enqueue_after(key, remaining)
                return len(active), None
        diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC, self.burst_replicas)
        if spec.get("completionMode") != "Indexed":
            created, err = await self._create_pods(key, job, diff)
            return len(active) + created, err
        terminating = job_indexed.terminating_pods(ctx.pods) if replace_failed_only else []
        done = ctx.succeeded_indexes | (ctx.failed_indexes or set())
        indexes = job_indexed.first_pending_indexes(diff, int(completions or 0), done, active, terminating)
        if has_per_index:
            indexes, remaining = per_index.indexes_to_create_now(
                indexes, ctx.delayed, now, self.backoff_base, self.backoff_max
            )
            if remaining > 0:
                log.info("Job %s: every index to run is backing off, next pod in %.1fs", key, remaining)
                self.enqueue_after(key, remaining)
                return len(active), None
        created, err = await self._create_index_pods(key, job, indexes, ctx.delayed if has_per_index else None)
        return len(active) + created, err

    @staticmethod
    def _pods_for_removal(job: Obj, active: list[Obj], at_least: int) -> list[Obj]:
        spec = job.get("spec") or {}
        remove: list[Obj] = []
        left = active
        if spec.get("completionMode") == "Indexed":
            remove, left = job_indexed.duplicated_or_invalid(active, int(spec.get("completions") or 0))
        if len(remove) < at_least:
            remove += deletion_order(left, active)[: at_least - len(remove)]
        return remove

    async def _create_pods(self, key: str, job: Obj, count: int) -> tuple[int, Exception | None]:
        # Expect before the first POST: the informer may deliver the pod before create() returns.
        self.expectations.expect_creations(key, count)
        log.info("Job %s: creating %d pod(s)", key, count)
        ok, err = await slow_start_batch(
            count, SLOW_START_INITIAL_BATCH, lambda: self._create_pod(job, with_tracking_finalizer)
        )
        for _ in range(count - ok):
            self.expectations.creation_observed(key)  # never coming: do not wait for them
        return ok, err

    async def _create_index_pods(
        self, key: str, job: Obj, indexes: list[int], replaced: dict[int, Obj] | None
    ) -> tuple[int, Exception | None]:
        """One pod per index; with backoffLimitPerIndex (`replaced` given) annotated with its failure count."""
        if not indexes:
            return 0, None
        self.expectations.expect_creations(key, len(indexes))
        name = job["metadata"]["name"]

        def shape(index: int) -> Callable[[Obj], Obj]:
            def make(pod: Obj) -> Obj:
                pod = with_tracking_finalizer(job_indexed.for_index(pod, name, index))
                if replaced is not None:
                    pod = per_index.with_failure_counts(pod, job, replaced.get(index))
                return pod

            return make

        results = await asyncio.gather(*(self._create_pod(job, shape(i)) for i in indexes), return_exceptions=True)
        errs = [r for r in results if isinstance(r, Exception)]
        for _ in errs:
            self.expectations.creation_observed(key)
        return len(indexes) - len(errs), (errs[0] if errs else None)

    async def _delete_job_pods(
        self, key: str, job: Obj, pods: list[Obj]
    ) -> tuple[int, int, Exception | None]:
        """Delete pods the job no longer wants: finalizer first, so that they are never counted."""
        if not pods:
            return 0, 0, None
        self.expectations.expect_deletions(key, [meta_namespace_key(p) for p in pods])
        log.info("Job %s: deleting %d pod(s)", key, len(pods))

        async def delete(pod: Obj) -> None:
            try:
                await remove_tracking_finalizer(self.client, pod)
            except Exception:
                self.expectations.deletion_observed(key, meta_namespace_key(pod))
                raise
            await self._delete_pod(job, pod)

        results = await asyncio.gather(*(delete(p) for p in pods), return_exceptions=True)
        return self._deletion_counts(pods, results)

    async def _delete_active_pods(self, job: Obj, pods: list[Obj]) -> tuple[int, int, Exception | None]:
        """A finishing job's pods: deleted *with* their finalizers, which the tracking then removes."""
        results = await asyncio.gather(*(self._delete_pod(job, p) for p in pods), return_exceptions=True)
        return self._deletion_counts(pods, results)

    @staticmethod
    def _deletion_counts(pods: list[Obj], results: list[Any]) -> tuple[int, int, Exception | None]:
        errs = [r for r in results if isinstance(r, Exception)]
        ready = sum(1 for p, r in zip(pods, results, strict=True) if not isinstance(r, Exception) and is_ready(p))
        return len(pods) - len(errs), ready, (errs[0] if errs else None)
