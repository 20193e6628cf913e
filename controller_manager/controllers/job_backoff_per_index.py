"""`spec.backoffLimitPerIndex` (Indexed Jobs): each index gets its own failure budget and back-off.

    completionMode: Indexed
    completions: 10
    backoffLimitPerIndex: 1      # each index may fail once; its second failure fails the index
    maxFailedIndexes: 3          # more than three failed indexes fail the whole Job

Desired state: every index either succeeds or *fails* — an index fails when a pod of it fails while
`spec.backoffLimitPerIndex` failures of it have already been counted, or at once when the pod's
failure matches a `FailIndex` rule of the podFailurePolicy. A failed index gets no more pods.
Current state: the failures of an index are carried from pod to pod in an annotation, as in
Kubernetes — a replacement pod says how many of its predecessors failed:

    batch.kubernetes.io/job-index-failure-count: "1"          counted failures (0 on the first pod)
    batch.kubernetes.io/job-index-ignored-failure-count: "2"  failures an Ignore rule let pass (if any)

and the failed indexes are recorded in `status.failedIndexes` (the interval form of
`completedIndexes`; `""` while none has failed), so a restarted controller knows them too.
What the Job controller does with it (job.py):
- the failed pod of an index is the source of its replacement's annotation, so its tracking
  finalizer (and with it the pod) is kept until that replacement exists ("delayed deletion");
- the pod failure back-off is counted per index, from that failed pod: the replacement waits
  `base · 2^(n-1)` after the index's n-th failure (capped), whatever the other indexes do;
- the Job fails — FailureTarget, then Failed — with reason `MaxFailedIndexesExceeded` as soon as more
  than `maxFailedIndexes` indexes failed, or with reason `FailedIndexes` once every index has either
  succeeded or failed and some failed. `spec.backoffLimit` still applies to the total, but the API
  server defaults it to 2147483647 when `backoffLimitPerIndex` is set.
"""

from __future__ import annotations

from typing import Any

from controller_manager.controllers import job_indexed
from controller_manager.controllers.job_backoff import finished_time, remaining_time_for_failures
from controller_manager.controllers.job_failure_policy import FAIL_INDEX, match_pod_failure_policy
from controller_manager.controllers.job_tracking import has_tracking_finalizer, is_pod_failed

Obj = dict[str, Any]

INDEX_FAILURE_COUNT_KEY = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURE_COUNT_KEY = "batch.kubernetes.io/job-index-ignored-failure-count"
MAX_FAILED_INDEXES_EXCEEDED = (
    "MaxFailedIndexesExceeded",
    "Job has exceeded the specified maximal number of failed indexes",
)
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")
MAX_INT32 = 2**31 - 1


def has_backoff_limit_per_index(job: Obj) -> bool:
    return (job.get("spec") or {}).get("backoffLimitPerIndex") is not None


def _annotation_count(pod: Obj, key: str) -> int:
    """An annotation's count; 0 when absent, unreadable, negative or beyond int32 (as Kubernetes)."""
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(key)
    try:
        count = int(value) if value is not None else 0
    except ValueError:
        return 0
    return count if 0 <= count <= MAX_INT32 else 0


def index_failure_count(pod: Obj) -> int:
    return _annotation_count(pod, INDEX_FAILURE_COUNT_KEY)


def absolute_failure_count(pod: Obj) -> int:
    """Failures of the pod's index before it, counted or ignored."""
    return index_failure_count(pod) + _annotation_count(pod, INDEX_IGNORED_FAILURE_COUNT_KEY)


def _valid_index(pod: Obj, completions: int) -> int | None:
    index = job_indexed.pod_index(pod)
    return index if index is not None and 0 <= index < completions else None


