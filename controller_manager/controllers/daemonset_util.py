"""What a DaemonSet's pod looks like on a given node, and whether that node should run one — pure.

Since Kubernetes 1.12 the DaemonSet controller does not place pods itself: it creates one pod per
eligible node with *node affinity* for exactly that node (`matchFields: metadata.name In [node]`)
and lets the default scheduler bind it, so resources, ports and taints are checked in one place.

Which nodes are eligible (Kubernetes' `nodeShouldRunDaemonPod`):

    the node matches the template's nodeSelector and required node affinity   else: not here
    every NoSchedule/NoExecute taint is tolerated                                 else: not *new* here
    every NoExecute taint is tolerated                                            else: not here at all

with the tolerations every daemon pod gets on top of its own (a daemon must keep running on a node
that is not ready, unreachable, under pressure or cordoned: that is what node agents are for):

    node.kubernetes.io/not-ready:NoExecute        node.kubernetes.io/unreachable:NoExecute
    node.kubernetes.io/disk-pressure:NoSchedule   node.kubernetes.io/memory-pressure:NoSchedule
    node.kubernetes.io/pid-pressure:NoSchedule    node.kubernetes.io/unschedulable:NoSchedule
    node.kubernetes.io/network-unavailable:NoSchedule   (hostNetwork pods only)
"""

from __future__ import annotations

import copy
from typing import Any

from api import nodeaffinity

Obj = dict[str, Any]

REVISION_HASH = "controller-revision-hash"
TEMPLATE_GENERATION = "pod-template-generation"

_TOLERATIONS = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
]
_HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def with_daemon_tolerations(spec: Obj) -> Obj:
    """A copy of a pod spec with the daemon tolerations added (an existing one for the same
    key and effect is kept as the user wrote it)."""
    out = copy.deepcopy(spec)
    tolerations: list[Obj] = list(out.get("tolerations") or [])
    wanted = _TOLERATIONS + ([_HOST_NETWORK_TOLERATION] if out.get("hostNetwork") else [])
    have = {(t.get("key"), t.get("effect")) for t in tolerations}
    for key, effect in wanted:
        if (key, effect) not in have:
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    out["tolerations"] = tolerations
    return out


def for_node(spec: Obj, node_name: str) -> Obj:
    """The daemon pod spec for one node: daemon tolerations, and required node affinity for exactly
    that node (replacing the template's terms, which the node already satisfies)."""
    out = with_daemon_tolerations(spec)
    affinity = out.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    return out


def target_node(pod: Obj) -> str | None:
    """The node a daemon pod is for: where it runs, or where its affinity sends it."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    for term in nodeaffinity.required_terms(spec) or []:
        for req in term.get("matchFields") or []:
            if req.get("key") == "metadata.name" and req.get("operator") == "In" and len(req.get("values") or []) == 1:
                return str(req["values"][0])
    return None


def node_should_run(node: Obj, daemon_spec: Obj) -> tuple[bool, bool]:
    """(should run a new daemon pod here, may keep running an existing one here). `daemon_spec` is
    the template's spec with the daemon tolerations added (`with_daemon_tolerations`), made once per
    sync rather than once per node: on 1,000 nodes the copies were most of a sync's time."""
    md = node.get("metadata") or {}
    spec = daemon_spec
    if not nodeaffinity.node_matches(spec, md.get("labels") or {}, md.get("name") or ""):
        return False, False
    tolerations = spec.get("tolerations") or []
    should_run = keep = True
    for taint in (node.get("spec") or {}).get("taints") or []:
        effect = taint.get("effect")
        if effect not in ("NoSchedule", "NoExecute") or nodeaffinity.tolerated(tolerations, taint):
            continue
        should_run = False
        if effect == "NoExecute":
            keep = False
    return should_run, keep


def rolling_budget(ds: Obj, desired: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) of a RollingUpdate DaemonSet as numbers of pods (percentages of
    `desired`: surge rounds up, unavailable rounds up, at least one may be unavailable unless
    surge is used, as Kubernetes resolves them)."""
    ru = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}

    def resolve(value: Any, default: int) -> int:
        if value is None:
            return default
        if isinstance(value, str) and value.endswith("%"):
            return -(-int(value[:-1]) * desired // 100)  # round up
        return int(value)

    surge = resolve(ru.get("maxSurge"), 0)
    unavailable = resolve(ru.get("maxUnavailable"), 1)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable
