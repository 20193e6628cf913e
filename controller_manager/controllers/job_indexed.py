"""Indexed Jobs (`completionMode: Indexed`): pod *i* does piece *i* of the work, for i in 0…completions-1.

Where a NonIndexed Job only counts successes, an Indexed Job tracks *which* pieces are done. Each
pod is made for one index and says so everywhere a program could look, as Kubernetes does:

    annotation and label  batch.kubernetes.io/job-completion-index: "3"
    environment           JOB_COMPLETION_INDEX=3  (downward API from that annotation)
    hostname              <job>-3   (with the template's subdomain, a stable DNS name per piece)
    name                  <job>-3-xxxxx

The set of finished indexes lives in `status.completedIndexes` as compressed intervals
(`"0-2,4,7-9"`), so a controller that restarts knows exactly which pieces never need to run again:
an index that succeeded once is never given a new pod. `status.succeeded` is the size of that set.
A succeeded pod's index is added to `completedIndexes` *before* its tracking finalizer is removed
(see job_tracking.py), so the index itself is what keeps it from being counted twice.

Which pods run: the lowest indexes that have neither succeeded (nor, with `backoffLimitPerIndex`,
failed: job_backoff_per_index.py) nor an active pod (nor, when only failed pods are replaced, a pod
still terminating). A second active pod for the same index, or one
with an index out of range, is deleted first when there are too many.
"""

from __future__ import annotations

import copy
from typing import Any

from controller_manager.controllers.job_tracking import has_tracking_finalizer, is_terminating, phase

Obj = dict[str, Any]
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
INDEX_ENV = "JOB_COMPLETION_INDEX"


def parse_intervals(text: str | None) -> set[int]:
    """`"0-2,4"` → {0, 1, 2, 4}; unreadable parts are ignored."""
    out: set[int] = set()
    for part in (text or "").split(","):
        first, _, last = part.strip().partition("-")
        try:
            lo = int(first)
            hi = int(last) if last else lo
        except ValueError:
            continue
        out.update(range(lo, hi + 1))
    return out


def format_intervals(indexes: set[int]) -> str:
    """{0, 1, 2, 4, 6, 7} → `"0-2,4,6,7"` (Kubernetes' compressed form: a pair is written as two)."""
    parts: list[str] = []
    ordered = sorted(indexes)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if i == j:
            parts.append(str(ordered[i]))
        else:
            parts.append(f"{ordered[i]}{',' if j == i + 1 else '-'}{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def pod_index(pod: Obj) -> int | None:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(INDEX_KEY)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def for_index(pod: Obj, job_name: str, index: int) -> Obj:
    """A copy of a pod made from the Job's template, turned into the pod of piece `index`."""
    pod = copy.deepcopy(pod)
    md = pod["metadata"]
    md["generateName"] = f"{job_name}-{index}-"
    md.setdefault("annotations", {})[INDEX_KEY] = str(index)
    md.setdefault("labels", {})[INDEX_KEY] = str(index)
    spec = pod["spec"]
    spec["hostname"] = f"{job_name}-{index}"
    env_var = {"name": INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{INDEX_KEY}']"}}}
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        env = [e for e in container.get("env") or [] if e.get("name") != INDEX_ENV]
        container["env"] = [env_var, *env]
    return pod


def calculate_succeeded_indexes(job: Obj, pods: list[Obj]) -> tuple[set[int], set[int]]:
    """(indexes already in `status.completedIndexes`, those plus succeeded pods not yet counted)."""
    completions = int((job.get("spec") or {}).get("completions") or 0)
    previous = {i for i in parse_intervals((job.get("status") or {}).get("completedIndexes")) if i < completions}
    now = set(previous)
    for pod in pods:
        index = pod_index(pod)
        if phase(pod) == "Succeeded" and index is not None and 0 <= index < completions and has_tracking_finalizer(pod):
            now.add(index)
    return previous, now


def first_pending_indexes(
    count: int, completions: int, done: set[int], active: list[Obj], terminating: list[Obj]
) -> list[int]:
    """The `count` lowest indexes nobody is working on and that are not done (succeeded or failed)."""
    busy = set(done) | {i for p in [*active, *terminating] if (i := pod_index(p)) is not None}
    return [i for i in range(completions) if i not in busy][:count]


def duplicated_or_invalid(active: list[Obj], completions: int) -> tuple[list[Obj], list[Obj]]:
    """(pods to remove whatever happens: no index, out of range, or a second one for an index; the rest)."""
    remove, keep, seen = [], [], set()
    for pod in active:
        index = pod_index(pod)
        if index is None or not 0 <= index < completions or index in seen:
            remove.append(pod)
        else:
            seen.add(index)
            keep.append(pod)
    return remove, keep


def terminating_pods(pods: list[Obj]) -> list[Obj]:
    return [p for p in pods if is_terminating(p)]
