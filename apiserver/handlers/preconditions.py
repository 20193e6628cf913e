"""Preconditions: "only if this is still the object I think it is", for PUT and DELETE.

A client that names a uid (in a PUT body's `metadata.uid`, or in DeleteOptions.preconditions)
means one particular incarnation of a name: if the object was deleted and created again meanwhile,
the write must not land on the newcomer. Kubernetes answers 409 Conflict, with two wordings that
clients match on, both kept here:
- a uid checked by the storage layer (PUT, and a DELETE's resourceVersion) is reported as a storage
  "invalid object" error: `... StorageError: invalid object, Code: 4, Key: <key>, ResourceVersion: 0,
  AdditionalErrorMsg: Precondition failed: UID in precondition: <a>, UID in object meta: <b>`;
- a DELETE's uid is checked before that, on the kind (`Operation cannot be fulfilled on Pod "x":
  the UID in the precondition (<a>) does not match the UID in record (<b>). The object might have
  been deleted and then recreated`).
"""

from __future__ import annotations

from typing import Any

from api import errors
from api.registry import ResourceType


def _storage_invalid(rt: ResourceType, key: str, name: str, detail: str) -> errors.ConflictError:
    text = f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: {detail}"
    return errors.conflict(rt.key, name, text)


def check_put_uid(rt: ResourceType, key: str, old: dict[str, Any], body: dict[str, Any]) -> None:
    """A PUT body's non-empty `metadata.uid` must be the stored object's."""
    want = (body.get("metadata") or {}).get("uid")
    have = (old.get("metadata") or {}).get("uid") or ""
    if want and want != have:
        detail = f"Precondition failed: UID in precondition: {want}, UID in object meta: {have}"
        raise _storage_invalid(rt, key, old["metadata"]["name"], detail)


def check_delete(rt: ResourceType, key: str, obj: dict[str, Any], pre: dict[str, Any]) -> None:
    """DeleteOptions.preconditions (uid, resourceVersion) against the stored object."""
    md = obj["metadata"]
    uid, rv = pre.get("uid"), pre.get("resourceVersion")
    if uid and uid != md.get("uid"):
        kind = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
        raise errors.conflict(
            kind,
            md["name"],
            f"the UID in the precondition ({uid}) does not match the UID in record ({md.get('uid', '')}). "
            "The object might have been deleted and then recreated",
        )
    if rv and rv != md.get("resourceVersion"):
        raise _storage_invalid(
            rt,
            key,
            md["name"],
            f"Precondition failed: ResourceVersion in precondition: {rv}, "
            f"ResourceVersion in object meta: {md.get('resourceVersion', '')}",
        )
