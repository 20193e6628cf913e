"""The scheduling queue: which pending pod to try next, and when to try a failed one again.

Three places a pending pod can wait, as in kube-scheduler:

    activeQ          ready to be tried now; a heap ordered by priority (higher first), then by
                     creation time (older first) - the PrioritySort plugin
    backoffQ         failed recently; waits out its backoff (initial * 2^(attempts-1), capped at
                     max: 1 s, 2 s, 4 s, ... 10 s by default), then moves to activeQ by itself
    unschedulablePods  no node fits it *in the cluster as it is*. Trying again is pointless until
                     the cluster changes, so it waits for a change: a node added, a node whose
                     labels/taints/allocatable/cordon changed, an assigned pod deleted or finished.
                     Each such event moves every unschedulable pod to activeQ (or to backoffQ if its
                     backoff has not run out yet). A slow safety net moves pods that waited longer
                     than --pod-max-in-unschedulable-pods-duration anyway.

One race needs care: the cluster may change *while* a pod is being tried (the node gets its label
a millisecond after the filter ran). Putting that pod in unschedulablePods would park it until
the next change, maybe forever. So each pop starts a numbered scheduling cycle, and each move
request remembers the cycle it happened in; a pod that fails in a cycle no later than the last
move request goes to backoffQ instead, and is retried soon.

Pods are identified by key (`ns/name`); the queue keeps the newest pod object it was told about.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

ACTIVE, BACKOFF, UNSCHEDULABLE = "active", "backoff", "unschedulable"


@dataclass
class QueuedPodInfo:
    key: str
    pod: Obj
    attempts: int = 0  # scheduling attempts so far (drives the backoff)
    timestamp: float = 0.0  # when it last entered the queue
    initial_attempt: float | None = None  # first pop: start of the end-to-end latency
    where: str = ""  # ACTIVE / BACKOFF / UNSCHEDULABLE / "" (in flight)
    seq: int = 0  # invalidates stale heap entries (lazy deletion)
    cycle: int = 0  # the scheduling cycle of its last pop
    sort_key: tuple[Any, ...] = field(default_factory=tuple)


def _sort_key(pod: Obj) -> tuple[int, str]:
    return (
        -int((pod.get("spec") or {}).get("priority") or 0),
        (pod.get("metadata") or {}).get("creationTimestamp") or "",
    )


def _spec_changed(old: Obj, new: Obj) -> bool:
    """A change that could make the pod schedulable (not a status write, not our own condition)."""
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    return (
        old.get("spec") != new.get("spec")
        or om.get("labels") != nm.get("labels")
        or om.get("annotations") != nm.get("annotations")
    )


class SchedulingQueue:
    def __init__(
        self,
        *,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_in_unschedulable: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self.clock = clock
        self._pods: dict[str, QueuedPodInfo] = {}  # every pod the queue knows, waiting or in flight
        self._active: list[tuple[tuple[Any, ...], int, str]] = []
        self._backoff: list[tuple[float, int, str]] = []
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._counts = {ACTIVE: 0, BACKOFF: 0}
        self._seq = itertools.count()
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self._wakeup = asyncio.Event()  # activeQ got something
        self._backoff_changed = asyncio.Event()
        self.closed = False

    # ------------------------------------------------------------------ sizes (for metrics)

    def pending(self) -> dict[str, int]:
        return {ACTIVE: self._counts[ACTIVE], BACKOFF: self._counts[BACKOFF], UNSCHEDULABLE: len(self._unschedulable)}

    def __contains__(self, key: str) -> bool:
        return key in self._pods

    # ------------------------------------------------------------------ informer events

    def add(self, pod: Obj) -> None:
        """A new pending pod (or one we already know: then this is an update)."""
        key = _key(pod)
        qp = self._pods.get(key)
        if qp is not None:
            self.update(qp.pod, pod)
            return
        qp = QueuedPodInfo(key, pod, timestamp=self.clock(), sort_key=_sort_key(pod))
        self._pods[key] = qp
        self._push_active(qp)

    def update(self, old: Obj, new: Obj) -> None:
        key = _key(new)
        qp = self._pods.get(key)
        if qp is None:
            self.add(new)
            return
        changed = _spec_changed(qp.pod, new)
        qp.pod = new
        if changed and qp.where == UNSCHEDULABLE:  # the user fixed the pod: try it again
            del self._unschedulable[key]
            self._move_out_of_unschedulable(qp)
        elif changed and qp.where == ACTIVE:
            qp.sort_key = _sort_key(new)
            self._push_active(qp)  # re-sort (priority may have changed); the old entry goes stale

    def delete(self, key: str) -> None:
        qp = self._pods.pop(key, None)
        if qp is None:
            return
        if qp.where == UNSCHEDULABLE:
            del self._unschedulable[key]
        elif qp.where in self._counts:
            self._counts[qp.where] -= 1
        qp.where = ""
        qp.seq = -1  # any heap entry for it is now stale

    # ------------------------------------------------------------------ the scheduling loop's side

    async def pop(self) -> QueuedPodInfo:
        """The next pod to try (waits while activeQ is empty). It is then "in flight" until
        `done` or `add_unschedulable`."""
        while True:
            while self._active:
                _, seq, key = heapq.heappop(self._active)
                qp = self._pods.get(key)
                if qp is None or qp.seq != seq or qp.where != ACTIVE:
                    continue  # stale entry
                self._counts[ACTIVE] -= 1
                qp.where = ""
                qp.attempts += 1
                self.scheduling_cycle += 1
                qp.cycle = self.scheduling_cycle
                if qp.initial_attempt is None:
                    qp.initial_attempt = self.clock()
                return qp
            if self.closed:
                raise asyncio.CancelledError
            self._wakeup.clear()
            await self._wakeup.wait()

    def done(self, key: str) -> None:
        """The pod left the queue for good (bound, or no longer ours)."""
        qp = self._pods.get(key)
        if qp is not None and qp.where == "":
            del self._pods[key]

    def add_unschedulable(self, qp: QueuedPodInfo, *, error: bool = False) -> None:
        """The attempt failed. An error (binding failed, API trouble) or a cluster change during
        the attempt sends the pod to backoffQ; otherwise it waits for the cluster to change."""
        if self._pods.get(qp.key) is not qp:
            return  # deleted meanwhile
        qp.timestamp = self.clock()
        if error or self.move_request_cycle >= qp.cycle:
            self._push_backoff(qp)
        else:
            qp.where = UNSCHEDULABLE
            self._unschedulable[qp.key] = qp

    # ------------------------------------------------------------------ cluster events

    def move_all_to_active_or_backoff(self, event: str = "") -> int:
        """The cluster changed: every unschedulable pod deserves another look."""
        moved = list(self._unschedulable.values())
        self._unschedulable.clear()
        for qp in moved:
            self._move_out_of_unschedulable(qp)
        self.move_request_cycle = self.scheduling_cycle
        return len(moved)

    def _move_out_of_unschedulable(self, qp: QueuedPodInfo) -> None:
        if self.backoff_expiry(qp) > self.clock():
            self._push_backoff(qp)
        else:
            self._push_active(qp)

    # ------------------------------------------------------------------ backoff

    def backoff_duration(self, qp: QueuedPodInfo) -> float:
        duration = self.initial_backoff
        for _ in range(1, qp.attempts):
            duration *= 2
            if duration >= self.max_backoff:
                return self.max_backoff
        return min(duration, self.max_backoff)

    def backoff_expiry(self, qp: QueuedPodInfo) -> float:
        return qp.timestamp + self.backoff_duration(qp)

    def flush_backoff_completed(self) -> float | None:
        """Move pods whose backoff ran out to activeQ; returns when the next one runs out."""
        now = self.clock()
        while self._backoff:
            expiry, seq, key = self._backoff[0]
            qp = self._pods.get(key)
            if qp is None or qp.seq != seq or qp.where != BACKOFF:
                heapq.heappop(self._backoff)
                continue
            if expiry > now:
                return expiry
            heapq.heappop(self._backoff)
            self._counts[BACKOFF] -= 1
            self._push_active(qp)
        return None

    def flush_unschedulable_leftover(self) -> None:
        """The safety net: pods parked longer than max_in_unschedulable go back in line."""
        now = self.clock()
        for key, qp in list(self._unschedulable.items()):
            if now - qp.timestamp > self.max_in_unschedulable:
                del self._unschedulable[key]
                self._move_out_of_unschedulable(qp)

    async def run(self) -> None:
        """Background upkeep: backoffQ -> activeQ exactly when backoffs end, and the slow flush."""
        leftover_every = max(min(30.0, self.max_in_unschedulable / 4), 0.05)
        next_leftover = self.clock() + leftover_every
        while not self.closed:
            next_expiry = self.flush_backoff_completed()
            now = self.clock()
            if now >= next_leftover:
                self.flush_unschedulable_leftover()
                next_leftover = now + leftover_every
            wake_at = min(next_leftover, next_expiry) if next_expiry is not None else next_leftover
            self._backoff_changed.clear()
            try:
                await asyncio.wait_for(self._backoff_changed.wait(), max(wake_at - self.clock(), 0.001))
            except TimeoutError:
                pass

    def close(self) -> None:
        self.closed = True
        self._wakeup.set()
        self._backoff_changed.set()

    # ------------------------------------------------------------------ internals

    def _push_active(self, qp: QueuedPodInfo) -> None:
        if qp.where in self._counts:
            self._counts[qp.where] -= 1
        qp.seq = next(self._seq)
        qp.where = ACTIVE
        self._counts[ACTIVE] += 1
        heapq.heappush(self._active, (qp.sort_key, qp.seq, qp.key))
        self._wakeup.set()

    def _push_backoff(self, qp: QueuedPodInfo) -> None:
        if qp.where in self._counts:
            self._counts[qp.where] -= 1
        qp.seq = next(self._seq)
        qp.where = BACKOFF
        self._counts[BACKOFF] += 1
        heapq.heappush(self._backoff, (self.backoff_expiry(qp), qp.seq, qp.key))
        self._backoff_changed.set()


def _key(pod: Obj) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
