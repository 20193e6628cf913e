"""NodeAffinity: `spec.nodeSelector` and `affinity.nodeAffinity`, the pod choosing nodes by label.

Filter (both must hold; either failing gives "node(s) didn't match Pod's node affinity/selector"):
- nodeSelector: every key=value present in the node's labels;
- requiredDuringSchedulingIgnoredDuringExecution: at least one nodeSelectorTerm matches (terms
  are ORed); inside a term, every matchExpression and matchField holds (ANDed). Operators In,
  NotIn, Exists, DoesNotExist, Gt, Lt; matchFields knows `metadata.name`. A term with nothing
  in it matches nothing.
Score (weight 2): the sum of the weights of the preferred terms the node matches, scaled to 0..100.

PreFilter (`prefilter_node_names`): when every required term names its nodes with
`matchFields: metadata.name In [...]` — what the DaemonSet controller writes into each of its pods —
only those nodes can pass, so the search looks at them alone instead of filtering the whole cluster
(Kubernetes' NodeAffinity PreFilter answers the same node-name set). On 1,000 nodes this turns a
DaemonSet's 1,000 × 1,000 filter checks into 1,000.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from api import nodeaffinity
from scheduler.framework import FilterPlugin, NodeInfo, PodInfo, ScorePlugin, normalize

REASON = "node(s) didn't match Pod's node affinity/selector"


def term_matches(term: Mapping[str, Any], node: NodeInfo) -> bool:
    return nodeaffinity.term_matches(term, node.labels, node.name)


def prefilter_node_names(pod: PodInfo) -> set[str] | None:
    """The only node names the required terms allow, or None when they allow nodes by anything else.
    Terms are ORed (union); inside a term the metadata.name In requirements are ANDed (intersection)."""
    if not pod.required_terms:
        return None
    names: set[str] = set()
    for term in pod.required_terms:
        allowed: set[str] | None = None
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In":
                values = set(field.get("values") or [])
                allowed = values if allowed is None else allowed & values
        if allowed is None:
            return None  # this term admits nodes by label or other fields: no shortcut
        names |= allowed
    return names


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
