"""The small facts a Deployment is built from: hashes, annotations, surge arithmetic, conditions.

Pod-template hash. Each version of a Deployment's pod template gets its own ReplicaSet named
`<deployment>-<hash>`, and the hash is also a label (`pod-template-hash`) on that ReplicaSet, in
its selector and on its pods, so ReplicaSets of one Deployment never select each other's pods.
The hash is FNV-1a (32 bit) over a canonical rendering of the template (plus the collision count,
bumped if a name is ever taken by a ReplicaSet with another template), written as its decimal
digits mapped onto the consonant-and-digit alphabet Kubernetes uses for safe names: `bb7894d65`.
The number differs from the one Kubernetes computes (it hashes Go's in-memory dump of the struct)
but has the same form and the same property: same template, same name, across restarts.

Which ReplicaSet is "new"? Not the one with the right hash, but the oldest one whose template
equals the Deployment's template once the hash label is ignored. That is what makes a rollback
cheap: `kubectl rollout undo` copies an old ReplicaSet's template into the Deployment, and the
controller then finds that old ReplicaSet again and scales it up instead of creating one.

Annotations (on ReplicaSets, and the revision on the Deployment too):
    deployment.kubernetes.io/revision           1, 2, 3 … the newest template has the highest
    deployment.kubernetes.io/revision-history   revisions this ReplicaSet had before (rollbacks)
    deployment.kubernetes.io/desired-replicas   the Deployment's replicas when last scaled
    deployment.kubernetes.io/max-replicas       replicas + maxSurge then (proportional scaling)

maxSurge and maxUnavailable are ints or percentages of `replicas`. A surge percentage rounds up,
an unavailable percentage rounds down, and if both end up 0 unavailability becomes 1, or a
rollout could never move (Kubernetes' ResolveFenceposts).
"""

from __future__ import annotations

import copy
import json
import math
import struct
from typing import Any

from api.timestamps import now_rfc3339
from controller_manager.controllers.pod_util import parse_time

Obj = dict[str, Any]

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
POD_TEMPLATE_HASH = "pod-template-hash"
MAX_REVISION_HISTORY_CHARS = 2000
# Deployment annotations that are not copied onto its ReplicaSets.
SKIP_ANNOTATIONS = {
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
}

# Condition types and reasons, exactly as Kubernetes writes them.
AVAILABLE, PROGRESSING, REPLICA_FAILURE = "Available", "Progressing", "ReplicaFailure"
MIN_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MIN_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
FAILED_RS_CREATE = "ReplicaSetCreateError"
PAUSED, RESUMED = "DeploymentPaused", "DeploymentResumed"

_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


# ---------------------------------------------------------------- hashing and templates


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(s: str) -> str:
    """Kubernetes' rand.SafeEncodeString: each character onto a vowel-free alphabet."""
    return "".join(_SAFE_ALPHABET[ord(c) % len(_SAFE_ALPHABET)] for c in s)


def _canonical(value: Any) -> Any:
    """Drop nulls and creationTimestamp so equal templates look equal however they were written."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items() if v is not None and k != "creationTimestamp"}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def compute_hash(template: Obj, collision_count: int | None) -> str:
    data = json.dumps(_canonical(template), sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += struct.pack("<I", collision_count & 0xFFFFFFFF)
    return safe_encode(str(_fnv32a(data)))


def _without_hash(template: Obj | None) -> Any:
    t = copy.deepcopy(template or {})
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
        if not labels:
            t["metadata"].pop("labels")
    if "metadata" in t and not t["metadata"]:
        t.pop("metadata")
    return _canonical(t)


def equal_ignore_hash(a: Obj | None, b: Obj | None) -> bool:
    return bool(_without_hash(a) == _without_hash(b))


# ---------------------------------------------------------------- replica sets of a deployment


def replicas(obj: Obj) -> int:
    return int((obj.get("spec") or {}).get("replicas", 1) or 0)


def status_of(obj: Obj, field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


def annotations_of(obj: Obj) -> dict[str, str]:
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta.get("annotations"), dict):
        meta["annotations"] = {}
    return meta["annotations"]  # type: ignore[no-any-return]


def revision(rs: Obj) -> int:
    try:
        return int(((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def max_revision(rss: list[Obj]) -> int:
    return max((revision(rs) for rs in rss), default=0)


def by_creation(rs: Obj) -> tuple[float, str]:
    meta = rs.get("metadata") or {}
    return (parse_time(meta.get("creationTimestamp")), meta.get("name") or "")


def find_new_replica_set(d: Obj, rss: list[Obj]) -> Obj | None:
    """The oldest ReplicaSet whose template is the Deployment's template (hash label ignored)."""
    template = (d.get("spec") or {}).get("template")
    for rs in sorted(rss, key=by_creation):
        if equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            return rs
    return None


def active(rss: list[Obj | None]) -> list[Obj]:
    """ReplicaSets that should have pods (spec.replicas > 0)."""
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


def total_replicas(rss: list[Obj | None]) -> int:
    return sum(replicas(rs) for rs in rss if rs is not None)


def total_status(rss: list[Obj | None], field: str) -> int:
    return sum(status_of(rs, field) for rs in rss if rs is not None)


# ---------------------------------------------------------------- maxSurge / maxUnavailable


