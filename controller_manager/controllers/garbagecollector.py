"""GarbageCollector: objects whose owners are gone are deleted; deletions propagate as asked.

Desired state, for every object with `metadata.ownerReferences`:
- background: if *all* its owners are gone (no object with that uid exists), it is gone too;
- foreground: an owner being deleted with the `foregroundDeletion` finalizer has no dependents left
  — and once none with `blockOwnerDeletion: true` remains, the finalizer is removed, so the API
  server can finish deleting the owner (dependents that themselves have dependents are deleted
  foreground too, so a Deployment waits for its ReplicaSets, which wait for their pods);
- orphan: an owner being deleted with the `orphan` finalizer is referenced by nobody — its
  dependents lose that ownerReference and live on; then the finalizer is removed.
Current state: the ownership graph (garbagecollector_graph.py), built from one informer per
resource type (all list/watch-able types of the kind registry except events, shared with the other
controllers through the informer factory).
What we do about the difference: the graph queues uids; a worker handles "delete:<uid>" (should
this object go, or can this foreground deletion finish?) and "orphan:<uid>". Before deleting
anything the collector asks the API server, not the cache, whether the owners really are gone: the
informers may lag, and deleting a live object's dependents cannot be undone.
"""

from __future__ import annotations

import logging
from typing import Any

from api import errors, registry
from api.registry import ResourceType
from controller_manager.controller import Controller
from controller_manager.controllers.garbagecollector_graph import (
    FOREGROUND,
    ORPHAN,
    Graph,
    Identity,
    Node,
    owner_identity,
)

log = logging.getLogger("controller_manager")
IGNORED = {"events"}  # as in Kubernetes: events are never owners worth tracking
Obj = dict[str, Any]


def watched_resources() -> list[ResourceType]:
    return [
        rt
        for rt in registry.all_resources()
        if rt.key not in IGNORED and {"list", "watch", "delete"} <= set(rt.verbs)
    ]


