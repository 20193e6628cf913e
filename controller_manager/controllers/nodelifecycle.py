"""NodeLifecycleController: the Node Controller of seed 003 — notices dead nodes and moves pods off them.

Desired state: every node's conditions and taints tell the truth about its kubelet. A node whose
kubelet has been silent longer than --node-monitor-grace-period has all its conditions Unknown
(reason NodeStatusUnknown, "Kubelet stopped posting node status."), the taints
`node.kubernetes.io/unreachable:NoSchedule` and `:NoExecute`, and its pods are not Ready; a node
reporting Ready=False carries the `not-ready` taints instead; a Ready node carries neither.
Current state: the Nodes, their Leases in `kube-node-lease`, and the pods, from informers.
What we do about the difference — two loops in one controller, as in Kubernetes:

1. The monitor (every --node-monitor-period): for each node, ask the health tracker whether its
   kubelet is stale; if so write the Unknown conditions through `nodes/status`, emit `NodeNotReady`
   and mark its pods not Ready. Then compute the zones' disruption states and put each node's
   taints right (nodelifecycle_taints.py). Nodes seen for the first time get `RegisteredNode`.
2. The taint manager (the queue workers, keys are pods): evict pods that a NoExecute taint says
   must go, rate limited per zone (nodelifecycle_eviction.py, nodelifecycle_zones.py).

The two never call each other: the monitor writes taints to the API server, the informer brings
the change back, and the node's pods are queued for the taint manager. The API is the only channel.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from typing import Any

from api import errors
from api.timestamps import now_rfc3339
from client import NORMAL, WARNING, index_by_node_name
from controller_manager.context import ControllerContext
from controller_manager.controller import Controller
from controller_manager.controllers.nodelifecycle_eviction import NoExecuteTaintManager
from controller_manager.controllers.nodelifecycle_health import NodeHealthTracker, mark_unknown, ready_status
from controller_manager.controllers.nodelifecycle_taints import desired_taints, no_execute_taints, reconcile_taints
from controller_manager.controllers.nodelifecycle_zones import Zones, zone_of

log = logging.getLogger("controller_manager")
BY_NODE = "byNode"
LEASE_NAMESPACE = "kube-node-lease"


class NodeLifecycleController(Controller):
    name = "nodelifecycle"
    component = "node-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        opts = ctx.options
        self.tracker = NodeHealthTracker(opts.node_monitor_grace_period, opts.node_startup_grace_period)
        self.zones = Zones(opts)
        self.known: set[str] = set()  # nodes we have announced with RegisteredNode

    def setup(self) -> None:
        f = self.ctx.informers
        self.nodes = f.informer_for("nodes")
        self.leases = f.informer_for(
            "leases.coordination.k8s.io", field_selector=f"metadata.namespace={LEASE_NAMESPACE}"
        )
        self.pods = f.informer_for("pods")
        self.pods.add_indexers({BY_NODE: index_by_node_name})
        self.taint_manager = NoExecuteTaintManager(
            self.client,
            self.pods,
            self.nodes,
            self.zones,
            self.ctx.recorder("taint-eviction-controller"),
            self.enqueue_after,
            self.ctx.options.node_monitor_period,
        )
        self.nodes.add_event_handler(on_update=self._node_updated, on_delete=self._node_deleted)
        self.pods.add_event_handler(
            on_add=self._pod_changed, on_update=lambda _old, new: self._pod_changed(new)
        )

    # -- event handlers: only enqueue -------------------------------------------------------
    def _pod_changed(self, pod: dict[str, Any]) -> None:
        node = self.nodes.get((pod.get("spec") or {}).get("nodeName") or "")
        if no_execute_taints(node):
            self.enqueue(pod)

    def _node_updated(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if no_execute_taints(old) != no_execute_taints(new):
            for pod in self.pods.by_index(BY_NODE, new["metadata"]["name"]):
                self.enqueue(pod)

    def _node_deleted(self, node: dict[str, Any]) -> None:
        name = node["metadata"]["name"]
        self.tracker.forget(name)
        if name in self.known:
            self.known.discard(name)
            message = f"Node {name} event: Removing Node {name} from Controller"
            self.recorder.event(node, NORMAL, "RemovingNode", message)

    # -- the two loops ----------------------------------------------------------------------
    async def run(self) -> None:
        monitor = asyncio.create_task(self._monitor_forever(), name="nodelifecycle-monitor")
        try:
            await super().run()
        finally:
            monitor.cancel()

    async def reconcile(self, key: str) -> None:
        await self.taint_manager.process(key)

    async def _monitor_forever(self) -> None:
        period = self.ctx.options.node_monitor_period
        while True:
            try:
                await self.monitor_node_health()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("nodelifecycle: monitoring node health failed")
            await asyncio.sleep(period)

    async def monitor_node_health(self) -> None:
        now = time.time()
        ready_by_zone: dict[str, list[str | None]] = {}
        current: dict[str, str | None] = {}
        for node in self.nodes.list():
            name = node["metadata"]["name"]
            if name not in self.known:
                self.known.add(name)
                message = f"Node {name} event: Registered Node {name} in Controller"
                self.recorder.event(node, NORMAL, "RegisteredNode", message)
            status = ready_status(node)
            lease = self.leases.get(f"{LEASE_NAMESPACE}/{name}")
            if self.tracker.is_stale(node, lease, now):
                status = await self._mark_unknown(node, status)
            if status == "Unknown":
                await self._mark_pods_not_ready(name)
            current[name] = status
            ready_by_zone.setdefault(zone_of(node), []).append(status)
        self.zones.update(ready_by_zone)
        for name, status in current.items():
            await self._sync_taints(name, status)

    async def _mark_unknown(self, node: dict[str, Any], status: str | None) -> str | None:
        """Write all-Unknown conditions. Returns "Unknown": a stale node *is* unknown to us, even if
        the write lost a race (our cache may still show the old status; the next pass writes again)."""
        new = mark_unknown(node, now_rfc3339())
        if new is None:
            return "Unknown"
        name = node["metadata"]["name"]
        try:
            await self.client.update_status("nodes", new)
        except errors.NotFoundError:
            return status
        except errors.ConflictError as exc:
            log.info("nodelifecycle: could not mark node %s Unknown (will retry): %s", name, exc)
            return "Unknown"
        log.warning("node %s hasn't been updated for more than the grace period; marking it Unknown", name)
        if status == "True":
            self.recorder.event(node, NORMAL, "NodeNotReady", f"Node {name} status is now: NodeNotReady")
        return "Unknown"

    async def _mark_pods_not_ready(self, node_name: str) -> None:
        """Kubernetes' MarkPodsNotReady: a pod on an unreachable node cannot be known to serve."""
        for pod in self.pods.by_index(BY_NODE, node_name):
            conditions = (pod.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
                continue
            new = copy.deepcopy(pod)
            for cond in new["status"]["conditions"]:
                if cond.get("type") == "Ready":
                    cond.update(status="False", lastTransitionTime=now_rfc3339())
            try:
                await self.client.update_status("pods", new)
            except (errors.ConflictError, errors.NotFoundError):
                continue  # next pass looks again
            self.recorder.event(pod, WARNING, "NodeNotReady", "Node is not ready")

    async def _sync_taints(self, name: str, status: str | None) -> None:
        cached = self.nodes.get(name)
        if cached is None:
            return
        wanted = desired_taints(status, no_execute=not self.zones.master_disruption)
        if reconcile_taints((cached.get("spec") or {}).get("taints") or [], wanted, now_rfc3339()) is None:
            return
        for _ in range(3):  # read-modify-write; someone else (kubectl taint, the kubelet) may race us
            try:
                node = await self.client.get("nodes", name)
                taints = reconcile_taints((node.get("spec") or {}).get("taints") or [], wanted, now_rfc3339())
                if taints is None:
                    return
                node.setdefault("spec", {})["taints"] = taints
                await self.client.update("nodes", node)
                log.info("nodelifecycle: node %s taints now %s", name, sorted(f"{k}:{e}" for k, e in wanted))
                return
            except errors.ConflictError:
                continue
            except errors.NotFoundError:
                return
