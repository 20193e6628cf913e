"""FitError: why no node fits, in the exact words `kubectl describe pod` shows under FailedScheduling.

Each rejected node is counted under the reason(s) of the first filter that rejected it; the
message lists "<count> <reason>" strings sorted as strings, then what preemption would say.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_PREEMPTION_VICTIMS = "No preemption victims found for incoming pod"


def _histogram(counts: Mapping[str, int]) -> str:
    # Kubernetes formats "<count> <reason>" and sorts those strings.
    return ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))


class FitError(Exception):
    """No node fits: the message `kubectl describe pod` shows under FailedScheduling, e.g.

        0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: },
        2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for
        scheduling, 2 No preemption victims found for incoming pod.

    The second sentence is what Kubernetes' DefaultPreemption says when it finds nothing to evict.
    We never preempt, so for us it is always that: nodes that failed for a reason eviction could
    not fix (labels, taints) are "not helpful", the others have no victims."""

    def __init__(self, num_nodes: int, reasons: Counter[str], unresolvable: int) -> None:
        self.num_nodes = num_nodes
        self.reasons = reasons
        self.unresolvable = unresolvable
        super().__init__(self.message())

    def message(self) -> str:
        n = self.num_nodes
        msg = f"0/{n} nodes are available: {_histogram(self.reasons)}."
        post: Counter[str] = Counter()
        if self.unresolvable:
            post[PREEMPTION_NOT_HELPFUL] = self.unresolvable
        if n - self.unresolvable:
            post[NO_PREEMPTION_VICTIMS] = n - self.unresolvable
        return f"{msg} preemption: 0/{n} nodes are available: {_histogram(post)}."
