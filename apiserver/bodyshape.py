"""Limits on the *shape* of a decoded body, checked before anything walks it.

A body's size in bytes (--max-request-bytes) says little about the work it causes:
- YAML anchors let a 700-byte document describe a billion nodes ("billion laughs"; Kubernetes fixed
  this as CVE-2019-11253). PyYAML keeps aliases shared, so loading is cheap — the cost comes later,
  when anything walks or serialises the object;
- anchors can even make a node contain itself, which no walk ever finishes;
- deep nesting exhausts Python's recursion in any recursive walk.
So every decoded body is measured once, iteratively, counting shared nodes every time they are
reachable (what a walk would pay), and refused with 400 past these limits. No real Kubernetes object
comes near them. Numbers must also fit what Kubernetes' Go types can hold: int64 and finite floats.

A JSON body cannot share or loop (json.loads builds a fresh tree), so `check_tree` measures it with
a plain recursive walk — the same limits at a tenth of the cost (a pod's body: ~2 µs instead of
~25; every create and update pays it).
"""

from __future__ import annotations

import math
from typing import Any

from api import errors

MAX_DEPTH = 128
MAX_NODES = 1_000_000
INT64_MAX = 2**63 - 1


def _children(node: Any) -> list[Any]:
    return list(node.values()) if isinstance(node, dict) else node


def _check_scalar(value: Any) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise errors.bad_request(f"the number {value} does not fit in a 64-bit integer")
    if isinstance(value, float) and not math.isfinite(value):
        raise errors.bad_request(f"the number {value} is not a finite number")


def check_shape(doc: Any) -> None:
    """Raise 400 if `doc` is cyclic, deeper than MAX_DEPTH, larger than MAX_NODES, or has bad numbers."""
    if not isinstance(doc, dict | list):
        _check_scalar(doc)
        return
    sizes: dict[int, int] = {}  # id(container) → nodes below and including it, fully expanded
    path = {id(doc)}
    stack = [(doc, iter(_children(doc)))]
    while stack:
        node, pending = stack[-1]
        for child in pending:
            if isinstance(child, dict | list):
                cid = id(child)
                if cid in sizes:
                    continue
                if cid in path:
                    raise errors.bad_request("the body refers to itself (a cyclic YAML alias)")
                if len(stack) >= MAX_DEPTH:
                    raise errors.bad_request(f"the body is nested more than {MAX_DEPTH} levels deep")
                path.add(cid)
                stack.append((child, iter(_children(child))))
                break
            _check_scalar(child)
        else:
            stack.pop()
            path.discard(id(node))
            total = 1 + sum(sizes[id(c)] if isinstance(c, dict | list) else 1 for c in _children(node))
            if total > MAX_NODES:
                raise errors.bad_request(f"the body expands to more than {MAX_NODES} values (YAML aliases?)")
            sizes[id(node)] = total


def check_tree(doc: Any) -> None:
    """check_shape for a body that is a tree (decoded JSON: no shared or cyclic nodes)."""
    if _tree_nodes(doc, 1) > MAX_NODES:
        raise errors.bad_request(f"the body expands to more than {MAX_NODES} values (YAML aliases?)")


def _tree_nodes(node: Any, depth: int) -> int:
    # Decoded JSON holds exactly these types, so `type(x) is` (faster than isinstance) is enough.
    kind = type(node)
    if kind is dict:
        children: Any = node.values()
    elif kind is list:
        children = node
    else:
        _check_scalar(node)
        return 1
    if depth > MAX_DEPTH:
        raise errors.bad_request(f"the body is nested more than {MAX_DEPTH} levels deep")
    total = 1
    for child in children:
        kind = type(child)
        if kind is dict or kind is list:
            total += _tree_nodes(child, depth + 1)
        else:
            if kind is int or kind is float:
                _check_scalar(child)
            total += 1
    return total
