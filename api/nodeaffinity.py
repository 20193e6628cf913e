"""Does a pod fit a node by labels, name and taints? The rules the scheduler and the controllers share.

Three places in Kubernetes ask this same question and must agree: the scheduler (NodeAffinity and
TaintToleration filters), the DaemonSet controller ("should this node run a daemon pod?") and the
node lifecycle controller (which NoExecute taints evict a pod). The rules, as Kubernetes states them:

- `nodeSelector`: every key=value must be a label of the node.
- required node affinity: at least one `nodeSelectorTerms` entry matches; a term matches when all
  its `matchExpressions` (on labels) and `matchFields` (only `metadata.name`) hold; a term with
  neither matches nothing. Operators: In, NotIn, Exists, DoesNotExist, Gt, Lt (integers).
- a toleration matches a taint when its effect is empty or equal, its key is empty (with Exists:
  "tolerate everything") or equal, and its operator is Exists or its value is equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def requirement_matches(req: Mapping[str, Any], values: Mapping[str, str]) -> bool:
    key, op, vals = req.get("key") or "", req.get("operator") or "", req.get("values") or []
    present = key in values
    if op == "In":
        return present and values[key] in vals
    if op == "NotIn":
        return not present or values[key] not in vals
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(vals) == 1:
        try:
            have, want = int(values[key]), int(vals[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def term_matches(term: Mapping[str, Any], labels: Mapping[str, str], name: str) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    if not all(requirement_matches(r, labels) for r in exprs):
        return False
    return all(requirement_matches(f, {"metadata.name": name}) for f in fields)


def required_terms(pod_spec: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The required node affinity terms of a pod spec, None when it has no such requirement."""
    affinity = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not affinity:
        return None
    return list(affinity.get("nodeSelectorTerms") or [])


def node_matches(pod_spec: Mapping[str, Any], labels: Mapping[str, str], name: str) -> bool:
    """nodeSelector and required node affinity of `pod_spec` both hold for this node."""
    if any(labels.get(k) != v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    terms = required_terms(pod_spec)
    return terms is None or any(term_matches(t, labels, name) for t in terms)


def toleration_matches(tol: Mapping[str, Any], key: str, value: str, effect: str) -> bool:
    if tol.get("effect") and tol["effect"] != effect:
        return False
    if tol.get("key") and tol["key"] != key:
        return False
    if tol.get("operator") == "Exists":
        return True
    return (tol.get("value") or "") == value  # operator Equal (the default)


def tolerated(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
    return any(toleration_matches(t, key, value, effect) for t in tolerations)
