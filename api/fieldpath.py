"""Field sets: which fields of an object a manager owns, in Kubernetes' FieldsV1 form.

Server-side apply records, per manager, a *set of field paths*. Kubernetes serialises a set as a
trie of JSON objects (FieldsV1); we compute with that very form, so encoding costs nothing:

    {"f:metadata": {"f:labels": {"f:app": {}}},            a path is a chain of keys:
     "f:spec": {"f:replicas": {},                           f:<name>    a field of an object / map
                "f:template": {"f:spec": {"f:containers": { k:<json>    a list item by its keys
                    'k:{"name":"nginx"}': {".": {},         v:<json>    a value of a set-list
                                           "f:image": {}}}}}},          i:<n>      an item by index
     "f:finalizers": {'v:"example.com/x"': {}}}              .          the node itself

A node that is `{}` is a member (a leaf); a node with children is a member only if it holds
`"."` (a list item owned as a whole *and* field by field). The root is never a member.

What becomes a path depends on the schema (TypeNode): objects of a known model (structs) are
walked field by field; free-form maps (`labels`, `data`) entry by entry; lists are *atomic*
(owned whole: `command`, `tolerations`), *sets* (`finalizers`) or *maps* keyed by merge keys
(`containers` by name, container `ports` by containerPort+protocol). The list facts come from
api/patch/schema.py, the one table of strategic-merge metadata: Kubernetes'
x-kubernetes-list-type/map-keys coincide with patchStrategy/patchMergeKey there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from api.patch.schema import LIST_MAP_KEYS, PatchMeta, Schema
from api.schema import model_shape

FieldSet = dict[str, Any]  # the FieldsV1 trie (children of the root)
ME = "."

# Structs that Kubernetes marks +structType=atomic: owned and replaced as a whole.
ATOMIC_STRUCTS = frozenset({"LabelSelector", "NodeSelector"})
# Key fields that have a default, so `k:{...}` matches whether or not the client sent them.
KEY_DEFAULTS = {"protocol": "TCP"}


class TypeNode:
    """What a value at one position of an object is: struct, map, list (atomic/set/map) or leaf."""

    __slots__ = ("_fields", "_shape", "ignored", "item", "keys", "kind", "only", "patch")

    def __init__(self, shape: Any, patch: Schema, meta: PatchMeta | None = None, owner: str = "") -> None:
        self._shape, self.patch = shape, patch
        self._fields: dict[str, TypeNode | None] = {}
        self.item: TypeNode | None = None
        self.keys: tuple[str, ...] = ()
        self.ignored: frozenset[str] = frozenset()
        self.only: frozenset[str] | None = None
        kind = "deduced" if shape is None else shape.kind
        if kind == "model":
            kind = "atomic" if shape.model.__name__ in ATOMIC_STRUCTS else "struct"
        elif kind == "map":
            self.item = TypeNode(shape.item, Schema(None))
        elif kind == "list":
            strategy, key = (meta.strategy, meta.merge_key) if meta else ("", "")
            if strategy == "merge" and key:
                kind, self.keys = "map-list", LIST_MAP_KEYS.get(owner, (key,))
            elif strategy == "merge" and shape.item is not None and shape.item.kind == "leaf":
                kind = "set"
            else:
                kind = "atomic"
            self.item = TypeNode(shape.item, patch)
        self.kind = kind

    @classmethod
    def root(cls, model: type, resource: str, ignored: frozenset[str], only: frozenset[str] | None,
             meta_ignored: frozenset[str]) -> TypeNode:
        """The root of a resource, with the fields no manager owns (apiVersion, metadata.uid, ...)."""
        from api.patch.schema import schema_for

        node = cls(model_shape(model), schema_for(resource))
        node.ignored, node.only = ignored, only
        meta = node.field("metadata")
        if meta is not None:
            md = cls(meta._shape, meta.patch)
            md.ignored = meta_ignored
            node._fields["metadata"] = md
        return node

    def field(self, name: str) -> TypeNode | None:
        """The type of a struct's field; None for a field the model does not know."""
        try:
            return self._fields[name]
        except KeyError:
            pass
        child = None
        shape = self._shape.fields.get(name) if self._shape is not None and self.kind == "struct" else None
        if shape is not None:
            meta, sub = self.patch.lookup(name)
            child = TypeNode(shape, sub, meta, f"{self.patch.type_name}.{name}")
        self._fields[name] = child
        return child


DEDUCED = TypeNode(None, Schema(None))


