"""PodGCController: sweep up pods nobody else will ever delete.

Desired state:
- at most --terminated-pod-gc-threshold finished pods (phase Succeeded or Failed) exist; the oldest
  go first (0 disables this, as in Kubernetes);
- no pod is bound to a node that does not exist (its kubelet will never come to clean it up);
- no pod that is terminating sits on no node (there is no kubelet to finish it);
- no terminating pod sits on a node that is not Ready and is tainted
  `node.kubernetes.io/out-of-service` (an operator declared the node dead).
Current state: pods and nodes from informers.
What we do about the difference: force-delete (grace period 0), logging
"PodGC is force deleting Pod: ns/name" as Kubernetes does.

Orphans are quarantined first: a pod whose node is missing from our cache may just have been
scheduled to a node the cache has not seen yet. Kubernetes waits 40 s and then asks the API server
directly. We wait --node-monitor-grace-period (40 s by default, the same number; a test that runs
with a 2 s grace period waits 2 s), then confirm with a GET on the node. The sweep runs every
min(20 s, grace/2) — Kubernetes' gcCheckPeriod is 20 s.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from api import errors
from api.timestamps import parse_time
from client.informer import meta_namespace_key, split_key
from controller_manager.controller import Controller

log = logging.getLogger("controller_manager")
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
Obj = dict[str, Any]


def _is_terminated(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _node_ready(node: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


class PodGCController(Controller):
    name = "podgc"
    component = "pod-garbage-collector"

    def setup(self) -> None:
        f = self.ctx.informers
        self.pods = f.informer_for("pods")
        self.nodes = f.informer_for("nodes")
        self.quarantine = self.ctx.options.node_monitor_grace_period
        self.period = min(20.0, max(self.quarantine / 2, 0.1))
        self.threshold = self.ctx.options.terminated_pod_gc_threshold
        self._missing_since: dict[str, float] = {}  # node name -> when we first found it missing

    async def run(self) -> None:
        while True:
            try:
                await self.gc()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("podgc: sweep failed")
            await asyncio.sleep(self.period)

    async def reconcile(self, key: str) -> None:  # everything happens in the periodic sweep
        return None

    async def gc(self) -> None:
        pods = self.pods.list()
        await self._gc_terminated(pods)
        await self._gc_orphaned(pods)
        await self._gc_unscheduled_terminating(pods)
        await self._gc_out_of_service(pods)

    async def _force_delete(self, pod: Obj) -> None:
        key = meta_namespace_key(pod)
        ns, name = split_key(key)
        log.info("PodGC is force deleting Pod: %s", key)
        try:
            await self.client.delete(
                "pods",
                name,
                ns,
                grace_period_seconds=0,
                preconditions={"uid": pod["metadata"].get("uid", "")},
            )
        except (errors.NotFoundError, errors.ConflictError):
            pass

    async def _gc_terminated(self, pods: list[Obj]) -> None:
        if self.threshold <= 0:
            return
        terminated = [p for p in pods if _is_terminated(p) and not p["metadata"].get("deletionTimestamp")]
        excess = len(terminated) - self.threshold
        if excess <= 0:
            return
        terminated.sort(
            key=lambda p: (parse_time(p["metadata"].get("creationTimestamp")) or 0.0, meta_namespace_key(p))
        )
        log.info("podgc: garbage collecting %d terminated pods", excess)
        for pod in terminated[:excess]:
            await self._force_delete(pod)

    async def _gc_orphaned(self, pods: list[Obj]) -> None:
        now = time.monotonic()
        missing: set[str] = set()
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if node and self.nodes.get(node) is None:
                missing.add(node)
        for node in list(self._missing_since):
            if node not in missing:
                del self._missing_since[node]  # it showed up (or its pods went)
        confirmed: set[str] = set()
        for node in missing:
            since = self._missing_since.setdefault(node, now)
            if now - since < self.quarantine:
                continue
            try:
                await self.client.get("nodes", node)  # the cache may lag: ask the API server
            except errors.NotFoundError:
                confirmed.add(node)
        for pod in pods:
            if (pod.get("spec") or {}).get("nodeName") in confirmed:
                await self._force_delete(pod)

    async def _gc_unscheduled_terminating(self, pods: list[Obj]) -> None:
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp") and not (pod.get("spec") or {}).get("nodeName"):
                await self._force_delete(pod)

    async def _gc_out_of_service(self, pods: list[Obj]) -> None:
        dead = {
            n["metadata"]["name"]
            for n in self.nodes.list()
            if not _node_ready(n)
            and any(t.get("key") == OUT_OF_SERVICE for t in (n.get("spec") or {}).get("taints") or [])
        }
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp") and (pod.get("spec") or {}).get("nodeName") in dead:
                await self._force_delete(pod)
