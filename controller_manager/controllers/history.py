"""Revision history of a DaemonSet or StatefulSet: one ControllerRevision per pod template it has had.

A Deployment remembers old templates in old ReplicaSets; a DaemonSet or StatefulSet has no such
middle object, so Kubernetes keeps *ControllerRevisions*: apps/v1 objects named `<owner>-<hash>`
whose `data` is the patch that restores that template (`{"spec": {"template": {..., "$patch":
"replace"}}}`) and whose `revision` counts up. Pods carry it in their `controller-revision-hash`
label (a DaemonSet's pods the hash, a StatefulSet's pods the revision's whole name, as in
Kubernetes), so "which pods are up to date" is a label compare.

    kubectl rollout history ds/fluentd     lists the revisions the owner has
    kubectl rollout undo sts/web           patches the owner with an old revision's data

Rolling back does not create a new revision: the old one is found by its hash and given the next
revision number, as Kubernetes does. Revisions beyond `revisionHistoryLimit` (default 10) that no
live pod uses are deleted, oldest first.
"""

from __future__ import annotations

import copy
from typing import Any

from api import errors
from client import RESTClient
from controller_manager.controllers.controller_ref_manager import owner_reference
from controller_manager.controllers.daemonset_util import REVISION_HASH
from controller_manager.controllers.deployment_util import compute_hash

Obj = dict[str, Any]
RESOURCE = "controllerrevisions.apps"


def template_hash(owner: Obj) -> str:
    spec = owner.get("spec") or {}
    return compute_hash(spec.get("template") or {}, (owner.get("status") or {}).get("collisionCount"))


def revision_data(owner: Obj) -> Obj:
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def owned_revisions(owner: Obj, revisions: list[Obj]) -> list[Obj]:
    uid = owner["metadata"]["uid"]
    return [
        r for r in revisions
        if any(ref.get("controller") and ref.get("uid") == uid for ref in r["metadata"].get("ownerReferences") or [])
    ]  # fmt: skip


async def ensure_current(client: RESTClient, owner: Obj, revisions: list[Obj]) -> tuple[str, int]:
    """The current template's hash and revision number, creating or renumbering its revision
    (named `<owner>-<hash>`)."""
    md = owner["metadata"]
    hash_ = template_hash(owner)
    name = f"{md['name']}-{hash_}"
    top = max((int(r.get("revision") or 0) for r in revisions), default=0)
    current = next((r for r in revisions if r["metadata"]["name"] == name), None)
    if current is not None:
        if int(current.get("revision") or 0) < top:  # a rollback to this template: it is newest again
            current = {**current, "revision": top + 1}
            current = await client.update(RESOURCE, current)
        return hash_, int(current.get("revision") or 0)
    labels = dict((((owner.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})
    labels[REVISION_HASH] = hash_
    body = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": name, "namespace": md["namespace"], "labels": labels,
                     "ownerReferences": [owner_reference(owner)]},
        "data": revision_data(owner),
        "revision": top + 1,
    }  # fmt: skip
    try:
        await client.create(RESOURCE, body, md["namespace"])
    except errors.AlreadyExistsError:  # ours from a moment ago, not yet in the cache
        existing = await client.get(RESOURCE, name, md["namespace"])
        return hash_, int(existing.get("revision") or 0)
    return hash_, top + 1


async def truncate(client: RESTClient, owner: Obj, revisions: list[Obj], keep_hashes: set[str]) -> None:
    """Delete the oldest revisions beyond revisionHistoryLimit whose hash is not in `keep_hashes`."""
    limit = int((owner.get("spec") or {}).get("revisionHistoryLimit", 10))
    old = [r for r in revisions if (r["metadata"].get("labels") or {}).get(REVISION_HASH) not in keep_hashes]
    old.sort(key=lambda r: int(r.get("revision") or 0))
    for r in old[: max(0, len(old) - limit)]:
        try:
            await client.delete(RESOURCE, r["metadata"]["name"], r["metadata"]["namespace"])
        except errors.NotFoundError:
            pass
