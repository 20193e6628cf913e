"""Node health: has this node's kubelet been heard from lately?

A kubelet proves it is alive in two ways (seed 003): it renews its Lease `kube-node-lease/<node>`
(cheap, every few seconds) and it posts `status.conditions` with a fresh `lastHeartbeatTime` on the
Ready condition (heavier, less often). Either is enough.

The tracker does not trust the timestamps' values — the kubelet's clock may be wrong — only
*whether they changed*. Whenever the Lease's renewTime or the Ready heartbeat differs from what we
saw last, the node's probe time becomes *our* now. A node is stale when our now is more than
--node-monitor-grace-period past its probe time (or --node-startup-grace-period, counted from the
node's creation, while it has never posted a Ready condition). That is how Kubernetes keeps one
skewed clock from taking a healthy node down.

A controller that restarts forgets everything and so gives every node a full grace period again —
the safe direction to err in.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from api.timestamps import parse_time

# Besides Ready, the kubelet reports these; when it goes silent they all become Unknown.
REMAINING_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")
UNKNOWN_REASON, UNKNOWN_MESSAGE = "NodeStatusUnknown", "Kubelet stopped posting node status."
NEVER_REASON, NEVER_MESSAGE = "NodeStatusNeverUpdated", "Kubelet never posted node status."


def ready_condition(node: dict[str, Any]) -> dict[str, Any] | None:
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return dict(cond)
    return None


def ready_status(node: dict[str, Any]) -> str | None:
    cond = ready_condition(node)
    return cond.get("status") if cond else None


@dataclass
class _Seen:
    heartbeat: str | None  # Ready condition's lastHeartbeatTime as last seen
    renew: str | None  # the Lease's renewTime as last seen
    probe: float  # our clock when either last changed


class NodeHealthTracker:
    def __init__(self, grace: float, startup_grace: float) -> None:
        self.grace = grace
        self.startup_grace = startup_grace
        self._seen: dict[str, _Seen] = {}

    def forget(self, name: str) -> None:
        self._seen.pop(name, None)

    def is_stale(self, node: dict[str, Any], lease: dict[str, Any] | None, now: float) -> bool:
        name = node["metadata"]["name"]
        cond = ready_condition(node)
        heartbeat = cond.get("lastHeartbeatTime") if cond else None
        renew = (lease or {}).get("spec", {}).get("renewTime") if lease else None
        seen = self._seen.get(name)
        if seen is None:
            # First sight. A node that has never reported counts from its creation; one that has
            # reported gets a full grace period from now.
            probe = now
            if cond is None:
                probe = min(now, parse_time(node["metadata"].get("creationTimestamp")) or now)
            seen = self._seen[name] = _Seen(heartbeat, renew, probe)
        elif heartbeat != seen.heartbeat or renew != seen.renew:
            seen.heartbeat, seen.renew, seen.probe = heartbeat, renew, now
        grace = self.grace if cond is not None else self.startup_grace
        return now > seen.probe + grace


def mark_unknown(node: dict[str, Any], now: str) -> dict[str, Any] | None:
    """A copy of `node` with every condition Unknown (what a silent kubelet leaves us knowing), or
    None if that is already so. The heartbeat times stay as the kubelet last wrote them."""
    new = copy.deepcopy(node)
    status = new.setdefault("status", {})
    conditions: list[dict[str, Any]] = status.setdefault("conditions", []) or []
    status["conditions"] = conditions
    changed = False
    present = {c.get("type") for c in conditions}
    for ctype in ("Ready", *REMAINING_CONDITIONS):
        if ctype not in present:
            conditions.append(
                {
                    "type": ctype,
                    "status": "Unknown",
                    "reason": NEVER_REASON,
                    "message": NEVER_MESSAGE,
                    "lastHeartbeatTime": node["metadata"].get("creationTimestamp"),
                    "lastTransitionTime": now,
                }
            )
            changed = True
    for cond in conditions:
        if cond.get("status") != "Unknown":
            cond.update(status="Unknown", reason=UNKNOWN_REASON, message=UNKNOWN_MESSAGE)
            cond["lastTransitionTime"] = now
            changed = True
    return new if changed else None