# -- keys ----------------------------------------------------------------------------------------
def compact_json(value: Any) -> str:
    """Compact JSON as Go writes it (no spaces, non-ASCII kept). Strings and numbers, the usual
    key values, skip the json module's encoder object: this runs for every list item."""
    cls = value.__class__
    if cls is str:
        return encode_basestring(value)
    if cls is int:
        return str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def item_key(item: Any, keys: tuple[str, ...]) -> str:
    """`k:{"containerPort":80,"protocol":"TCP"}`: key fields sorted by name, defaults filled in."""
    if not isinstance(item, dict):
        return "v:" + compact_json(item)
    if len(keys) == 1:
        k = keys[0]
        return f'k:{{"{k}":{compact_json(item.get(k, KEY_DEFAULTS.get(k)))}}}'
    return "k:{" + ",".join(f'"{k}":{compact_json(item.get(k, KEY_DEFAULTS.get(k)))}' for k in sorted(keys)) + "}"


def children(value: Any, t: TypeNode) -> Iterator[tuple[str, Any, TypeNode, bool]]:
    """(path key, child value, child type, child is a member even when it has children)."""
    kind = t.kind
    if kind == "struct":
        ignored, only = t.ignored, t.only
        for name, child in value.items():
            if name in ignored or (only is not None and name not in only):
                continue
            ct = t.field(name)
            if ct is None:
                yield f"f:{name}", child, DEDUCED, True
            else:
                yield f"f:{name}", child, ct, False
    elif kind in ("map", "deduced"):
        item = t.item or DEDUCED
        for name, child in value.items():
            yield f"f:{name}", child, item, True
    elif kind == "map-list":
        item, keys = t.item or DEDUCED, t.keys
        for child in value:
            yield item_key(child, keys), child, item, True
    elif kind == "set":
        for child in value:
            yield "v:" + compact_json(child), child, DEDUCED, True


def granular(value: Any, t: TypeNode) -> bool:
    """Is this value owned field by field (True) or as one leaf (False)?"""
    if isinstance(value, dict):
        return bool(value) and t.kind in ("struct", "map", "deduced")
    if isinstance(value, list):
        return bool(value) and t.kind in ("map-list", "set")
    return False


def to_set(value: Any, t: TypeNode) -> FieldSet:
    """Every field path set in `value` (what an applier owns of its configuration).

    The hot path of every create, so the common cases are spelled out rather than going through
    `children` (no generator, no tuple per field)."""
    kind = t.kind
    out: FieldSet = {}
    if kind == "struct":
        ignored, only, fields = t.ignored, t.only, t._fields
        for name, child in value.items():
            if name in ignored or (only is not None and name not in only):
                continue
            ct = fields[name] if name in fields else t.field(name)
            cls = child.__class__
            if ct is None:
                out[f"f:{name}"] = {ME: {}, **to_set(child, DEDUCED)} if cls is dict and child else {}
            elif (cls is dict or cls is list) and child and ct.kind in _GRANULAR[cls]:
                node = to_set(child, ct)
                if node:
                    out[f"f:{name}"] = node
            else:
                out[f"f:{name}"] = {}
        return out
    if kind == "map" or kind == "deduced":
        item = t.item or DEDUCED
        granular_kinds = _GRANULAR[dict]
        for name, child in value.items():
            if child.__class__ is dict and child and item.kind in granular_kinds:
                out[f"f:{name}"] = {ME: {}, **to_set(child, item)}
            else:
                out[f"f:{name}"] = {}
        return out
    if kind == "map-list":
        item, keys = t.item or DEDUCED, t.keys
        granular_kinds = _GRANULAR[dict]
        for child in value:
            if child.__class__ is dict and child and item.kind in granular_kinds:
                out[item_key(child, keys)] = {ME: {}, **to_set(child, item)}
            else:
                out[item_key(child, keys)] = {}
        return out
    return _to_set_generic(value, t)


_GRANULAR: dict[type, frozenset[str]] = {
    dict: frozenset({"struct", "map", "deduced"}),
    list: frozenset({"map-list", "set"}),
}


def _to_set_generic(value: Any, t: TypeNode) -> FieldSet:
    out: FieldSet = {}
    for key, child, ct, member in children(value, t):
        if granular(child, ct):
            node = to_set(child, ct)
            if member:
                out[key] = {ME: {}, **node}
            elif node:
                out[key] = node
        else:
            out[key] = {}
    return out


