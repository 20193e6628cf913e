"""SelectorSpread: replicas of one controller should not share a node when they need not.

Five replicas of a Deployment on one node die together with it. So among the feasible nodes,
the fewer pods of the same controller (the owner reference marked `controller: true`: the
ReplicaSet, StatefulSet, Job, ...) a node already runs, the higher it scores:
score = 100 * (max - count) / max over the feasible nodes.

Kubernetes did this with the SelectorSpread plugin (matching the owner's selector), and today
with PodTopologySpread's default constraints (weight 2, the weight used here). Counting by
controller uid answers the same question without evaluating selectors in the hot loop; the
counts live on NodeInfo (`owners`) and change as pods come and go.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework import MAX_NODE_SCORE, NodeInfo, PodInfo, ScorePlugin


class SelectorSpread(ScorePlugin):
    name = "SelectorSpread"
    weight = 2

    def relevant(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> bool:
        return pod.owner_uid is not None

    def score(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
        uid = pod.owner_uid
        counts = [n.owners.get(uid, 0) if uid else 0 for n in nodes]
        top = max(counts, default=0)
        if top == 0:
            return [MAX_NODE_SCORE] * len(nodes)
        return [MAX_NODE_SCORE * (top - c) // top for c in counts]
