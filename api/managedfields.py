"""managedFields: who set which field, kept on every write (Kubernetes' field manager, in small).

Every create, update, patch and apply records its writer in `metadata.managedFields`:

    - manager: kubectl-client-side-apply     who: ?fieldManager=, else the User-Agent's program
      operation: Update                      Update (create/PUT/PATCH) or Apply (server-side apply)
      apiVersion: apps/v1                    the version the field set is expressed in
      time: "2026-11-23T22:00:00Z"           when this manager last changed something
      fieldsType: FieldsV1
      fieldsV1: {f:spec: {f:replicas: {}}}   the fields it owns (api/fieldpath.py)
      subresource: status                    only for writes through a subresource

An Update takes ownership of the fields it *changed* (added or modified) away from everyone else;
a field removed is removed from every manager; a manager left with nothing is dropped. Apply
(api/apply.py) owns exactly what its configuration sets. Fields nobody may own (apiVersion, kind,
metadata.name/uid/resourceVersion/...) are skipped, and so is the other half of an object with a
status subresource: a main-resource write never owns `status`, a status write owns only `status`.

A request may carry managedFields itself: if they differ from the stored ones they replace them
(this is how `kubectl apply --server-side` migrates client-side apply ownership), and
`managedFields: [{}]` resets them. Writes through a subresource cannot change them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.fieldpath import FieldSet, TypeNode, compare, difference, to_set, union
from api.registry import ResourceType

APPLY, UPDATE = "Apply", "Update"
_ROOT_IGNORED = frozenset({"apiVersion", "kind"})
META_IGNORED = frozenset(
    {"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields",
     "resourceVersion"}
)
_MAX_MANAGER_LEN = 128


@dataclass
class Entry:
    """One managedFields entry, decoded."""

    manager: str
    operation: str
    api_version: str
    time: str | None
    fields: FieldSet
    subresource: str = ""

    def ident(self) -> tuple[str, str, str, str]:
        # Apply entries are per manager; Update entries per manager *and* version.
        return (self.manager, self.operation, self.subresource, self.api_version if self.operation == UPDATE else "")

    def encode(self) -> dict[str, Any]:
        out: dict[str, Any] = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = self.fields
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def manager_name(field_manager: str | None, user_agent: str | None) -> str:
    """?fieldManager=, else the User-Agent up to its first "/" (`kubectl`, `OpenAPI-Generator`)."""
    if field_manager:
        return field_manager
    prefix = (user_agent or "").split("/", 1)[0]
    name = prefix if prefix.isprintable() else "".join(ch for ch in prefix if ch.isprintable())
    return name[:_MAX_MANAGER_LEN] or "unknown"


_ROOTS: dict[tuple[str, str], TypeNode] = {}


def root_type(rt: ResourceType, subresource: str | None) -> TypeNode:
    """The schema walked for a write through `subresource` (None, "status", "scale")."""
    sub = subresource or ""
    key = (rt.key, "status" if sub == "status" else "")
    node = _ROOTS.get(key)
    if node is None:
        if sub == "status":
            node = TypeNode.root(rt.model, rt.key, _ROOT_IGNORED, frozenset({"status"}), META_IGNORED)
        else:
            ignored = _ROOT_IGNORED | ({"status"} if "status" in rt.subresources else set())
            node = TypeNode.root(rt.model, rt.key, frozenset(ignored), None, META_IGNORED)
        _ROOTS[key] = node
    return node


def decode(raw: Any) -> list[Entry] | None:
    """Entries from the wire; None if they are not well formed (then the stored ones are kept)."""
    if not isinstance(raw, list):
        return None
    out = []
    for e in raw:
        if not isinstance(e, dict) or e.get("operation") not in (APPLY, UPDATE):
            return None
        fields = e.get("fieldsV1") or {}
        if e.get("fieldsType", "FieldsV1") != "FieldsV1" or not _is_trie(fields):
            return None
        if not isinstance(e.get("time"), str | None) or not all(
            isinstance(e.get(k) or "", str) for k in ("manager", "apiVersion", "subresource")
        ):
            return None
        out.append(Entry(str(e.get("manager") or ""), e["operation"], str(e.get("apiVersion") or ""),
                         e.get("time"), fields, str(e.get("subresource") or "")))
    return out


def _is_trie(node: Any, depth: int = 0) -> bool:
    """FieldsV1 is objects all the way down, with string keys."""
    if not isinstance(node, dict) or depth > 100:
        return False
    return all(isinstance(k, str) and _is_trie(v, depth + 1) for k, v in node.items())


def encode(entries: list[Entry]) -> list[dict[str, Any]]:
    """Kubernetes' order: Apply before Update, then oldest first, then by manager."""
    kept = [e for e in entries if e.fields]
    kept.sort(key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource))
    return [e.encode() for e in kept]


def base_entries(old: dict[str, Any] | None, new: dict[str, Any], subresource: str | None) -> list[Entry]:
    """The entries a write starts from: the request's own if it changed them, else the stored ones."""
    stored = ((old or {}).get("metadata") or {}).get("managedFields")
    sent = (new.get("metadata") or {}).get("managedFields")
    if not subresource and sent is not None and sent != stored:
        if sent == [{}]:
            return []
        decoded = decode(sent)
        if decoded:
            return decoded
    return decode(stored) or []


def set_entries(obj: dict[str, Any], entries: list[Entry]) -> None:
    md = obj.setdefault("metadata", {})
    encoded = encode(entries)
    if encoded:
        md["managedFields"] = encoded
    else:
        md.pop("managedFields", None)


def record_update(
    rt: ResourceType, old: dict[str, Any] | None, new: dict[str, Any], manager: str,
    subresource: str | None, now: str,
) -> None:
    """Give `manager` the fields this write changed, take them from everyone else; sets `new`'s
    metadata.managedFields. `old` is None for a create."""
    entries = base_entries(old, new, subresource)
    if old is None and not entries:  # the common create: the creator owns everything it set
        fields = to_set(new, root_type(rt, subresource))
        md = new.setdefault("metadata", {})
        md.pop("managedFields", None)
        if fields:
            md["managedFields"] = [Entry(manager, UPDATE, rt.api_version, now, fields, subresource or "").encode()]
        return
    added, modified, removed = compare(old, new, root_type(rt, subresource))
    changed = union(added, modified)
    ident = (manager, UPDATE, subresource or "", rt.api_version)
    mine = next((e for e in entries if e.ident() == ident), None)
    if changed or removed:
        taken = union(changed, removed)
        for e in entries:
            if e is not mine:
                e.fields = difference(e.fields, taken)
    if changed:
        if mine is None:
            mine = Entry(manager, UPDATE, rt.api_version, now, {}, subresource or "")
            entries.append(mine)
        mine.fields = union(difference(mine.fields, removed), changed)
        mine.time = now
    elif removed and mine is not None:
        mine.fields = difference(mine.fields, removed)
    set_entries(new, entries)
