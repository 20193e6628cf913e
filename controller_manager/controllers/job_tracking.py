"""Counting a Job's finished pods exactly once: the `batch.kubernetes.io/job-tracking` finalizer.

A pod's outcome must land in the Job's `status.succeeded`/`status.failed` once, even if the pod is
deleted the moment it finishes, or the controller-manager dies half-way through counting. Kubernetes
(≥ 1.26) gets there in three steps, each one safe to repeat after a crash:

    1. every pod the Job controller creates (or adopts) carries the finalizer, so it cannot
       disappear from the API before it is counted, however it is deleted;
    2. a finished pod's uid is written to `status.uncountedTerminatedPods.succeeded` / `.failed`
       (PUT /status, guarded by resourceVersion);
    3. the finalizer is removed from the pod; then the uids whose pods no longer carry it move
       from the uncounted lists into the counters, in one more status write.

After a restart the lists say where it stopped: a uid still listed whose pod has no finalizer (or
is gone) was counted in step 3's sense and only its move is repeated; a pod with the finalizer and
not listed has not been counted at all. Between steps the informer cache may still show a pod with
its finalizer after we removed it, so the uids we removed it from are remembered per Job
(*finalizer expectations*, Kubernetes' uidTrackingExpectations) and skipped until the removal is
seen. A pod that loses its Job (the Job is deleted or finished, the pod is released or orphaned)
gets the finalizer removed by the controller too, or it would hang in Terminating for ever.

What counts as *failed*: phase Failed; and, unless only failed pods are replaced
(`podReplacementPolicy: Failed`, always the case with a podFailurePolicy), also a pod that is being
deleted before it finished — it will never get the chance to succeed.
"""

from __future__ import annotations

from typing import Any

from api.errors import NotFoundError
from api.labels import Selector
from client import RESTClient
from controller_manager.controllers.controller_ref_manager import ControllerRefManager, owner_reference

Obj = dict[str, Any]

JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
# Kubernetes' MaxUncountedPods: keeps the uid lists (and one sync's finalizer removals) bounded.
MAX_UNCOUNTED_PODS = 500


def has_tracking_finalizer(pod: Obj) -> bool:
    return JOB_TRACKING_FINALIZER in ((pod.get("metadata") or {}).get("finalizers") or [])


def with_tracking_finalizer(pod: Obj) -> Obj:
    """A pod about to be created, with the finalizer added (once)."""
    finalizers: list[str] = pod["metadata"].setdefault("finalizers", [])
    if JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(JOB_TRACKING_FINALIZER)
    return pod


REMOVE_FINALIZER_PATCH = {"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}}


async def remove_tracking_finalizer(client: RESTClient, pod: Obj) -> None:
    """Strategic-merge PATCH taking only our finalizer out of the list (a pod already gone is fine)."""
    if not has_tracking_finalizer(pod):
        return
    meta = pod["metadata"]
    try:
        await client.patch("pods", meta["name"], REMOVE_FINALIZER_PATCH, meta.get("namespace"), patch_type="strategic")
    except NotFoundError:
        pass


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def is_terminating(pod: Obj) -> bool:
    """Being deleted and not finished yet: its containers may still run (`status.terminating`)."""
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and phase(pod) not in ("Succeeded", "Failed")


def only_replace_failed_pods(job: Obj) -> bool:
    """`podReplacementPolicy: Failed` (the only value allowed with a podFailurePolicy)."""
    spec = job.get("spec") or {}
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def is_pod_failed(pod: Obj, job: Obj) -> bool:
    if phase(pod) == "Failed":
        return True
    if only_replace_failed_pods(job):
        return False
    # A pod deleted before it finished never gets the chance to reach Failed: count it as failed.
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and phase(pod) != "Succeeded"


def uncounted_of(status: Obj) -> Obj:
    """`status.uncountedTerminatedPods`, created empty (`{}`) as Kubernetes writes it."""
    uncounted = status.get("uncountedTerminatedPods")
    if not isinstance(uncounted, dict):
        uncounted = status["uncountedTerminatedPods"] = {}
    return uncounted


def clean_uncounted_pods_without_finalizers(status: Obj, uids_with_finalizer: set[str]) -> bool:
    """Step 3's second half: listed uids whose pods lost the finalizer move into the counters."""
    uncounted = uncounted_of(status)
    changed = False
    for kind in ("succeeded", "failed"):
        listed = [str(u) for u in uncounted.get(kind) or []]
        keep = [u for u in listed if u in uids_with_finalizer]
        if len(keep) != len(listed):
            changed = True
            status[kind] = int(status.get(kind) or 0) + len(listed) - len(keep)
        if keep:
            uncounted[kind] = keep
        else:
            uncounted.pop(kind, None)
    return changed


class FinalizerExpectations:
    """Per Job key, the pod uids whose finalizer removal we asked for and have not seen yet."""

    def __init__(self) -> None:
        self._uids: dict[str, set[str]] = {}

    def expected(self, key: str) -> set[str]:
        return set(self._uids.get(key, ()))

    def expect_removed(self, key: str, uids: list[str]) -> None:
        self._uids.setdefault(key, set()).update(uids)

    def removal_observed(self, key: str, uid: str) -> None:
        uids = self._uids.get(key)
        if uids is not None:
            uids.discard(uid)
            if not uids:
                del self._uids[key]

    def delete(self, key: str) -> None:
        self._uids.pop(key, None)


class JobPodRefManager(ControllerRefManager):
    """Claims pods for a Job like any controller, and adds/removes the tracking finalizer with the
    ownerReference (Kubernetes passes the finalizer to its PodControllerRefManager the same way)."""

    def __init__(self, client: RESTClient, job: Obj, selector: Selector, can_adopt: Any) -> None:
        super().__init__(client, "pods", job, selector, can_adopt)

    async def adopt(self, obj: Obj) -> Obj | None:
        if not self._adopt_checked:
            await self._can_adopt()
            self._adopt_checked = True
        meta = obj["metadata"]
        patch = {
            "metadata": {
                "ownerReferences": [owner_reference(self.owner)],
                "uid": meta["uid"],
                "finalizers": [JOB_TRACKING_FINALIZER],
            }
        }
        try:
            return await self.client.patch("pods", meta["name"], patch, meta.get("namespace"), patch_type="strategic")
        except NotFoundError:
            return None

    async def release(self, obj: Obj) -> None:
        meta = obj["metadata"]
        patch = {
            "metadata": {
                "ownerReferences": [{"$patch": "delete", "uid": self.uid}],
                "$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER],
                "uid": meta["uid"],
            }
        }
        try:
            await self.client.patch("pods", meta["name"], patch, meta.get("namespace"), patch_type="strategic")
        except NotFoundError:
            pass
