"""Rows for PersistentVolumes, PersistentVolumeClaims and StorageClasses.

Access modes print abbreviated and in a fixed order (RWO, ROX, RWX, RWOP), whatever order the
spec lists them in. A claim shows its capacity and access modes only once it is bound to a
volume (they come from status). The default StorageClass says so after its name:
`standard (default)`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers.columns import AGE, NAME, Cells, Column, TablePrinter, dig, items, mapping, wide
from apiserver.printers.duration import translate_timestamp_since

_ACCESS_ABBREV = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)
UNSET = "<unset>"
DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


def access_modes(modes: list[Any]) -> str:
    return ",".join(short for mode, short in _ACCESS_ABBREV if mode in modes)


def storage_class_of(obj: dict[str, Any]) -> str:
    """spec.storageClassName, or the beta annotation older objects used."""
    annotated = mapping(obj, "metadata", "annotations").get("volume.beta.kubernetes.io/storage-class")
    return str(annotated) if annotated is not None else str(dig(obj, "spec", "storageClassName", default=""))


def _age(obj: dict[str, Any], now: datetime) -> str:
    return translate_timestamp_since(dig(obj, "metadata", "creationTimestamp"), now)


def pv_cells(pv: dict[str, Any], now: datetime) -> Cells:
    claim = dig(pv, "spec", "claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    phase = "Terminating" if dig(pv, "metadata", "deletionTimestamp") else dig(pv, "status", "phase", default="")
    return [
        dig(pv, "metadata", "name", default=""),
        str(mapping(pv, "spec", "capacity").get("storage", "0")),
        access_modes(items(pv, "spec", "accessModes")),
        dig(pv, "spec", "persistentVolumeReclaimPolicy", default=""),
        phase,
        claim_text,
        storage_class_of(pv),
        dig(pv, "spec", "volumeAttributesClassName") or UNSET,
        dig(pv, "status", "reason", default=""),
        _age(pv, now),
        dig(pv, "spec", "volumeMode") or UNSET,
    ]


def pvc_cells(pvc: dict[str, Any], now: datetime) -> Cells:
    phase = "Terminating" if dig(pvc, "metadata", "deletionTimestamp") else dig(pvc, "status", "phase", default="")
    volume = dig(pvc, "spec", "volumeName", default="")
    capacity, modes = "", ""
    if volume:
        capacity = str(mapping(pvc, "status", "capacity").get("storage", "0"))
        modes = access_modes(items(pvc, "status", "accessModes"))
    return [
        dig(pvc, "metadata", "name", default=""),
        phase,
        volume,
        capacity,
        modes,
        storage_class_of(pvc),
        dig(pvc, "spec", "volumeAttributesClassName") or UNSET,
        _age(pvc, now),
        dig(pvc, "spec", "volumeMode") or UNSET,
    ]


def is_default_class(sc: dict[str, Any]) -> bool:
    annotations = mapping(sc, "metadata", "annotations")
    return any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)


def storage_class_cells(sc: dict[str, Any], now: datetime) -> Cells:
    name = dig(sc, "metadata", "name", default="")
    if is_default_class(sc):
        name += " (default)"
    return [
        name,
        sc.get("provisioner", ""),
        sc.get("reclaimPolicy") or "Delete",
        sc.get("volumeBindingMode") or "Immediate",
        "true" if sc.get("allowVolumeExpansion") else "false",
        _age(sc, now),
    ]


PRINTERS = {
    "persistentvolumes": TablePrinter(
        (
            NAME,
            Column("Capacity", description="capacity is the description of the persistent volume's resources "
                   "and capacity."),
            Column("Access Modes", description="accessModes contains all ways the volume can be mounted."),
            Column("Reclaim Policy", description="persistentVolumeReclaimPolicy defines what happens to a "
                   "persistent volume when released from its claim."),
            Column("Status", description="phase indicates if a volume is available, bound to a claim, or "
                   "released by a claim."),
            Column("Claim", description="claimRef is part of a bi-directional binding between "
                   "PersistentVolume and PersistentVolumeClaim."),
            Column("StorageClass", description="StorageClass of the pv"),
            Column("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
            Column("Reason", description="reason is a brief CamelCase string that describes any failure."),
            AGE,
            wide("VolumeMode", "volumeMode defines if a volume is intended to be used with a formatted "
                 "filesystem or to remain in raw block state."),
        ),
        pv_cells,
    ),
    "persistentvolumeclaims": TablePrinter(
        (
            NAME,
            Column("Status", description="phase represents the current phase of PersistentVolumeClaim."),
            Column("Volume", description="volumeName is the binding reference to the PersistentVolume "
                   "backing this claim."),
            Column("Capacity", description="capacity represents the actual resources of the underlying volume."),
            Column("Access Modes", description="accessModes contains the actual access modes the volume "
                   "backing the PVC has."),
            Column("StorageClass", description="StorageClass of the pvc"),
            Column("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"),
            AGE,
            wide("VolumeMode", "volumeMode defines what type of volume is required by the claim."),
        ),
        pvc_cells,
    ),
    "storageclasses.storage.k8s.io": TablePrinter(
        (
            NAME,
            Column("Provisioner", description="provisioner indicates the type of the provisioner."),
            Column("ReclaimPolicy", description="reclaimPolicy controls the reclaimPolicy for dynamically "
                   "provisioned PersistentVolumes of this storage class."),
            Column("VolumeBindingMode", description="volumeBindingMode indicates how PersistentVolumeClaims "
                   "should be provisioned and bound."),
            Column("AllowVolumeExpansion", description="allowVolumeExpansion shows whether the storage class "
                   "allow volume expand."),
            AGE,
        ),
        storage_class_cells,
    ),
}
