"""JSON patch (RFC 6902): `Content-Type: application/json-patch+json`.

A JSON patch is a list of operations applied in order, each naming its target with a JSON
pointer (RFC 6901), e.g. `/spec/template/spec/containers/0/image`:

    add      put `value` at `path` (inserting into a list; `-` means "append")
    remove   delete the value at `path`
    replace  remove + add, but the target must already exist
    move     remove at `from`, add at `path`
    copy     add a deep copy of the value at `from` to `path`
    test     fail the whole patch unless the value at `path` equals `value`

The patch is atomic: if any operation fails, nothing is applied (we work on a deep copy and
only return it at the end). Kubernetes uses the evanphx/json-patch library, so its error
messages are the ones users see from `kubectl patch --type=json`; we reproduce their wording,
e.g. `testing value /spec/replicas failed: test failed`.

Pointer escaping: `~1` stands for `/` and `~0` for `~` inside one reference token, so the
annotation key `example.com/owner` is addressed as `/metadata/annotations/example.com~1owner`.
"""

import copy
from typing import Any

from api.patch._json import JSON, json_equal
from api.patch.errors import UNPROCESSABLE, PatchError

_MISSING = "missing value"  # evanphx' ErrMissing, appended after a colon like Go's error wrapping
_INVALID_INDEX = "invalid index referenced"


