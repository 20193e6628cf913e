"""TTLAfterFinishedController: a finished Job with `spec.ttlSecondsAfterFinished` cleans itself up.

Desired state: no Job that finished (condition Complete or Failed is True) more than
`ttlSecondsAfterFinished` seconds ago. Jobs without the field are kept forever.
Current state: Jobs from the informer; the finish time is the `lastTransitionTime` of that
condition.
What it does about the difference: a finished Job whose time is up is deleted — with `Foreground`
propagation, so its pods go first and the Job is the last thing to disappear, and with a UID
precondition, so a new Job that took the same name meanwhile is never hit. Before deleting, the
Job is read again from the API server rather than the cache, as Kubernetes does: someone may have
just raised its TTL. A Job whose time is not up yet is queued again for the moment it will be.

`kubectl get jobs` then shows the Job for exactly its TTL after it finished — `ttlSecondsAfterFinished:
0` removes it as soon as it is done, which is how a CronJob-less "run once and vanish" task is written.
"""

from __future__ import annotations

import time
from typing import Any

from api import errors
from api.timestamps import parse_time
from client.informer import split_key
from controller_manager.controller import Controller

Obj = dict[str, Any]


def finished_at(job: Obj) -> float | None:
    """Seconds since the epoch at which the Job finished, None if it has not."""
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return parse_time(cond.get("lastTransitionTime")) or parse_time(job["metadata"].get("creationTimestamp"))
    return None


def expires_in(job: Obj, now: float) -> float | None:
    """Seconds until the Job may be deleted (<= 0: now); None when it never expires (no TTL, not finished)."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    done = finished_at(job)
    if ttl is None or done is None or job["metadata"].get("deletionTimestamp"):
        return None
    return done + int(ttl) - now


class TTLAfterFinishedController(Controller):
    name = "ttl-after-finished"
    component = "ttl-after-finished-controller"

    def setup(self) -> None:
        self.jobs = self.ctx.informers.informer_for("jobs")
        self.jobs.add_event_handler(self._changed, lambda _old, new: self._changed(new))

    def _changed(self, job: Obj) -> None:
        if expires_in(job, time.time()) is not None:
            self.enqueue(job)

    async def reconcile(self, key: str) -> None:
        cached = self.jobs.get(key)
        if cached is None or (left := expires_in(cached, time.time())) is None:
            return
        if left > 0:
            self.enqueue_after(key, left)
            return
        namespace, name = split_key(key)
        try:
            fresh = await self.client.get("jobs", name, namespace)
        except errors.NotFoundError:
            return
        left = expires_in(fresh, time.time())
        if left is None:
            return
        if left > 0:  # someone raised the TTL since the cache saw it
            self.enqueue_after(key, left)
            return
        try:
            await self.client.delete(
                "jobs", name, namespace, propagation_policy="Foreground",
                preconditions={"uid": fresh["metadata"]["uid"]},
            )  # fmt: skip
        except (errors.NotFoundError, errors.ConflictError):
            pass  # already gone, or a different Job by that name now
