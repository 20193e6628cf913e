"""Waiting for an object to go away, by watching rather than polling.

`kubectl delete` (with its default `--wait=true`), `drain` and `replace --force` must wait until
a deleted object is really gone: a pod on a node only disappears once its kubelet has stopped it,
an object with finalizers once they are cleared. The wait is a LIST narrowed to the one name (to
see whether it still exists, and from which resourceVersion to watch) followed by a WATCH until a
DELETED event for it, or for a different uid (the object was deleted and re-created meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib

from api.registry import ResourceType
from kubectl.cli import CmdError, Session


async def wait_deleted(
    s: Session,
    rt: ResourceType,
    namespace: str | None,
    name: str,
    uid: str | None = None,
    timeout: float | None = None,
) -> None:
    """Return once `name` (with `uid`, if given) no longer exists; CmdError after `timeout` s."""

    async def gone() -> None:
        while True:
            lst = await s.client.list(rt, namespace, field_selector=f"metadata.name={name}")
            items = lst.get("items") or []
            if not items or (uid and items[0]["metadata"].get("uid") != uid):
                return
            rv = (lst.get("metadata") or {}).get("resourceVersion")
            stream = s.client.watch(
                rt, namespace, resource_version=rv, field_selector=f"metadata.name={name}", timeout_seconds=60
            )
            async with contextlib.aclosing(stream) as events:
                async for ev in events:
                    obj_uid = (ev.object.get("metadata") or {}).get("uid")
                    if ev.type == "DELETED" or (uid and ev.type == "ADDED" and obj_uid != uid):
                        return

    try:
        await asyncio.wait_for(gone(), timeout)
    except TimeoutError:
        raise CmdError(f"timed out waiting for the condition on {rt.plural}/{name}") from None
