"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory stay equally used.

A node at 90% cpu and 10% memory is a poor home for the next pod: its memory is stranded. With
f = requested / allocatable per resource (capped at 1) after placing the pod, the score is
(1 - standard deviation of the fractions) * 100; for two resources that deviation is
|f_cpu - f_memory| / 2. Weight 1. Actual requests are used here (not the non-zero defaults).
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework import MAX_NODE_SCORE, NodeInfo, PodInfo, ScorePlugin


class NodeResourcesBalancedAllocation(ScorePlugin):
    name = "NodeResourcesBalancedAllocation"
    weight = 1

    def score(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
        cpu, mem = pod.milli_cpu, pod.memory
        out: list[int] = []
        for n in nodes:
            fc = (n.req_cpu + cpu) / n.alloc_cpu if n.alloc_cpu > 0 else 1.0
            fm = (n.req_memory + mem) / n.alloc_memory if n.alloc_memory > 0 else 1.0
            fc = 1.0 if fc > 1.0 else fc
            fm = 1.0 if fm > 1.0 else fm
            d = fc - fm if fc > fm else fm - fc
            out.append(int((1.0 - d / 2.0) * MAX_NODE_SCORE))
        return out
