"""Server-side apply: merge a manager's configuration into the live object, or refuse with conflicts.

An apply says "these are the fields I care about, with these values" (a partial object). The
server, for manager M:

1. merges the configuration into the live object: objects key by key, map-lists item by item by
   their keys, set-lists as a union, everything else (scalars, atomic lists and structs) replaced;
2. removes what M applied last time but no longer applies, unless another manager owns it;
3. compares live and result: a field that would *change* and is owned by another manager is a
   conflict. Without `force` the apply fails with 409 naming every such field and its owner;
   with `force` M takes them. Setting a field to the value it already has is no conflict: the
   field is then shared;
4. records M's Apply entry as exactly the field set of its configuration (api/managedfields.py).

`kubectl apply --server-side` (manager "kubectl") on an object last written by client-side apply
is let through where the conflicting fields are exactly those of the last-applied-configuration
annotation, still holding the applied values: the user is taking over their own configuration.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from api.fieldpath import (
    DEDUCED,
    FieldSet,
    TypeNode,
    compact_json,
    compare,
    difference,
    intersection,
    is_member,
    item_key,
    path_string,
    paths,
    to_set,
    union,
)
from api.managedfields import APPLY, Entry, decode, root_type, set_entries
from api.registry import ResourceType

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL = "kubectl"


class ApplyConflicts(Exception):
    """The fields another manager owns that this apply would change: [(manager text, path)]."""

    def __init__(self, conflicts: list[tuple[str, str]]) -> None:
        super().__init__(conflicts)
        self.conflicts = conflicts


def _child_type(t: TypeNode, name: str) -> TypeNode:
    if t.kind == "struct":
        return t.field(name) or DEDUCED
    return t.item or DEDUCED


def merge(live: Any, config: Any, t: TypeNode) -> Any:
    """The live value with the configuration merged in (neither is changed)."""
    if isinstance(config, dict) and isinstance(live, dict) and t.kind in ("struct", "map", "deduced"):
        out = dict(live)
        for key, value in config.items():
            if value is None:
                out.pop(key, None)
            elif key in live:
                out[key] = merge(live[key], value, _child_type(t, key))
            else:
                out[key] = value
        return out
    if isinstance(config, list) and isinstance(live, list):
        if t.kind == "map-list":
            items = list(live)
            index = {item_key(x, t.keys): i for i, x in enumerate(items)}
            for item in config:
                k = item_key(item, t.keys)
                if k in index:
                    items[index[k]] = merge(items[index[k]], item, t.item or DEDUCED)
                else:
                    index[k] = len(items)
                    items.append(item)
            return items
        if t.kind == "set":
            items = list(live)
            seen = {json.dumps(x, sort_keys=True, default=str) for x in items}
            for item in config:
                if json.dumps(item, sort_keys=True, default=str) not in seen:
                    items.append(item)
            return items
    return config


def prune(value: Any, remove: FieldSet, keep: FieldSet, t: TypeNode) -> Any:
    """`value` without the paths in `remove`, except what `keep` (other managers) still owns."""
    if isinstance(value, dict):
        out = dict(value)
        for key, node in remove.items():
            name = key[2:]
            if key[:2] != "f:" or name not in out:
                continue
            kept = keep.get(key)
            if is_member(node) and kept is None:
                del out[name]
            elif kept is not None or not is_member(node):
                out[name] = prune(out[name], node, kept or {}, _child_type(t, name))
        return out
    if isinstance(value, list) and t.kind in ("map-list", "set"):
        out_items = []
        for item in value:
            key = item_key(item, t.keys) if t.kind == "map-list" else "v:" + compact_json(item)
            node = remove.get(key)
            if node is None:
                out_items.append(item)
                continue
            kept = keep.get(key)
            if is_member(node) and kept is None:
                continue
            out_items.append(prune(item, node, kept or {}, t.item or DEDUCED) if t.kind == "map-list" else item)
        return out_items
    return value


def _describe(e: Entry) -> str:
    text = json.dumps(e.manager, ensure_ascii=False)
    if e.subresource:
        text += f" with subresource {json.dumps(e.subresource)}"
    if e.operation != APPLY:
        text += f" using {e.api_version}"
    return text


def _last_applied_allowance(live: dict[str, Any], t: TypeNode, api_version: str) -> FieldSet:
    """Fields of the last-applied annotation that still hold their applied values."""
    raw = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    try:
        last = json.loads(raw) if raw else None
    except ValueError:
        return {}
    if not isinstance(last, dict) or last.get("apiVersion") != api_version:
        return {}
    added, modified, removed = compare(last, live, t)
    return difference(to_set(last, t), union(union(added, modified), removed))


def apply(
    rt: ResourceType, live: dict[str, Any], config: dict[str, Any], manager: str, *,
    subresource: str | None = None, force: bool = False, now: str,
) -> dict[str, Any]:
    """The object after `manager` applies `config` to `live` (managedFields included)."""
    t = root_type(rt, subresource)
    config = copy.deepcopy(config)
    config.get("metadata", {}).pop("managedFields", None)
    entries = decode((live.get("metadata") or {}).get("managedFields")) or []
    ident = (manager, APPLY, subresource or "", "")
    mine = next((e for e in entries if e.ident() == ident), None)
    others = [e for e in entries if e is not mine]
    applied = to_set(config, t)
    merged = merge(live, config, t)
    if mine is not None and mine.fields:
        owned_by_others: FieldSet = {}
        for e in others:
            owned_by_others = union(owned_by_others, e.fields)
        gone = difference(mine.fields, applied)
        if gone:
            merged = prune(merged, gone, owned_by_others, t)
    added, modified, removed = compare(live, merged, t)
    changed = union(added, modified)
    conflicts: list[tuple[str, tuple[str, ...]]] = []
    for e in others:
        for path in paths(intersection(e.fields, changed)):
            conflicts.append((_describe(e), path))
    if conflicts and not force and manager == KUBECTL:
        allowed = _last_applied_allowance(live, t, rt.api_version)
        conflicts = [(who, path) for who, path in conflicts if not _holds(allowed, path)]
        force = not conflicts
    if conflicts and not force:
        raise ApplyConflicts([(who, path_string(path)) for who, path in conflicts])
    taken = union(changed, removed)
    for e in others:
        e.fields = difference(e.fields, taken)
    if mine is None:
        mine = Entry(manager, APPLY, rt.api_version, now, applied, subresource or "")
        entries.append(mine)
    mine.fields, mine.time, mine.api_version = applied, now, rt.api_version
    set_entries(merged, entries)
    if manager == KUBECTL and LAST_APPLIED in ((merged.get("metadata") or {}).get("annotations") or {}):
        _refresh_last_applied(merged, config)
    return merged


def _holds(s: FieldSet, path: tuple[str, ...]) -> bool:
    node: Any = s
    for key in path:
        node = node.get(key)
        if node is None:
            return False
    return is_member(node)


def _refresh_last_applied(obj: dict[str, Any], config: dict[str, Any]) -> None:
    """kubectl's annotation follows a server-side apply, so client-side apply can resume later."""
    last = copy.deepcopy(config)
    annotations = (last.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    md = obj["metadata"] = dict(obj["metadata"])
    md["annotations"] = {**md["annotations"], LAST_APPLIED: json.dumps(last, separators=(",", ":"))}