def is_index_failed(job: Obj, pod: Obj) -> bool:
    """Does this pod's failure fail its index? (FailIndex rule, or the index's budget is used up.)"""
    if not is_pod_failed(pod, job):
        return False
    spec = job.get("spec") or {}
    _, counts, action = match_pod_failure_policy(spec.get("podFailurePolicy"), pod)
    if action == FAIL_INDEX:
        return True
    return counts and index_failure_count(pod) >= int(spec.get("backoffLimitPerIndex") or 0)


def calculate_failed_indexes(job: Obj, pods: list[Obj]) -> set[int]:
    """`status.failedIndexes` plus the indexes whose not yet counted pods fail them now."""
    completions = int((job.get("spec") or {}).get("completions") or 0)
    recorded = job_indexed.parse_intervals((job.get("status") or {}).get("failedIndexes"))
    failed = {i for i in recorded if i < completions}
    for pod in pods:
        index = _valid_index(pod, completions)
        if index is not None and has_tracking_finalizer(pod) and is_index_failed(job, pod):
            failed.add(index)
    return failed


def pods_with_delayed_deletion(
    job: Obj, pods: list[Obj], active: list[Obj], done: set[int], expected_rm: set[str]
) -> dict[int, Obj]:
    """Per index still to be retried, its latest failed pod: it keeps its finalizer until a replacement
    carries its count on. `done` are the succeeded and failed indexes (no replacement coming)."""
    completions = int((job.get("spec") or {}).get("completions") or 0)
    busy = done | {i for p in active if (i := job_indexed.pod_index(p)) is not None}
    delayed: dict[int, Obj] = {}
    for pod in pods:
        uid = (pod.get("metadata") or {}).get("uid") or ""
        if not has_tracking_finalizer(pod) or uid in expected_rm or not is_pod_failed(pod, job):
            continue
        index = _valid_index(pod, completions)
        if index is None or index in busy:
            continue
        last = delayed.get(index)
        if last is None or (
            absolute_failure_count(last) <= absolute_failure_count(pod) and finished_time(pod) >= finished_time(last)
        ):
            delayed[index] = pod
    return delayed


def new_failure_counts(job: Obj, replaced: Obj | None) -> tuple[int, int]:
    """(failure count, ignored failure count) for the pod that replaces `replaced` (None: a first pod)."""
    if replaced is None:
        return 0, 0
    count, ignored = index_failure_count(replaced), _annotation_count(replaced, INDEX_IGNORED_FAILURE_COUNT_KEY)
    if match_pod_failure_policy((job.get("spec") or {}).get("podFailurePolicy"), replaced)[1]:
        return count + 1, ignored
    return count, ignored + 1


def with_failure_counts(pod: Obj, job: Obj, replaced: Obj | None) -> Obj:
    """The pod about to be created, annotated with its index's failures so far."""
    count, ignored = new_failure_counts(job, replaced)
    annotations = pod["metadata"].setdefault("annotations", {})
    annotations[INDEX_FAILURE_COUNT_KEY] = str(count)
    if ignored > 0:
        annotations[INDEX_IGNORED_FAILURE_COUNT_KEY] = str(ignored)
    return pod


def remaining_time_for_index(now: float, base: float, cap: float, last_failed: Obj | None) -> float:
    """The back-off still ahead of an index whose latest failed pod is `last_failed`."""
    if last_failed is None:
        return 0.0
    failures = absolute_failure_count(last_failed) + 1
    return remaining_time_for_failures(now, base, cap, failures, finished_time(last_failed))


def indexes_to_create_now(
    indexes: list[int], delayed: dict[int, Obj], now: float, base: float, cap: float
) -> tuple[list[int], float]:
    """(the indexes whose back-off is over; if none, the shortest wait among the others)."""
    ready: list[int] = []
    waits: list[float] = []
    for index in indexes:
        remaining = remaining_time_for_index(now, base, cap, delayed.get(index))
        if remaining == 0:
            ready.append(index)
        else:
            waits.append(remaining)
    if ready:
        return ready, 0.0
    return [], min(waits, default=0.0)
