"""TaintToleration: a node's taints repel pods that do not tolerate them.

    NoSchedule / NoExecute   a pod must tolerate every such taint, or the node is filtered out
                             ("node(s) had untolerated taint {key: value}")
    PreferNoSchedule         only a penalty: fewer untolerated ones score higher (weight 3)

Node readiness works through this plugin too: the node lifecycle controller taints a node that
is not Ready with `node.kubernetes.io/not-ready` (or `unreachable`), and the scheduler simply
respects taints - it never reads the Ready condition itself, exactly as in Kubernetes.

A toleration matches a taint when its effect is empty or equal, its key is empty (with Exists:
"tolerate everything") or equal, and its operator is Exists or its value is equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from api.nodeaffinity import toleration_matches
from scheduler.framework import Diagnosis, FilterPlugin, NodeInfo, PodInfo, ScorePlugin, Taint, normalize


def tolerates(tolerations: Sequence[dict[str, Any]], taint: Taint) -> bool:
    return any(toleration_matches(t, *taint) for t in tolerations)


class TaintToleration(FilterPlugin):
    name = "TaintToleration"

    def filter(self, pod: PodInfo, node: NodeInfo) -> Sequence[str] | None:
        for taint in node.taints:  # usually empty: the common case costs one attribute read
            if not tolerates(pod.tolerations, taint):
                return (f"node(s) had untolerated taint {{{taint[0]}: {taint[1]}}}",)
        return None

    def filter_many(self, pod: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis) -> list[NodeInfo]:
        if not any(n.taints for n in nodes):
            return nodes
        return super().filter_many(pod, nodes, diagnosis)


class TaintTolerationScore(ScorePlugin):
    name = "TaintToleration"
    weight = 3

    def relevant(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> bool:
        return any(n.prefer_taints for n in nodes)

    def score(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
        prefer_tolerations = [t for t in pod.tolerations if t.get("effect") in (None, "", "PreferNoSchedule")]
        counts = [sum(1 for t in n.prefer_taints if not tolerates(prefer_tolerations, t)) for n in nodes]
        return normalize(counts, reverse=True)
