"""Taints and tolerations: the vocabulary the node lifecycle controller speaks to the rest of the cluster.

A taint on a node repels pods; a toleration on a pod lets it stay anyway. The controller never
deletes pods because "the node is down" directly — it *describes* the node with taints, and the
effects follow from the taints:

    Ready condition   taints the controller keeps on the node
    ---------------   --------------------------------------------------------------------------
    True              none of the four below
    False             node.kubernetes.io/not-ready:NoSchedule    node.kubernetes.io/not-ready:NoExecute
    Unknown           node.kubernetes.io/unreachable:NoSchedule  node.kubernetes.io/unreachable:NoExecute

NoSchedule keeps the scheduler away (Kubernetes' TaintNodesByCondition); NoExecute evicts the pods
already there, unless they tolerate it — for `tolerationSeconds`, or forever. The API server gives
every pod a 300 s toleration for both NoExecute taints (DefaultTolerationSeconds admission), which
is why a pod on a dead node lingers for five minutes before it is deleted.
"""

from __future__ import annotations

from typing import Any

from api import nodeaffinity
from api.timestamps import parse_time

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"
# The taints this controller owns; any other taint on a node is someone else's and left alone.
CONTROLLER_TAINTS = {(k, e) for k in (NOT_READY, UNREACHABLE) for e in (NO_SCHEDULE, NO_EXECUTE)}

Taint = dict[str, Any]
Toleration = dict[str, Any]


def desired_taints(ready_status: str | None, *, no_execute: bool) -> set[tuple[str, str]]:
    """The controller's taints for a node whose Ready condition has `ready_status` (None: never reported).
    `no_execute=False` in master disruption mode, when nobody is evicted."""
    if ready_status == "False":
        key = NOT_READY
    elif ready_status == "Unknown":
        key = UNREACHABLE
    else:
        return set()
    return {(key, NO_SCHEDULE), (key, NO_EXECUTE)} if no_execute else {(key, NO_SCHEDULE)}


def reconcile_taints(current: list[Taint], wanted: set[tuple[str, str]], now: str) -> list[Taint] | None:
    """The node's new `spec.taints`, or None when nothing needs to change. Taints that stay keep
    their `timeAdded` (eviction deadlines count from it); new NoExecute taints get `now`."""
    have = {(t.get("key"), t.get("effect")) for t in current}
    mine = have & CONTROLLER_TAINTS
    if mine == wanted:
        return None
    kept = [
        t
        for t in current
        if (t.get("key"), t.get("effect")) not in CONTROLLER_TAINTS
        or (t.get("key"), t.get("effect")) in wanted
    ]
    for key, effect in sorted(wanted - have):
        taint: Taint = {"key": key, "effect": effect}
        if effect == NO_EXECUTE:
            taint["timeAdded"] = now
        kept.append(taint)
    return kept


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Does one toleration match one taint? (Kubernetes' ToleratesTaint; see api/nodeaffinity.py.)"""
    return nodeaffinity.tolerated([toleration], taint)


def eviction_time(taints: list[Taint], tolerations: list[Toleration], *, first_seen: float) -> float | None:
    """When a pod with `tolerations` must leave a node with these NoExecute `taints`: a time in
    seconds since the epoch (now or in the past means "at once"), or None for "may stay forever".

    A taint no toleration matches evicts at once. Otherwise every taint is covered by its first
    matching toleration; a toleration without `tolerationSeconds` tolerates forever, one with it
    for that long counted from the taint's `timeAdded` (or, if the taint has none, from when we
    first saw it). The earliest deadline wins.
    """
    deadline: float | None = None
    for taint in taints:
        match = next((t for t in tolerations if tolerates(t, taint)), None)
        if match is None:
            return 0.0
        seconds = match.get("tolerationSeconds")
        if seconds is None:
            continue
        start = parse_time(taint.get("timeAdded")) or first_seen
        due = start + max(float(seconds), 0.0)
        deadline = due if deadline is None else min(deadline, due)
    return deadline


def no_execute_taints(node: dict[str, Any] | None) -> list[Taint]:
    if node is None:
        return []
    return [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") == NO_EXECUTE]
