"""The plugins, one concept per file, with Kubernetes' names.

Filters run in this order for each node, and the first that says no decides the node's reason
(as in Kubernetes, a node is reported once, by the first plugin that rejects it). Scores are
weighted as in Kubernetes' default profile.
"""

from scheduler.framework import FilterPlugin, ScorePlugin
from scheduler.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from scheduler.plugins.node_affinity import NodeAffinity, NodeAffinityScore
from scheduler.plugins.node_name import NodeName
from scheduler.plugins.node_ports import NodePorts
from scheduler.plugins.node_resources_fit import LeastAllocated, NodeResourcesFit
from scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler.plugins.selector_spread import SelectorSpread
from scheduler.plugins.taint_toleration import TaintToleration, TaintTolerationScore


def default_filters() -> list[FilterPlugin]:
    return [NodeUnschedulable(), NodeName(), TaintToleration(), NodeAffinity(), NodePorts(), NodeResourcesFit()]


def default_scores() -> list[ScorePlugin]:
    return [
        TaintTolerationScore(),  # weight 3
        NodeAffinityScore(),  # weight 2
        SelectorSpread(),  # weight 2
        LeastAllocated(),  # weight 1
        NodeResourcesBalancedAllocation(),  # weight 1
    ]


__all__ = ["default_filters", "default_scores"]