class GarbageCollector(Controller):
    name = "garbagecollector"
    component = "garbage-collector-controller"
    default_workers = 20

    def setup(self) -> None:
        self.graph = Graph(lambda kind, uid: self.enqueue(f"{kind}:{uid}"))
        for rt in watched_resources():
            informer = self.ctx.informers.informer_for(rt)
            informer.add_event_handler(
                self.graph.upsert, lambda _old, new: self.graph.upsert(new), self.graph.remove
            )

    async def reconcile(self, key: str) -> None:
        kind, _, uid = key.partition(":")
        node = self.graph.nodes.get(uid)
        if node is None:
            return
        if kind == "orphan":
            await self._orphan_dependents(node)
        else:
            await self._attempt_to_delete(node)

    # -- talking to the API server about one identity ---------------------------------------
    async def _get(self, ident: Identity) -> Obj | None:
        """The live object, or None if it does not exist (or a different object now has its name)."""
        rt = registry.by_kind(ident.api_version, ident.kind)
        if rt is None:
            raise LookupError(f"unknown kind {ident.api_version} {ident.kind}")
        try:
            obj = await self.client.get(rt, ident.name, ident.namespace or None)
        except errors.NotFoundError:
            return None
        return obj if obj["metadata"].get("uid") == ident.uid else None

    async def _update_meta(self, ident: Identity, change: Any) -> None:
        """Read-modify-write of one object's metadata with retries on conflict."""
        rt = registry.by_kind(ident.api_version, ident.kind)
        assert rt is not None
        for _ in range(5):
            obj = await self._get(ident)
            if obj is None:
                return
            if not change(obj["metadata"]):
                return
            try:
                await self.client.update(rt, obj)
                return
            except errors.ConflictError:
                continue
        raise errors.ConflictError(f"{ident}: too many conflicts")

    # -- delete:<uid> ------------------------------------------------------------------------
    async def _attempt_to_delete(self, node: Node) -> None:
        if not node.observed:
            # A virtual node: does the owner someone points to exist at all?
            try:
                if await self._get(node.identity) is None:
                    log.info(
                        "garbagecollector: %s does not exist; its dependents are orphaned", node.identity
                    )
                    self.graph.remove_node(node)
            except LookupError:
                pass  # a kind we cannot resolve: we cannot know, so we never delete on its account
            return
        if node.deleting_dependents:
            await self._process_deleting_dependents(node)
            return
        if not node.owners or node.being_deleted:
            return
        if all(self._solid_in_graph(ref, node) for ref in node.owners):
            return  # every owner is alive as far as the cache knows; a deletion would notify us
        latest = await self._get(node.identity)
        if latest is None:
            self.graph.remove_node(node)
            return
        refs = list(latest["metadata"].get("ownerReferences") or [])
        solid, dangling, waiting = [], [], []
        for ref in refs:
            try:
                owner = await self._get(owner_identity(ref, node.identity.namespace))
            except LookupError:
                solid.append(ref)  # unresolvable: assume it exists, never delete on a guess
                continue
            if owner is None:
                dangling.append(ref)
            elif owner["metadata"].get("deletionTimestamp") and FOREGROUND in (
                owner["metadata"].get("finalizers") or []
            ):
                waiting.append(ref)
            else:
                solid.append(ref)
        if solid:
            gone = {r.get("uid") for r in dangling + waiting}
            if gone:
                # Some owners remain: just forget the ones that are gone or going.
                def drop(md: Obj) -> bool:
                    md["ownerReferences"] = [
                        r for r in md.get("ownerReferences") or [] if r.get("uid") not in gone
                    ]
                    return True

                await self._update_meta(node.identity, drop)
            return
        # Every owner is gone or waiting for its dependents: this object goes. If an owner waits and
        # we have dependents of our own, delete in the foreground so the wait covers them as well.
        policy = "Foreground" if waiting and node.dependents else "Background"
        rt = registry.by_kind(node.identity.api_version, node.identity.kind)
        assert rt is not None
        log.info(
            "garbagecollector: deleting %s (owners gone: %s), propagation %s",
            node.identity,
            ", ".join(f"{r.get('kind')}/{r.get('name')}" for r in refs),
            policy,
        )
        try:
            await self.client.delete(
                rt,
                node.identity.name,
                node.identity.namespace or None,
                propagation_policy=policy,
                preconditions={"uid": node.identity.uid},
            )
        except (errors.NotFoundError, errors.ConflictError):
            pass

    def _solid_in_graph(self, ref: Obj, node: Node) -> bool:
        owner = self.graph.nodes.get(ref.get("uid") or "")
        return owner is not None and owner.observed and not owner.deleting_dependents

    async def _process_deleting_dependents(self, owner: Node) -> None:
        blocking = owner.blocking_dependents(self.graph)
        if not blocking:
            log.info(
                "garbagecollector: %s has no blocking dependents left; removing %s",
                owner.identity,
                FOREGROUND,
            )

            def drop(md: Obj) -> bool:
                fins = md.get("finalizers") or []
                if FOREGROUND not in fins:
                    return False
                md["finalizers"] = [f for f in fins if f != FOREGROUND]
                return True

            await self._update_meta(owner.identity, drop)
            return
        for dep in blocking:
            if not dep.being_deleted or dep.deleting_dependents:
                self.enqueue(f"delete:{dep.identity.uid}")

    # -- orphan:<uid> ------------------------------------------------------------------------
    async def _orphan_dependents(self, owner: Node) -> None:
        uid = owner.identity.uid
        for dep_uid in list(owner.dependents):
            dep = self.graph.nodes.get(dep_uid)
            if dep is None or not dep.observed:
                continue

            def drop(md: Obj) -> bool:
                refs = md.get("ownerReferences") or []
                kept = [r for r in refs if r.get("uid") != uid]
                if len(kept) == len(refs):
                    return False
                md["ownerReferences"] = kept
                return True

            await self._update_meta(dep.identity, drop)
        log.info("garbagecollector: orphaned the dependents of %s; removing %s", owner.identity, ORPHAN)

        def drop_finalizer(md: Obj) -> bool:
            fins = md.get("finalizers") or []
            if ORPHAN not in fins:
                return False
            md["finalizers"] = [f for f in fins if f != ORPHAN]
            return True

        await self._update_meta(owner.identity, drop_finalizer)