def json_patch(doc: JSON, ops: list[dict[str, Any]]) -> JSON:
    """Apply the operations in `ops` to a copy of `doc` and return it (`doc` is not modified)."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    result = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict):
            raise PatchError(f"a JSON patch operation must be an object, got: {op!r}")
        result = _apply_op(result, op)
    return result


def parse_pointer(pointer: str) -> list[str]:
    """Split a JSON pointer into unescaped reference tokens ("" is the whole document)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise _does_not_apply(f"invalid JSON pointer {pointer!r}: it must be empty or start with '/'")
    # Order matters (RFC 6901 §4): first ~1 -> /, then ~0 -> ~, so "~01" decodes to "~1".
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _apply_op(doc: JSON, op: dict[str, Any]) -> JSON:
    kind = op.get("op")
    if kind not in _OPERATIONS:
        raise _does_not_apply(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
    path = op.get("path")
    if not isinstance(path, str):
        raise _does_not_apply(f"{kind} operation failed to decode path: {_MISSING}")
    if kind in ("add", "replace", "test") and "value" not in op:
        raise _does_not_apply(f"{kind} operation for path {path} has no value field: {_MISSING}")
    if kind in ("move", "copy") and not isinstance(op.get("from"), str):
        raise _does_not_apply(f"{kind} operation failed to decode from: {_MISSING}")
    return _OPERATIONS[kind](doc, op, path)


def _parent(doc: JSON, tokens: list[str]) -> JSON | None:
    """The container holding the last token of a pointer, or None if the path does not exist."""
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and (index := _index(token, len(node) - 1)) is not None:
            node = node[index]
        else:
            return None
    return node if isinstance(node, dict | list) else None


def _index(token: str, last: int) -> int | None:
    """A list index from a token: decimal digits, no leading zero, and at most `last`."""
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        return None
    value = int(token)
    return value if value <= last else None


def _add(doc: JSON, op: dict[str, Any], path: str) -> JSON:
    return _add_value(doc, path, copy.deepcopy(op["value"]), "add")


def _add_value(doc: JSON, path: str, value: JSON, kind: str) -> JSON:
    tokens = parse_pointer(path)
    if not tokens:
        return value  # adding at the root replaces the whole document
    parent = _parent(doc, tokens)
    if parent is None:
        if kind in ("move", "copy"):
            raise _does_not_apply(
                f"{kind} operation does not apply: doc is missing destination path: {path}: {_MISSING}"
            )
        raise _does_not_apply(f'add operation does not apply: doc is missing path: "{path}": {_MISSING}')
    key = tokens[-1]
    if isinstance(parent, dict):
        parent[key] = value
    elif key == "-":
        parent.append(value)
    else:
        index = _index(key, len(parent))  # inserting at len(list) is allowed: it appends
        if index is None:
            raise _does_not_apply(
                f"error in {kind} for path: '{path}': Unable to access invalid index: {key}: {_INVALID_INDEX}"
            )
        parent.insert(index, value)
    return doc


def _remove(doc: JSON, op: dict[str, Any], path: str) -> JSON:
    _take(doc, path, "remove")
    return doc


def _take(doc: JSON, path: str, kind: str) -> JSON:
    """Remove and return the value at `path` (for remove and move)."""
    tokens = parse_pointer(path)
    parent = _parent(doc, tokens) if tokens else None
    if parent is None:
        if kind == "move":
            raise _does_not_apply(f"move operation does not apply: doc is missing from path: {path}: {_MISSING}")
        raise _does_not_apply(f'remove operation does not apply: doc is missing path: "{path}": {_MISSING}')
    key = tokens[-1]
    if isinstance(parent, dict):
        if key not in parent:
            raise _does_not_apply(
                f"error in {kind} for path: '{path}': Unable to remove nonexistent key: {key}: {_MISSING}"
            )
        return parent.pop(key)
    index = _index(key, len(parent) - 1)
    if index is None:
        raise _does_not_apply(
            f"error in {kind} for path: '{path}': Unable to access invalid index: {key}: {_INVALID_INDEX}"
        )
    return parent.pop(index)


def _get(doc: JSON, path: str) -> tuple[bool, JSON]:
    """(found, value) for the value at `path`."""
    tokens = parse_pointer(path)
    if not tokens:
        return True, doc
    parent = _parent(doc, tokens)
    if isinstance(parent, dict):
        return (tokens[-1] in parent), parent.get(tokens[-1])
    if isinstance(parent, list):
        index = _index(tokens[-1], len(parent) - 1)
        return (index is not None), (parent[index] if index is not None else None)
    return False, None


def _replace(doc: JSON, op: dict[str, Any], path: str) -> JSON:
    tokens = parse_pointer(path)
    value = copy.deepcopy(op["value"])
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    if parent is None:
        raise _does_not_apply(f"replace operation does not apply: doc is missing path: {path}: {_MISSING}")
    found, _ = _get(doc, path)
    if not found:
        raise _does_not_apply(f"replace operation does not apply: doc is missing key: {path}: {_MISSING}")
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    else:
        parent[int(tokens[-1])] = value
    return doc


def _move(doc: JSON, op: dict[str, Any], path: str) -> JSON:
    source = op["from"]
    if path != source and path.startswith(source + "/"):
        # RFC 6902 §4.4: a location cannot be moved into one of its own children.
        raise _does_not_apply(f"move operation does not apply: cannot move {source} into its child {path}")
    value = _take(doc, source, "move")
    return _add_value(doc, path, value, "move")


def _copy(doc: JSON, op: dict[str, Any], path: str) -> JSON:
    source = op["from"]
    found, value = _get(doc, source)
    if not found:
        raise _does_not_apply(f"copy operation does not apply: doc is missing from path: {source}: {_MISSING}")
    return _add_value(doc, path, copy.deepcopy(value), "copy")


def _test(doc: JSON, op: dict[str, Any], path: str) -> JSON:
    tokens = parse_pointer(path)
    if tokens and _parent(doc, tokens) is None:
        raise _does_not_apply(f"test operation does not apply: is missing path: {path}: {_MISSING}")
    found, value = _get(doc, path)
    if not found or not json_equal(value, op["value"]):
        raise _does_not_apply(f"testing value {path} failed: test failed")
    return doc


def _does_not_apply(message: str) -> PatchError:
    """A well-formed operation that does not fit the document: 422, as in Kubernetes."""
    return PatchError(message, UNPROCESSABLE)


_OPERATIONS = {
    "add": _add,
    "remove": _remove,
    "replace": _replace,
    "move": _move,
    "copy": _copy,
    "test": _test,
}
