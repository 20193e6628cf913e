"""NodeAffinity's PreFilter: a pod that names its nodes (as every DaemonSet pod does) is searched for
among those nodes only, with the same outcome — and the same failure message — as a full search."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.algorithm import Algorithm
from scheduler.cache import SchedulerCache
from scheduler.fit_error import FitError
from scheduler.framework import PodInfo
from scheduler.plugins import default_filters, default_scores
from scheduler.plugins.node_affinity import prefilter_node_names


def named(*terms: list[str], labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A pod whose required terms each name nodes (`[]`: a term by label instead)."""
    node_terms: list[dict[str, Any]] = []
    for names in terms:
        if names:
            node_terms.append({"matchFields": [{"key": "metadata.name", "operator": "In", "values": names}]})
        else:
            node_terms.append({"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]})
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": node_terms}}}
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u", "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "x"}], "affinity": affinity}}  # fmt: skip


def cluster(n: int, taint_node: str | None = None) -> SchedulerCache:
    cache = SchedulerCache()
    for i in range(n):
        name = f"node-{i}"
        spec = {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]} if name == taint_node else {}
        cache.add_node({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "spec": spec,
                        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})  # fmt: skip
    return cache


def test_the_named_nodes_are_the_union_of_terms_and_a_term_by_label_turns_the_shortcut_off() -> None:
    assert prefilter_node_names(PodInfo(named(["node-1"], ["node-2", "node-3"]))) == {"node-1", "node-2", "node-3"}
    assert prefilter_node_names(PodInfo(named(["node-1"], []))) is None  # the second term admits by label
    pod = named(["node-1", "node-2"])
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchFields"].append({"key": "metadata.name", "operator": "In", "values": ["node-2", "node-9"]})  # fmt: skip
    assert prefilter_node_names(PodInfo(pod)) == {"node-2"}  # requirements inside a term are ANDed
    assert prefilter_node_names(PodInfo({"metadata": {}, "spec": {"containers": []}})) is None


def test_a_pod_naming_its_node_lands_there_without_moving_the_round_robin_start() -> None:
    cache = cluster(300)
    algorithm = Algorithm(default_filters(), default_scores(), seed=1)
    assert algorithm.schedule(PodInfo(named(["node-217"])), cache.node_list(), cache.nodes) == "node-217"
    assert algorithm.next_start_node_index == 0


def test_when_the_named_node_cannot_take_the_pod_the_message_counts_every_node() -> None:
    cache = cluster(5, taint_node="node-3")
    algorithm = Algorithm(default_filters(), default_scores(), seed=1)
    with pytest.raises(FitError) as err:
        algorithm.schedule(PodInfo(named(["node-3"])), cache.node_list(), cache.nodes)
    assert str(err.value).startswith(
        "0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, "
        "4 node(s) didn't match Pod's node affinity/selector."
    )
    with pytest.raises(FitError):  # a name no node has: the full search finds nothing either
        algorithm.schedule(PodInfo(named(["node-99"])), cache.node_list(), cache.nodes)
