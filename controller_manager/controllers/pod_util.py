"""What the workload controllers need to know about a pod: active? ready? available? expendable?

- *active*: neither finished (`Succeeded`/`Failed`) nor being deleted. Only active pods count
  towards `replicas`; a terminating pod is already on its way out, so a replacement is started at
  once (that is why `kubectl delete pod` on an RC pod shows the new pod before the old one is gone).
- *ready*: the `Ready` condition is `True` (the kubelet sets it once containers run and probes pass).
- *available*: ready for at least `minReadySeconds`, counted from the Ready condition's
  `lastTransitionTime`. `minReadySeconds: 0` makes every ready pod available at once.

When there are too many pods, which go first? Kubernetes' ActivePods ranking, cheapest loss first:
  1. not yet scheduled before scheduled          (nothing is running there anyway)
  2. Pending before Unknown before Running
  3. not ready before ready
  4. on a node crowded with sibling replicas before one that is alone on its node
  5. ready for a shorter time before ready longer (a warm cache is worth keeping)
  6. more container restarts before fewer
  7. newer before older
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from api import timestamps

Obj = dict[str, Any]

_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def parse_time(ts: str | None) -> float:
    """RFC 3339 (`2024-05-01T10:00:00Z`, fractions allowed) → Unix seconds; 0 when missing."""
    return timestamps.parse_time(ts) or 0.0


def is_active(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not (pod.get("metadata") or {}).get("deletionTimestamp")


def ready_condition(pod: Obj) -> Obj | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond  # type: ignore[no-any-return]
    return None


def is_ready(pod: Obj) -> bool:
    cond = ready_condition(pod)
    return cond is not None and cond.get("status") == "True"


def is_available(pod: Obj, min_ready_seconds: int, now: float | None = None) -> bool:
    if not is_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = parse_time((ready_condition(pod) or {}).get("lastTransitionTime"))
    if not since:
        return False  # no transition time: we cannot know for how long it has been ready
    return since + min_ready_seconds <= (time.time() if now is None else now)


def _restarts(pod: Obj) -> int:
    return max(
        (c.get("restartCount") or 0 for c in (pod.get("status") or {}).get("containerStatuses") or []), default=0
    )


def deletion_order(pods: list[Obj], related: Iterable[Obj]) -> list[Obj]:
    """`pods` sorted so that the ones to delete first come first (the ranking above). `related` are
    all pods of the same owner, used to count how crowded each node is."""
    per_node = Counter((p.get("spec") or {}).get("nodeName") for p in related)

    def key(pod: Obj) -> tuple[Any, ...]:
        spec, status, meta = pod.get("spec") or {}, pod.get("status") or {}, pod.get("metadata") or {}
        node = spec.get("nodeName")
        ready = is_ready(pod)
        ready_since = parse_time((ready_condition(pod) or {}).get("lastTransitionTime")) if ready else 0.0
        return (
            1 if node else 0,
            _PHASE_RANK.get(status.get("phase") or "Pending", 0),
            1 if ready else 0,
            -(per_node[node] if node else 0),
            -ready_since,
            -_restarts(pod),
            -parse_time(meta.get("creationTimestamp")),
        )

    return sorted(pods, key=key)
