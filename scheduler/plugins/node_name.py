"""NodeName: a pod that names its node in `spec.nodeName` may go only there.

A pod created with `spec.nodeName` is already bound and never reaches the scheduler, so in
practice this filter only matters for pods whose nodeName is set while they wait in the queue;
it is here because Kubernetes' default profile has it and students look for it."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework import FilterPlugin, NodeInfo, PodInfo

REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin):
    name = "NodeName"

    def relevant(self, pod: PodInfo) -> bool:
        return bool(pod.node_name)

    def filter(self, pod: PodInfo, node: NodeInfo) -> Sequence[str] | None:
        return None if node.name == pod.node_name else (REASON,)
