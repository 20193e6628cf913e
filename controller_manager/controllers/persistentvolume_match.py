"""Which PersistentVolume a claim gets: the pure rules of the binder, kept apart to be read and tested.

A claim asks for a size, access modes, a volume mode, a storage class and maybe a label selector.
A volume fits when it offers at least that: the same class (a claim with class "" takes only
volumes with no class), every access mode asked for, the same volume mode, at least the size,
labels that match the selector, and it is free — no `claimRef`, or a `claimRef` that already names
this claim (an administrator pre-bound it). Among the volumes that fit, a pre-bound one wins, then
the smallest, so a 1Gi claim does not take the 100Gi volume another claim will need.
"""

from __future__ import annotations

from typing import Any

from api import labels
from api.quantity import Quantity, parse_quantity

Obj = dict[str, Any]


def claim_class(claim: Obj) -> str:
    """The claim's class: `spec.storageClassName`, or the old beta annotation, else ""."""
    annotated = (claim["metadata"].get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class")
    if annotated is not None:
        return str(annotated)
    return (claim.get("spec") or {}).get("storageClassName") or ""


def volume_class(pv: Obj) -> str:
    annotated = (pv["metadata"].get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class")
    if annotated is not None:
        return str(annotated)
    return (pv.get("spec") or {}).get("storageClassName") or ""


def requested(claim: Obj) -> Quantity:
    raw = (((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage", "0")
    return parse_quantity(str(raw))


def capacity(pv: Obj) -> Quantity:
    return parse_quantity(str(((pv.get("spec") or {}).get("capacity") or {}).get("storage", "0")))


def claim_ref_is(pv: Obj, claim: Obj) -> bool:
    """Does the volume's claimRef name this claim (by namespace/name, and uid when it has one)?"""
    ref = (pv.get("spec") or {}).get("claimRef")
    if not ref:
        return False
    md = claim["metadata"]
    same = ref.get("namespace") == md.get("namespace") and ref.get("name") == md.get("name")
    return same and (not ref.get("uid") or ref.get("uid") == md.get("uid"))


def fits(pv: Obj, claim: Obj) -> bool:
    spec, want = pv.get("spec") or {}, claim.get("spec") or {}
    if pv["metadata"].get("deletionTimestamp") or (pv.get("status") or {}).get("phase") in ("Released", "Failed"):
        return False
    if spec.get("claimRef") and not claim_ref_is(pv, claim):
        return False
    if volume_class(pv) != claim_class(claim):
        return False
    if (spec.get("volumeMode") or "Filesystem") != (want.get("volumeMode") or "Filesystem"):
        return False
    if not set(want.get("accessModes") or []) <= set(spec.get("accessModes") or []):
        return False
    if capacity(pv) < requested(claim):
        return False
    selector = want.get("selector")
    if selector is not None and not labels.from_label_selector(selector).matches(pv["metadata"].get("labels") or {}):
        return False
    return True


def best_volume(volumes: list[Obj], claim: Obj) -> Obj | None:
    """The volume the claim should be bound to, or None when none fits."""
    candidates = [pv for pv in volumes if fits(pv, claim)]
    if not candidates:
        return None
    return min(candidates, key=lambda pv: (not claim_ref_is(pv, claim), capacity(pv), pv["metadata"]["name"]))
