"""The ownership graph: who owns whom, kept current from informer events (Kubernetes' GraphBuilder).

Every object that some informer shows us is a node, keyed by uid. Its `metadata.ownerReferences`
are edges to its owners; each owner node keeps the set of its dependents — the reverse edges, which
no object stores and which is what the collector needs ("what does this ReplicaSet own?").

An ownerReference may name a uid no informer has shown us: the owner was deleted before we started,
or it lives in a resource we are not watching, or the informer is simply behind. Such an owner gets
a *virtual* node (identity taken from the reference, `observed=False`) and is handed to the
collector, which asks the API server whether it exists. An informer event for that uid later turns
it into an ordinary node.

The graph only records and notifies; it never talks to the API server. `notify(kind, uid)` is the
collector's queue: "delete" means "check whether this object should be deleted (or its foreground
deletion can finish)", "orphan" means "strip the ownerReferences to this object from its dependents".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from api import registry

FOREGROUND, ORPHAN = "foregroundDeletion", "orphan"
Obj = dict[str, Any]


@dataclass
class Identity:
    api_version: str
    kind: str
    namespace: str  # "" for cluster-scoped kinds
    name: str
    uid: str

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where} ({self.uid})"


@dataclass
class Node:
    identity: Identity
    owners: list[Obj] = field(default_factory=list)  # the ownerReferences as last seen
    dependents: set[str] = field(default_factory=set)  # uids
    observed: bool = True  # False: a virtual node, known only from someone's ownerReference
    being_deleted: bool = False
    deleting_dependents: bool = False  # deletionTimestamp + foregroundDeletion finalizer
    orphaning: bool = False  # deletionTimestamp + orphan finalizer

    def blocking_dependents(self, graph: Graph) -> list[Node]:
        """Dependents whose reference to us says blockOwnerDeletion: a foreground delete waits for them."""
        out = []
        for uid in self.dependents:
            dep = graph.nodes.get(uid)
            if dep and any(
                r.get("uid") == self.identity.uid and r.get("blockOwnerDeletion") for r in dep.owners
            ):
                out.append(dep)
        return out


def identity_of(obj: Obj) -> Identity:
    md = obj["metadata"]
    return Identity(
        obj.get("apiVersion", ""), obj.get("kind", ""), md.get("namespace") or "", md["name"], md["uid"]
    )


def owner_identity(ref: Obj, dependent_namespace: str) -> Identity:
    """Where an ownerReference points. Owners of namespaced kinds live in the dependent's namespace
    (cross-namespace ownership does not exist); cluster-scoped owners have none."""
    rt = registry.by_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
    namespace = dependent_namespace if rt is None or rt.namespaced else ""
    return Identity(
        ref.get("apiVersion", ""), ref.get("kind", ""), namespace, ref.get("name", ""), ref.get("uid", "")
    )


class Graph:
    def __init__(self, notify: Callable[[str, str], None]) -> None:
        self.nodes: dict[str, Node] = {}
        self.notify = notify

    # -- informer events ---------------------------------------------------------------------
    def upsert(self, obj: Obj) -> None:
        md = obj.get("metadata") or {}
        uid = md.get("uid")
        if not uid:
            return
        node = self.nodes.get(uid)
        if node is None:
            node = self.nodes[uid] = Node(identity_of(obj))
        elif not node.observed:
            node.observed = True
            node.identity = identity_of(obj)
        finalizers = md.get("finalizers") or []
        deleting = bool(md.get("deletionTimestamp"))
        was_deleting_dependents, was_orphaning = node.deleting_dependents, node.orphaning
        node.being_deleted = deleting
        node.deleting_dependents = deleting and FOREGROUND in finalizers
        node.orphaning = deleting and ORPHAN in finalizers
        self._set_owners(node, list(md.get("ownerReferences") or []))
        if node.deleting_dependents and not was_deleting_dependents:
            # Foreground deletion began: every dependent must go (and the owner waits for the blocking ones).
            for dep in node.dependents:
                self.notify("delete", dep)
            self.notify("delete", uid)
        if node.orphaning and not was_orphaning:
            self.notify("orphan", uid)

    def remove(self, obj: Obj) -> None:
        uid = (obj.get("metadata") or {}).get("uid")
        node = self.nodes.get(uid or "")
        if node is None:
            return
        self.remove_node(node)

    def remove_node(self, node: Node) -> None:
        """The object is gone (or, for a virtual node, never existed): its dependents lost an owner."""
        uid = node.identity.uid
        self._set_owners(node, [])
        if node.dependents:
            # Keep a virtual placeholder so the dependents' references still resolve to "absent".
            node.observed, node.being_deleted, node.deleting_dependents, node.orphaning = (
                False,
                False,
                False,
                False,
            )
            for dep in node.dependents:
                self.notify("delete", dep)
        else:
            self.nodes.pop(uid, None)

    # -- edges -------------------------------------------------------------------------------
    def _set_owners(self, node: Node, refs: list[Obj]) -> None:
        uid = node.identity.uid
        old = {r.get("uid") for r in node.owners}
        new = {r.get("uid") for r in refs}
        node.owners = refs
        for owner_uid in old - new:
            owner = self.nodes.get(owner_uid or "")
            if owner is None:
                continue
            owner.dependents.discard(uid)
            if owner.deleting_dependents:
                self.notify("delete", owner.identity.uid)  # maybe it can finish now
            elif not owner.observed and not owner.dependents:
                del self.nodes[owner.identity.uid]  # a virtual node nobody points to any more
        for ref in refs:
            owner_uid = ref.get("uid")
            if not owner_uid:
                continue
            owner = self.nodes.get(owner_uid)
            if owner is None:
                owner = self.nodes[owner_uid] = Node(
                    owner_identity(ref, node.identity.namespace), observed=False
                )
                self.notify("delete", owner_uid)  # does it exist? the collector will ask
            owner.dependents.add(uid)
            if not owner.observed:
                self.notify("delete", uid)  # the owner may be gone: check this dependent
