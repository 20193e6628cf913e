"""The scheduler's control loop: give every pending pod of ours a node.

Desired state: every pod with `spec.schedulerName` = ours and no `spec.nodeName` is bound to a
node that fits it. Current state: the pods and nodes in the informers' caches, plus the pods we
assumed onto nodes and are still binding. What we do about the difference, one pod at a time:

    scheduling cycle (synchronous, the hot loop)        binding cycle (a task per pod, in parallel)
    pop the best pending pod from the queue             POST pods/<name>/binding
    filter + score the nodes (algorithm.py)       ──▶   ok:   Event Scheduled; the informer will
    assume the pod onto the chosen node (cache.py)            show it bound and confirm the assumption
                                                        fail: forget the assumption, back off, retry

A pod no node fits gets a `FailedScheduling` Warning event and its PodScheduled condition set
to False/Unschedulable with the same message, then waits in the queue for the cluster to change.

The informer handlers only feed the cache and the queue; they never schedule. Node heartbeats
(status-only node updates) change nothing the filters read, so they neither touch the cache's
numbers nor wake unschedulable pods.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from api.errors import ConflictError, NotFoundError
from client import WARNING, EventRecorder, Informer, RESTClient
from client.events import NORMAL
from scheduler.algorithm import Algorithm, NoNodesAvailable
from scheduler.cache import TERMINAL_PHASES, SchedulerCache, counts_on_node
from scheduler.fit_error import FitError
from scheduler.framework import Obj, PodInfo
from scheduler.metrics import SchedulerMetrics
from scheduler.options import SchedulerOptions
from scheduler.plugins import default_filters, default_scores
from scheduler.queue import QueuedPodInfo, SchedulingQueue

log = logging.getLogger("scheduler")

DEFAULT_SCHEDULER_NAME = "default-scheduler"


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def _assigned(pod: Obj) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def _pod_ref(pod: Obj) -> Obj:
    """Enough of the pod for an Event's involvedObject."""
    return {"kind": "Pod", "apiVersion": "v1", "metadata": pod.get("metadata") or {}}


