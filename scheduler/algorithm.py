"""One scheduling decision: filter the nodes, score the survivors, pick the best.

    nodes ──filter──▶ feasible ──score (weighted sum)──▶ highest total ──▶ chosen node

Two tricks from kube-scheduler keep this affordable on a big cluster:

1. Stop filtering early. Once enough feasible nodes are found, scoring more would barely change
   the choice. "Enough" is --percentage-of-nodes-to-score; its default (0) is adaptive:
   50% minus 1% per 125 nodes, never below 5%, and never fewer than 100 nodes (clusters under 100
   nodes are always searched completely). 1,000 nodes -> 42% -> 420; 5,000 nodes -> 10% -> 500.
2. Start where the last search stopped. Each search begins at the node after the last one the
   previous search examined, so early stopping does not keep favouring the first nodes.

3. Look only where the pod can go. When the pod's required node affinity names its nodes (a
   DaemonSet's pods each name one), only those are filtered (NodeAffinity's PreFilter).

Ties between equally good nodes are broken at random, each tied node equally likely (as Kubernetes does);
`seed` makes that reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from scheduler.fit_error import NO_NODES_AVAILABLE, FitError
from scheduler.framework import Diagnosis, FilterPlugin, NodeInfo, PodInfo, ScorePlugin
from scheduler.plugins.node_affinity import prefilter_node_names

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
BASE_PERCENTAGE_OF_NODES_TO_SCORE = 50


class NoNodesAvailable(Exception):
    def __init__(self) -> None:
        super().__init__(NO_NODES_AVAILABLE)


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (kube-scheduler's rule)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return num_all_nodes
    adaptive = percentage
    if adaptive <= 0:
        adaptive = BASE_PERCENTAGE_OF_NODES_TO_SCORE - num_all_nodes // 125
        if adaptive < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            adaptive = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * adaptive // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


class Algorithm:
    def __init__(
        self,
        filters: Sequence[FilterPlugin],
        scores: Sequence[ScorePlugin],
        *,
        percentage_of_nodes_to_score: int = 0,
        seed: int | None = None,
    ) -> None:
        self.filters = list(filters)
        self.scores = list(scores)
        self.percentage = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        self.random = random.Random(seed)

    def schedule(self, pod: PodInfo, nodes: Sequence[NodeInfo], by_name: Mapping[str, NodeInfo] | None = None) -> str:
        """The name of the node for `pod`, or raise FitError / NoNodesAvailable. `by_name` (the cache's
        index) lets the PreFilter pick the nodes a pod names without walking the list."""
        names = prefilter_node_names(pod) if by_name is not None else None
        if names is not None and by_name is not None:
            named = [info for name in sorted(names) if (info := by_name.get(name)) is not None and info.node]
            try:
                return self._schedule_among(pod, named, rotate=False)
            except (FitError, NoNodesAvailable):
                pass  # the full search below says why, counting every node as the message always has
        return self._schedule_among(pod, nodes, rotate=True)

    def _schedule_among(self, pod: PodInfo, nodes: Sequence[NodeInfo], *, rotate: bool) -> str:
        if not nodes:
            raise NoNodesAvailable()
        feasible = self.find_nodes_that_fit(pod, nodes, rotate=rotate)
        if len(feasible) == 1:
            return feasible[0].name  # nothing to compare: skip scoring, as Kubernetes does
        return self.select_host(feasible, self.prioritize(pod, feasible))

    def find_nodes_that_fit(self, pod: PodInfo, nodes: Sequence[NodeInfo], *, rotate: bool = True) -> list[NodeInfo]:
        filters = [f for f in self.filters if f.relevant(pod)]  # PreFilter: leave out what cannot matter
        n = len(nodes)
        want = num_feasible_nodes_to_find(self.percentage, n)
        start = self.next_start_node_index % n if rotate else 0
        ordered = list(nodes[start:]) + list(nodes[:start])
        feasible: list[NodeInfo] = []
        diagnosis = Diagnosis()
        processed = 0
        # Filter in batches exactly as large as the number of feasible nodes still wanted, so we
        # never find more than `want` and never examine more nodes than needed. Within a batch
        # each plugin runs over the survivors of the previous one, in order, so a rejected node
        # is blamed on the first plugin that rejects it - the same outcome as node by node.
        while processed < n and len(feasible) < want:
            batch = ordered[processed : processed + want - len(feasible)]
            processed += len(batch)
            for f in filters:
                batch = f.filter_many(pod, batch, diagnosis)
                if not batch:
                    break
            feasible.extend(batch)
        if rotate:  # a search among the pod's own named nodes says nothing about where the next should start
            self.next_start_node_index = (start + processed) % n
        if not feasible:
            raise FitError(n, diagnosis.reasons, diagnosis.unresolvable)
        return feasible

    def prioritize(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
        totals = [0] * len(nodes)
        for plugin in self.scores:
            if not plugin.relevant(pod, nodes):
                continue
            w = plugin.weight
            totals = [t + w * s for t, s in zip(totals, plugin.score(pod, nodes), strict=True)]
        return totals

    def select_host(self, nodes: Sequence[NodeInfo], totals: Sequence[int]) -> str:
        best = max(totals)
        tied = [i for i, t in enumerate(totals) if t == best]
        return nodes[tied[0] if len(tied) == 1 else self.random.choice(tied)].name