def scaled_value(value: int | str | None, total: int, round_up: bool) -> int:
    """An IntOrString against `total`: 2 → 2; "25%" of 10 → 3 rounded up, 2 rounded down."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if not text.endswith("%"):
        return int(text)
    fraction = int(text[:-1]) * total / 100
    return math.ceil(fraction) if round_up else math.floor(fraction)


def resolve_fenceposts(d: Obj) -> tuple[int, int]:
    spec = d.get("spec") or {}
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas(d)
    surge = scaled_value(rolling.get("maxSurge", "25%"), desired, True)
    unavailable = scaled_value(rolling.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_rolling(d: Obj) -> bool:
    return ((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"


def max_surge(d: Obj) -> int:
    return resolve_fenceposts(d)[0] if is_rolling(d) else 0


def max_unavailable(d: Obj) -> int:
    if not is_rolling(d) or replicas(d) == 0:
        return 0
    return min(resolve_fenceposts(d)[1], replicas(d))


def new_rs_new_replicas(d: Obj, all_rss: list[Obj | None], new_rs: Obj) -> int:
    """How big the new ReplicaSet may be right now."""
    if not is_rolling(d):
        return replicas(d)
    max_total = replicas(d) + max_surge(d)
    # Count what each ReplicaSet may still have, not only what it is asked for: an old ReplicaSet
    # just scaled down may not have deleted its extra pods yet (its status.replicas still counts
    # them). Kubernetes sums spec.replicas only, so for a moment pods can exceed replicas+maxSurge;
    # counting the larger of the two keeps the bound true for the pods themselves.
    current = sum(max(replicas(rs), status_of(rs, "replicas")) for rs in all_rss if rs is not None)
    if current >= max_total:
        return replicas(new_rs)  # at the surge limit: wait for old pods to go
    return replicas(new_rs) + min(max_total - current, replicas(d) - replicas(new_rs))


# ---------------------------------------------------------------- annotations


def set_replicas_annotations(rs: Obj, desired: int, max_replicas: int) -> bool:
    ann = annotations_of(rs)
    changed = False
    for key, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(max_replicas))):
        if ann.get(key) != value:
            ann[key] = value
            changed = True
    return changed


def set_new_rs_annotations(d: Obj, rs: Obj, new_revision: int, exists: bool) -> bool:
    """Copy the Deployment's own annotations, and move the revision forward (never back)."""
    ann = annotations_of(rs)
    changed = False
    for key, value in ((d.get("metadata") or {}).get("annotations") or {}).items():
        if key not in SKIP_ANNOTATIONS and ann.get(key) != value:
            ann[key] = value
            changed = True
    old = ann.get(REVISION, "")
    old_int = revision(rs)
    if old_int < new_revision:
        ann[REVISION] = str(new_revision)
        changed = True
        if old:
            history = [h for h in ann.get(REVISION_HISTORY, "").split(",") if h] + [old]
            while len(",".join(history)) > MAX_REVISION_HISTORY_CHARS and len(history) > 1:
                history.pop(0)
            ann[REVISION_HISTORY] = ",".join(history)
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


# ---------------------------------------------------------------- conditions


def new_condition(type_: str, status: str, reason: str, message: str) -> Obj:
    now = now_rfc3339()
    return {
        "type": type_,
        "status": status,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def get_condition(status: Obj, type_: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), None)


def set_condition(status: Obj, cond: Obj) -> None:
    """Replace the condition of cond's type, unless status and reason are already the same.
    The transition time survives an update that keeps the status."""
    current = get_condition(status, cond["type"])
    if current is not None and current.get("status") == cond["status"] and current.get("reason") == cond["reason"]:
        return
    if current is not None and current.get("status") == cond["status"]:
        cond["lastTransitionTime"] = current.get("lastTransitionTime", cond["lastTransitionTime"])
    remove_condition(status, cond["type"])
    status.setdefault("conditions", []).append(cond)


def remove_condition(status: Obj, type_: str) -> None:
    conds = [c for c in status.get("conditions") or [] if c.get("type") != type_]
    if conds:
        status["conditions"] = conds
    else:
        status.pop("conditions", None)


def has_progress_deadline(d: Obj) -> bool:
    deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and deadline != 2**31 - 1


def deployment_complete(d: Obj, status: Obj) -> bool:
    want = replicas(d)
    return (
        int(status.get("updatedReplicas") or 0) == want
        and int(status.get("replicas") or 0) == want
        and int(status.get("availableReplicas") or 0) == want
        and int(status.get("observedGeneration") or 0) >= int(d["metadata"].get("generation") or 0)
    )


def deployment_progressing(d: Obj, new: Obj) -> bool:
    old = d.get("status") or {}

    def get(s: Obj, f: str) -> int:
        return int(s.get(f) or 0)

    return (
        get(new, "updatedReplicas") > get(old, "updatedReplicas")
        or get(new, "replicas") - get(new, "updatedReplicas") < get(old, "replicas") - get(old, "updatedReplicas")
        or get(new, "readyReplicas") > get(old, "readyReplicas")
        or get(new, "availableReplicas") > get(old, "availableReplicas")
    )


def deployment_timed_out(d: Obj, status: Obj, now: float) -> bool:
    if not has_progress_deadline(d):
        return False
    cond = get_condition(status, PROGRESSING)
    if cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    since = parse_time(cond.get("lastUpdateTime"))
    return since + int(d["spec"]["progressDeadlineSeconds"]) < now


def semantically_equal(a: Any, b: Any) -> bool:
    """Equal once empty values are ignored (the server may omit a zero the controller writes)."""

    def prune(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: prune(x) for k, x in v.items() if x not in (None, 0, "", [], {})}
        if isinstance(v, list):
            return [prune(x) for x in v]
        return v

    return bool(prune(a) == prune(b))
