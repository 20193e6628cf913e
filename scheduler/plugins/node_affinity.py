"""NodeAffinity: `spec.nodeSelector` and `affinity.nodeAffinity`, the pod choosing nodes by label.

Filter (both must hold; either failing gives "node(s) didn't match Pod's node affinity/selector"):
- nodeSelector: every key=value present in the node's labels;
- requiredDuringSchedulingIgnoredDuringExecution: at least one nodeSelectorTerm matches (terms
  are ORed); inside a term, every matchExpression and matchField holds (ANDed). Operators In,
  NotIn, Exists, DoesNotExist, Gt, Lt; matchFields knows `metadata.name`. A term with nothing
  in it matches nothing.
Score (weight 2): the sum of the weights of the preferred terms the node matches, scaled to 0..100.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.framework import FilterPlugin, NodeInfo, PodInfo, ScorePlugin, normalize

REASON = "node(s) didn't match Pod's node affinity/selector"


def _requirement_matches(req: Mapping[str, Any], values: Mapping[str, str]) -> bool:
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


def term_matches(term: Mapping[str, Any], node: NodeInfo) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    if not all(_requirement_matches(r, node.labels) for r in exprs):
        return False
    return all(_requirement_matches(f, {"metadata.name": node.name}) for f in fields)


class NodeAffinity(FilterPlugin):
    name = "NodeAffinity"

    def relevant(self, pod: PodInfo) -> bool:
        return bool(pod.node_selector) or pod.required_terms is not None

    def filter(self, pod: PodInfo, node: NodeInfo) -> Sequence[str] | None:
        labels = node.labels
        for k, v in pod.node_selector.items():
            if labels.get(k) != v:
                return (REASON,)
        terms = pod.required_terms
        if terms is not None and not any(term_matches(t, node) for t in terms):
            return (REASON,)
        return None


class NodeAffinityScore(ScorePlugin):
    name = "NodeAffinity"
    weight = 2

    def relevant(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> bool:
        return bool(pod.preferred_terms)

    def score(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
        prefs = [(int(p.get("weight") or 0), p.get("preference") or {}) for p in pod.preferred_terms]
        return normalize([sum(w for w, term in prefs if term_matches(term, n)) for n in nodes])
