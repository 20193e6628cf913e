"""Ownership: which objects belong to which controller, and how that changes (adopt / release).

A controller does not keep a list of "its" pods. Ownership is written *on the pod*, as an
ownerReference with `controller: true`:

    metadata.ownerReferences: [{apiVersion: v1, kind: ReplicationController, name: nginx-server,
                                uid: 4f1…, controller: true, blockOwnerDeletion: true}]

At most one owner may be the controller. The label selector decides what *should* belong:

    pod's controller ref    selector matches?   what the owner does
    ─────────────────────   ─────────────────   ───────────────────────────────────────────
    me                      yes                 keep it (it counts towards my replicas)
    me                      no                  release it: remove my ownerReference
                                                (`kubectl label pod x app=other` → it leaves)
    someone else            –                   ignore it, never fight over a pod
    none (an orphan)        yes                 adopt it: add my ownerReference by PATCH
    none                    no                  ignore it

Adoption and release are strategic-merge PATCHes that touch only the one ownerReference (the
merge key is `uid`), so they cannot undo a concurrent change to the rest of the object. Before the
first adoption in a sync the owner is re-read from the API server (not the cache): an owner that
is being deleted must not adopt anything, or the garbage collector and the controller would race.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from api.errors import NotFoundError
from api.labels import Selector
from client import RESTClient

Obj = dict[str, Any]


def controller_of(obj: Obj) -> Obj | None:
    """The ownerReference with `controller: true`, if any (client-go's metav1.GetControllerOf)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def owner_reference(owner: Obj) -> Obj:
    """The controller reference an owner puts on what it creates or adopts."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


class ControllerRefManager:
    """Claims objects of `resource` for `owner` according to `selector`, as in the table above."""

    def __init__(
        self,
        client: RESTClient,
        resource: str,
        owner: Obj,
        selector: Selector,
        can_adopt: Callable[[], Awaitable[None]],
    ) -> None:
        self.client = client
        self.resource = resource
        self.owner = owner
        self.uid = owner["metadata"]["uid"]
        self.selector = selector
        self._can_adopt = can_adopt
        self._adopt_checked = False

    async def claim(self, objects: list[Obj]) -> list[Obj]:
        """The objects that belong to the owner after adopting and releasing as needed. Errors on
        individual objects are collected and raised at the end (the sync is then retried)."""
        claimed: list[Obj] = []
        errs: list[Exception] = []
        owner_deleting = bool(self.owner["metadata"].get("deletionTimestamp"))
        for obj in objects:
            meta = obj.get("metadata") or {}
            ref = controller_of(obj)
            matches = self.selector.matches(meta.get("labels") or {})
            try:
                if ref is not None:
                    if ref.get("uid") != self.uid:
                        continue  # someone else's
                    if matches or owner_deleting:
                        claimed.append(obj)  # ours; a dying owner releases nothing
                    else:
                        await self.release(obj)
                    continue
                if owner_deleting or not matches or meta.get("deletionTimestamp"):
                    continue
                adopted = await self.adopt(obj)
                if adopted is not None:
                    claimed.append(adopted)
            except Exception as exc:  # noqa: BLE001 - collected, raised below
                errs.append(exc)
        if errs:
            raise errs[0]
        return claimed

    async def adopt(self, obj: Obj) -> Obj | None:
        if not self._adopt_checked:
            await self._can_adopt()  # raises if the owner is gone or being deleted
            self._adopt_checked = True
        meta = obj["metadata"]
        patch = {"metadata": {"ownerReferences": [owner_reference(self.owner)], "uid": meta["uid"]}}
        try:
            return await self.client.patch(
                self.resource, meta["name"], patch, meta.get("namespace"), patch_type="strategic"
            )
        except NotFoundError:
            return None  # gone meanwhile: nothing to adopt

    async def release(self, obj: Obj) -> None:
        meta = obj["metadata"]
        patch = {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": self.uid}], "uid": meta["uid"]}}
        try:
            await self.client.patch(self.resource, meta["name"], patch, meta.get("namespace"), patch_type="strategic")
        except NotFoundError:
            pass  # gone: released enough


def recheck_owner(client: RESTClient, resource: str, owner: Obj) -> Callable[[], Awaitable[None]]:
    """A can-adopt check: a fresh GET of the owner must show the same uid and no deletionTimestamp."""

    async def check() -> None:
        meta = owner["metadata"]
        fresh = await client.get(resource, meta["name"], meta.get("namespace"))
        fmeta = fresh.get("metadata") or {}
        if fmeta.get("uid") != meta["uid"]:
            raise RuntimeError(f"original {owner.get('kind')} {meta['name']} is gone: uid changed")
        if fmeta.get("deletionTimestamp"):
            raise RuntimeError(f"{owner.get('kind')} {meta['name']} has just been deleted")

    return check
