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

from api import nodeaffinity
from scheduler.framework import FilterPlugin, NodeInfo, PodInfo, ScorePlugin, normalize

REASON = "node(s) didn't match Pod's node affinity/selector"


def term_matches(term: Mapping[str, Any], node: NodeInfo) -> bool:
    return nodeaffinity.term_matches(term, node.labels, node.name)


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