class Scheduler:
    def __init__(
        self, client: RESTClient, recorder: EventRecorder, options: SchedulerOptions, metrics: SchedulerMetrics
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.options = options
        self.metrics = metrics
        self.profile = options.scheduler_name
        self.cache = SchedulerCache()
        self.queue = SchedulingQueue(
            initial_backoff=options.pod_initial_backoff_seconds,
            max_backoff=options.pod_max_backoff_seconds,
            max_in_unschedulable=options.pod_max_in_unschedulable_pods_duration,
        )
        self.algorithm = Algorithm(
            default_filters(),
            default_scores(),
            percentage_of_nodes_to_score=options.percentage_of_nodes_to_score,
            seed=options.seed,
        )
        self._bind_slots = asyncio.Semaphore(max(options.parallel_binds, 1))
        self._tasks: set[asyncio.Task[Any]] = set()
        self.pods: Informer | None = None

    # ------------------------------------------------------------------ informer handlers

    def register(self, pods: Informer, nodes: Informer) -> None:
        self.pods = pods
        nodes.add_event_handler(self._on_node_add, self._on_node_update, self._on_node_delete)
        pods.add_event_handler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)

    def _responsible(self, pod: Obj) -> bool:
        spec = pod.get("spec") or {}
        return (spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME) == self.profile and not (
            pod.get("metadata") or {}
        ).get("deletionTimestamp")

    def _move_all(self, event: str) -> None:
        moved = self.queue.move_all_to_active_or_backoff(event)
        if moved:
            self.metrics.incoming_pods.labels("active", event).inc(moved)

    def _on_node_add(self, node: Obj) -> None:
        self.cache.add_node(node)
        self._move_all("NodeAdd")

    def _on_node_update(self, old: Obj, new: Obj) -> None:
        if self.cache.update_node(old, new):
            self._move_all("NodeUpdate")

    def _on_node_delete(self, node: Obj) -> None:
        self.cache.remove_node(node)

    def _on_pod_add(self, pod: Obj) -> None:
        if _assigned(pod):
            if counts_on_node(pod):
                self.cache.add_pod(pod)
        elif self._responsible(pod) and (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES:
            self.queue.add(pod)
            self.metrics.incoming_pods.labels("active", "PodAdd").inc()

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        key = _key(new)
        if _assigned(new):
            if not _assigned(old):
                self.queue.delete(key)  # bound (by us, or by someone else): no longer pending
            if counts_on_node(new):
                if counts_on_node(old):
                    self.cache.update_pod(old, new)
                else:
                    self.cache.add_pod(new)
            elif self.cache.remove_pod(key):  # it finished: its resources are free again
                self._move_all("AssignedPodDelete")
        elif self._responsible(new):
            self.queue.update(old, new)
        else:
            self.queue.delete(key)

    def _on_pod_delete(self, pod: Obj) -> None:
        key = _key(pod)
        self.queue.delete(key)
        if self.cache.remove_pod(key):
            self._move_all("AssignedPodDelete")

    # ------------------------------------------------------------------ the scheduling loop

    async def run(self) -> None:
        """Schedule until cancelled (for as long as we lead)."""
        upkeep = asyncio.create_task(self.queue.run(), name="scheduling-queue")
        try:
            while True:
                qp = await self.queue.pop()
                try:
                    self.schedule_one(qp)
                except Exception:  # a bug must cost one attempt, not the scheduler
                    log.exception("scheduling %s failed", qp.key)
                    self.queue.add_unschedulable(qp, error=True)
                await asyncio.sleep(0)  # let watches and bindings run between pods
        finally:
            upkeep.cancel()
            self.queue.close()

    def schedule_one(self, qp: QueuedPodInfo) -> None:
        pod = self.pods.get(qp.key) if self.pods is not None else qp.pod
        if pod is None or _assigned(pod) or not self._responsible(pod) or self.cache.is_assumed(qp.key):
            self.queue.delete(qp.key)  # deleted, bound, or no longer ours while it waited
            return
        start = time.perf_counter()
        pi = PodInfo(pod)
        try:
            node = self.algorithm.schedule(pi, self.cache.node_list(), self.cache.nodes)
        except (FitError, NoNodesAvailable) as err:
            self.metrics.schedule_attempts.labels("unschedulable", self.profile).inc()
            self.metrics.attempt_duration.labels("unschedulable", self.profile).observe(time.perf_counter() - start)
            self._record_failure(pod, "Unschedulable", str(err))
            self.queue.add_unschedulable(qp)
            return
        self.cache.assume_pod(pi, node)  # counts on the node from now on: no over-commit in a burst
        self._spawn(self._bind(qp, pi, node, start))

    # ------------------------------------------------------------------ the binding cycle

    async def _bind(self, qp: QueuedPodInfo, pi: PodInfo, node: str, start: float) -> None:
        async with self._bind_slots:
            try:
                await self.client.bind(pi.namespace, pi.name, node, pod_uid=pi.uid)
            except asyncio.CancelledError:
                self.cache.forget_pod(pi.key)
                raise
            except NotFoundError:  # deleted while we chose: nothing to do
                self.cache.forget_pod(pi.key)
                self.queue.delete(pi.key)
                return
            except ConflictError as exc:
                self.cache.forget_pod(pi.key)
                if "already assigned" in str(exc):  # someone else bound it; the informer will say where
                    self.queue.delete(pi.key)
                    return
                self._binding_failed(qp, pi, exc)
                return
            except Exception as exc:
                self.cache.forget_pod(pi.key)
                self._binding_failed(qp, pi, exc)
                return
        elapsed = time.perf_counter() - start
        self.metrics.schedule_attempts.labels("scheduled", self.profile).inc()
        self.metrics.attempt_duration.labels("scheduled", self.profile).observe(elapsed)
        if qp.initial_attempt is not None:
            self.metrics.sli_duration.labels(str(min(qp.attempts, 16))).observe(self.queue.clock() - qp.initial_attempt)
        self.recorder.event(
            _pod_ref(pi.pod), NORMAL, "Scheduled", f"Successfully assigned {pi.namespace}/{pi.name} to {node}"
        )
        self.queue.done(pi.key)

    def _binding_failed(self, qp: QueuedPodInfo, pi: PodInfo, exc: Exception) -> None:
        log.warning("binding %s failed: %s", pi.key, exc)
        self.metrics.schedule_attempts.labels("error", self.profile).inc()
        self._record_failure(pi.pod, "SchedulerError", f"Binding rejected: {exc}")
        self.queue.add_unschedulable(qp, error=True)
        self._move_all("AssignedPodDelete")  # the forgotten assumption freed room for others

    # ------------------------------------------------------------------ telling the user

    def _record_failure(self, pod: Obj, reason: str, message: str) -> None:
        """FailedScheduling event, and PodScheduled=False with the same message on the pod."""
        self.recorder.event(_pod_ref(pod), WARNING, "FailedScheduling", message)
        for cond in (pod.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "PodScheduled":
                if cond.get("status") == "False" and cond.get("reason") == reason and cond.get("message") == message:
                    return  # already says so: do not write the same thing again
                break
        self._spawn(self._set_unschedulable_condition(pod, reason, message))

    async def _set_unschedulable_condition(self, pod: Obj, reason: str, message: str) -> None:
        meta = pod.get("metadata") or {}
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        patch = {
            "status": {
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": reason,
                        "message": message,
                        "lastProbeTime": None,
                        "lastTransitionTime": now,
                    }
                ]
            }
        }
        try:
            await self.client.patch(
                "pods",
                meta.get("name") or "",
                patch,
                meta.get("namespace"),
                patch_type="strategic",
                subresource="status",
            )
        except NotFoundError:
            pass
        except Exception as exc:
            log.warning("could not update the PodScheduled condition of %s: %s", _key(pod), exc)

    # ------------------------------------------------------------------ housekeeping

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def refresh_gauges(self) -> None:
        for queue, n in self.queue.pending().items():
            self.metrics.pending_pods.labels(queue).set(n)
        self.metrics.cache_size.labels("nodes").set(len(self.cache.node_list()))
        self.metrics.cache_size.labels("pods").set(self.cache.pod_count())
        self.metrics.cache_size.labels("assumed_pods").set(len(self.cache.assumed))

    async def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
