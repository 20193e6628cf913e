"""NodeUnschedulable: a cordoned node (`spec.unschedulable: true`, what `kubectl cordon` sets)
takes no new pods - unless the pod tolerates the `node.kubernetes.io/unschedulable:NoSchedule`
taint, which is how DaemonSet pods still land on cordoned nodes."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework import Diagnosis, FilterPlugin, NodeInfo, PodInfo
from scheduler.plugins.taint_toleration import tolerates

UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")
REASON = "node(s) were unschedulable"


class NodeUnschedulable(FilterPlugin):
    name = "NodeUnschedulable"

    def filter(self, pod: PodInfo, node: NodeInfo) -> Sequence[str] | None:
        if not node.unschedulable or tolerates(pod.tolerations, UNSCHEDULABLE_TAINT):
            return None
        return (REASON,)

    def filter_many(self, pod: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis) -> list[NodeInfo]:
        if not any(n.unschedulable for n in nodes):
            return nodes
        return super().filter_many(pod, nodes, diagnosis)
