"""NodeResourcesFit: does the node have room for the pod's requests? And LeastAllocated scoring.

Filter. Room means: for cpu, memory and every other requested resource,

    (requests of the pods already on the node, bound or assumed) + (this pod's requests) <= allocatable

and one more pod fits under `allocatable.pods`. Limits play no part: the scheduler reserves
requests. Each shortage is one reason - `Insufficient cpu`, `Insufficient memory`,
`Too many pods` - so a node short of both cpu and memory counts under both in the message.

Score (LeastAllocated, weight 1): the emptier the node after placing the pod, the better -
per resource (allocatable - requested) * 100 / allocatable, averaged over cpu and memory. It
uses "non-zero" requests (a container that requests nothing counts as 100m / 200Mi) so that pods
without requests still spread instead of piling onto one node.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework import MAX_NODE_SCORE, Diagnosis, FilterPlugin, NodeInfo, PodInfo, ScorePlugin


class NodeResourcesFit(FilterPlugin):
    name = "NodeResourcesFit"
    unresolvable = False  # freeing pods from the node could make room

    def filter(self, pod: PodInfo, node: NodeInfo) -> Sequence[str] | None:
        # The hot path: integer comparisons only, and no list built unless something is short.
        short: list[str] | None = None
        if len(node.pods) + 1 > node.alloc_pods:
            short = ["Too many pods"]
        if pod.milli_cpu and node.req_cpu + pod.milli_cpu > node.alloc_cpu:
            short = (short or []) + ["Insufficient cpu"]
        if pod.memory and node.req_memory + pod.memory > node.alloc_memory:
            short = (short or []) + ["Insufficient memory"]
        if pod.scalar:
            for name, want in pod.scalar.items():
                if want and node.req_scalar[name] + want > node.alloc_scalar.get(name, 0):
                    short = (short or []) + [f"Insufficient {name}"]
        return short

    def filter_many(self, pod: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis) -> list[NodeInfo]:
        if not pod.scalar:
            cpu, mem = pod.milli_cpu, pod.memory
            fits = [
                n
                for n in nodes
                if len(n.pods) < n.alloc_pods
                and n.req_cpu + cpu <= n.alloc_cpu
                and n.req_memory + mem <= n.alloc_memory
            ]
            if len(fits) == len(nodes):
                return fits
        return super().filter_many(pod, nodes, diagnosis)


def least_allocated(requested: int, allocatable: int) -> int:
    if allocatable <= 0 or requested > allocatable:
        return 0
    return (allocatable - requested) * MAX_NODE_SCORE // allocatable


class LeastAllocated(ScorePlugin):
    name = "NodeResourcesFit"
    weight = 1

    def score(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
        cpu, mem = pod.non_zero_cpu, pod.non_zero_memory
        out: list[int] = []
        for n in nodes:  # least_allocated() inlined: this runs for hundreds of nodes per pod
            ac, am = n.alloc_cpu, n.alloc_memory
            rc, rm = n.nz_cpu + cpu, n.nz_memory + mem
            sc = (ac - rc) * MAX_NODE_SCORE // ac if 0 < ac and rc <= ac else 0
            sm = (am - rm) * MAX_NODE_SCORE // am if 0 < am and rm <= am else 0
            out.append((sc + sm) // 2)
        return out