def compare(old: Any, new: Any, t: TypeNode) -> tuple[FieldSet, FieldSet, FieldSet]:
    """(added, modified, removed) between two values of the same type."""
    added: FieldSet = {}
    modified: FieldSet = {}
    removed: FieldSet = {}
    before = {key: (child, ct, member) for key, child, ct, member in children(old, t)} if old else {}
    for key, child, ct, member in children(new, t):
        prev = before.pop(key, None)
        if prev is None:
            sub = _subtree(child, ct, member)
            if sub is not None:
                added[key] = sub
            continue
        old_child = prev[0]
        if old_child == child:
            continue
        if granular(child, ct) and granular(old_child, ct):
            a, m, r = compare(old_child, child, ct)
            if a:
                added[key] = a
            if m:
                modified[key] = m
            if r:
                removed[key] = r
        elif granular(child, ct) or granular(old_child, ct):
            # An empty object or list grew children, or lost them all, or a leaf became compound.
            if old_child in ({}, []):
                sub = _subtree(child, ct, False)
                if sub:
                    added[key] = sub
            elif child in ({}, []):
                sub = _subtree(old_child, ct, False)
                if sub:
                    removed[key] = sub
            else:
                modified[key] = {}
                sub = _subtree(child, ct, False)
                if sub:
                    added[key] = sub
        else:
            modified[key] = {}
    for key, (child, ct, member) in before.items():
        sub = _subtree(child, ct, member)
        if sub is not None:
            removed[key] = sub
    return added, modified, removed


def _subtree(value: Any, t: TypeNode, member: bool) -> FieldSet | None:
    """The set of one child: {} for a leaf, its paths (plus "." if a member); None if nothing."""
    if not granular(value, t):
        return {}
    node = to_set(value, t)
    if member:
        return {ME: {}, **node}
    return node or None


# -- set algebra on tries ------------------------------------------------------------------------
def is_member(node: FieldSet) -> bool:
    return not node or ME in node


def _kids(node: FieldSet) -> FieldSet:
    return {k: v for k, v in node.items() if k != ME} if ME in node else node


def _finish(kids: FieldSet, member: bool) -> FieldSet | None:
    if kids:
        return {**kids, ME: {}} if member else kids
    return {} if member else None


def union(a: FieldSet, b: FieldSet) -> FieldSet:
    if not b:
        return a
    if not a:
        return b
    out = dict(a)
    for key, bn in b.items():
        an = out.get(key)
        if an is None:
            out[key] = bn
        elif an is not bn:
            node = _finish(union(_kids(an), _kids(bn)), is_member(an) or is_member(bn))
            out[key] = node if node is not None else {}
    return out


def difference(a: FieldSet, b: FieldSet) -> FieldSet:
    if not b or not a:
        return a
    out: FieldSet = {}
    for key, an in a.items():
        bn = b.get(key)
        if bn is None:
            out[key] = an
            continue
        node = _finish(difference(_kids(an), _kids(bn)), is_member(an) and not is_member(bn))
        if node is not None:
            out[key] = node
    return out


def intersection(a: FieldSet, b: FieldSet) -> FieldSet:
    out: FieldSet = {}
    for key, an in a.items():
        bn = b.get(key)
        if bn is None:
            continue
        node = _finish(intersection(_kids(an), _kids(bn)), is_member(an) and is_member(bn))
        if node is not None:
            out[key] = node
    return out


def paths(s: FieldSet, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every member path, depth first, in key order."""
    for key in sorted(k for k in s if k != ME):
        node = s[key]
        path = (*prefix, key)
        if is_member(node):
            yield path
        yield from paths(node, path)


def has_under(s: FieldSet, path: tuple[str, ...]) -> bool:
    """Does the set hold `path` or anything below it?"""
    node = s
    for key in path:
        node = node.get(key)  # type: ignore[assignment]
        if node is None:
            return False
    return True


# -- printing --------------------------------------------------------------------------------------
def _go_value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return compact_json(value)


def path_string(path: tuple[str, ...]) -> str:
    """`.spec.template.spec.containers[name="nginx"].image`, as Kubernetes prints a path."""
    parts = []
    for key in path:
        tag, body = key[:2], key[2:]
        if tag == "f:":
            parts.append("." + body)
        elif tag == "k:":
            fields = json.loads(body)
            parts.append("[" + ",".join(f"{k}={_go_value(v)}" for k, v in fields.items()) + "]")
        elif tag == "v:":
            parts.append("[=" + _go_value(json.loads(body)) + "]")
        else:
            parts.append(f"[{body}]")
    return "".join(parts)
