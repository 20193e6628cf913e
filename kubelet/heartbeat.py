"""Node registration and the two heartbeats, for every node this process simulates.

Why two heartbeats (KEP 589, "efficient node heartbeats"): posting the whole NodeStatus (several
KB) every 10 s from 5,000 nodes made etcd's history huge, so Kubernetes added a tiny Lease per node
in the `kube-node-lease` namespace. The kubelet renews it every lease-duration/4 (10 s of 40 s);
the node lifecycle controller reads `renewTime` to decide whether the node is alive. The status
(conditions with lastHeartbeatTime) is computed every --node-status-update-frequency but, as in
Kubernetes 1.32, only *posted* when it differs from the Node object (say the node controller set
Ready to Unknown) or when --node-status-report-frequency (5 m) has passed since the last post.
The Node objects are watched through one informer, so "does it differ?" costs no request.

Cost with many nodes (`--nodes 1000`): one asyncio task per node sleeps between its beats, and the
first beat of node i is offset by i/N of an interval, so the writes are spread evenly instead of
arriving in one burst every 10 s. Each beat is one small request; a write that fails (API server
down) is simply retried at the next beat - the Lease simply expires if we stay away too long,
which is exactly the signal the control plane should get.

If the Node object disappears while we run (someone ran `kubectl delete node`), the next status
post gets 404 and registers it again; the Lease follows (its ownerReference names the new uid).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from api import errors
from api.errors import AlreadyExistsError, ConflictError, NotFoundError, StatusError
from api.timestamps import now_rfc3339
from client import NORMAL, ConnectionFailed
from kubelet import node as nodes
from kubelet.node import NodeState

if TYPE_CHECKING:
    from kubelet.kubelet import Kubelet

log = logging.getLogger("kubelet.heartbeat")
LEASE_NAMESPACE = "kube-node-lease"
IN_FLIGHT = 32
NODE_EVENTS_UP_TO = 10  # nodes per process that still get Starting / NodeReady events


def micro_time() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _node_ref(node: NodeState) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "name": node.name, "uid": node.uid}


class Heartbeats:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kubelet = kubelet
        self.client = kubelet.client
        self.cfg = kubelet.config
        # At most this many heartbeat requests in flight: 1,000 nodes must queue here, fairly and
        # cheaply, not as 1,000 requests inside the HTTP connection pool.
        self._in_flight = asyncio.Semaphore(IN_FLIGHT)
        self.lease_renewals = 0
        self.status_updates = 0
        self.failures = 0

    # ------------------------------------------------------------------ registration

    async def register(self, node: NodeState, existing: dict[str, Any] | None) -> None:
        """Create the Node, or bring an existing one up to date (kubelet restart)."""
        now = now_rfc3339()
        if existing is None:
            try:
                created = await self.client.create("nodes", nodes.new_node(self.cfg, node, now))
                self._remember(node, created)
                self._node_events(node, created, first=True)
                return
            except AlreadyExistsError:
                existing = await self.client.get("nodes", node.name)
        node.conditions = (existing.get("status") or {}).get("conditions") or []
        patch: dict[str, Any] = {"metadata": {"labels": nodes.labels(self.cfg, node.name)}}
        if not (existing.get("spec") or {}).get("podCIDR"):
            patch["spec"] = {"podCIDR": node.pod_cidr, "podCIDRs": [node.pod_cidr]}
        await self.client.patch("nodes", node.name, patch)
        updated = await self.client.patch(
            "nodes", node.name, {"status": nodes.node_status(self.cfg, node, now)}, subresource="status"
        )
        was_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in node.conditions)
        self._remember(node, updated)
        self._node_events(node, updated, first=not was_ready)

    def _remember(self, node: NodeState, obj: dict[str, Any]) -> None:
        node.uid = obj["metadata"].get("uid") or ""
        node.conditions = (obj.get("status") or {}).get("conditions") or []
        node.status_posted_at = asyncio.get_running_loop().time()

    def _node_events(self, node: NodeState, obj: dict[str, Any], *, first: bool) -> None:
        # Kubernetes' kubelet involves the Node with its name as uid; we use the real one.
        if len(self.kubelet.nodes) > NODE_EVENTS_UP_TO:
            return  # a simulated fleet: thousands of start-up events would only be noise
        ref = {"kind": "Node", "apiVersion": "v1", "metadata": obj["metadata"]}
        node.recorder.event(ref, NORMAL, "Starting", "Starting kubelet.")
        if first:
            node.recorder.event(ref, NORMAL, "NodeReady", f"Node {node.name} status is now: NodeReady")

    # ------------------------------------------------------------------ the loops

    async def run(self, node: NodeState, offset: float) -> None:
        """Renew the Lease and post the status for one node, forever."""
        loop = asyncio.get_running_loop()
        renew_every = max(self.cfg.lease_renew_interval, 0.05)
        status_every = max(self.cfg.node_status_update_frequency, 0.05)
        # The first renewal happens right away (below); the next ones are spread over the interval.
        next_lease = loop.time() + (offset or 1.0) * renew_every
        next_status = loop.time() + offset * status_every + status_every
        await self._beat(self.renew_lease, node)  # a fresh Lease at once: the node is alive now
        while True:
            await asyncio.sleep(max(min(next_lease, next_status) - loop.time(), 0.0))
            now = loop.time()
            if now >= next_lease:
                await self._beat(self.renew_lease, node)
                next_lease = max(next_lease + renew_every, loop.time())
            if now >= next_status:
                if self._status_due(node, now):
                    await self._beat(self.post_status, node)
                next_status = max(next_status + status_every, loop.time())

    def _status_due(self, node: NodeState, now: float) -> bool:
        """Post the status when it is old, or when the Node object no longer says what we say."""
        if now - node.status_posted_at >= self.cfg.node_status_report_frequency:
            return True
        informer = self.kubelet.node_objects
        if not informer.has_synced():
            return False
        current = informer.get(node.name)
        if current is None:
            return True  # deleted: the post gets 404 and registers the node again
        ours = {c.get("type"): (c.get("status"), c.get("reason")) for c in node.conditions}
        theirs = {c.get("type"): (c.get("status"), c.get("reason"))
                  for c in (current.get("status") or {}).get("conditions") or []}  # fmt: skip
        return ours != theirs

    async def _beat(self, fn: Any, node: NodeState) -> None:
        try:
            async with self._in_flight:
                await fn(node)
        except asyncio.CancelledError:
            raise
        except (StatusError, ConnectionFailed) as exc:
            self.failures += 1
            log.warning("node %s: %s failed: %s", node.name, fn.__name__, exc)
        except Exception:
            self.failures += 1
            log.exception("node %s: %s failed", node.name, fn.__name__)

    async def renew_lease(self, node: NodeState) -> None:
        lease = node.lease
        duration = max(1, round(self.cfg.node_lease_duration))
        for _ in range(3):
            if lease is None:
                try:
                    lease = await self.client.get("leases.coordination.k8s.io", node.name, LEASE_NAMESPACE)
                except NotFoundError:
                    body = {
                        "apiVersion": "coordination.k8s.io/v1",
                        "kind": "Lease",
                        "metadata": {"name": node.name, "namespace": LEASE_NAMESPACE},
                        "spec": {"holderIdentity": node.name, "leaseDurationSeconds": duration,
                                 "renewTime": micro_time()},
                    }  # fmt: skip
                    if node.uid:
                        body["metadata"]["ownerReferences"] = [_node_ref(node)]
                    try:
                        node.lease = await self.client.create("leases.coordination.k8s.io", body, LEASE_NAMESPACE)
                        self.lease_renewals += 1
                        return
                    except AlreadyExistsError:
                        continue
            spec = lease.setdefault("spec", {})
            spec.update({"holderIdentity": node.name, "leaseDurationSeconds": duration, "renewTime": micro_time()})
            if node.uid and [r.get("uid") for r in lease["metadata"].get("ownerReferences") or []] != [node.uid]:
                lease["metadata"]["ownerReferences"] = [_node_ref(node)]
            try:
                node.lease = await self.client.update("leases.coordination.k8s.io", lease)
                self.lease_renewals += 1
                return
            except (ConflictError, NotFoundError):
                lease = node.lease = None  # someone else wrote it, or it was deleted: re-read
        raise errors.conflict("leases.coordination.k8s.io", node.name, "could not renew the node lease")

    async def post_status(self, node: NodeState) -> None:
        # Only the conditions change between beats (capacity, addresses and nodeInfo were written
        # at registration), so only they travel: a small merge patch, like the kubelet's own diff.
        patch = {"status": {"conditions": nodes.conditions(node.conditions, now_rfc3339())}}
        try:
            updated = await self.client.patch("nodes", node.name, patch, subresource="status")
        except NotFoundError:
            log.warning("node %s was deleted; registering it again", node.name)
            await self.register(node, None)
            node.lease = None  # the garbage collector will remove the old Lease with the old Node
            return
        self._remember(node, updated)
        self.status_updates += 1
