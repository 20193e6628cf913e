"""Validation of PersistentVolume, PersistentVolumeClaim and StorageClass.

The rules that catch real mistakes: a volume needs a capacity (`storage`), access modes and
exactly one volume source; a claim needs access modes and `resources.requests.storage`, and
its spec is fixed once created except for a bigger storage request; a class needs a
provisioner, and neither the provisioner nor its parameters may change afterwards.
"""

from __future__ import annotations

from typing import Any

from api.errors import FieldError, field_forbidden, immutable, invalid_value, not_supported, required

Obj = dict[str, Any]
Errors = list[FieldError]

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
PV_RECLAIM = ("Delete", "Recycle", "Retain")
SC_RECLAIM = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
PV_SOURCES = (
    "hostPath", "local", "nfs", "csi", "iscsi", "fc", "rbd", "cephfs", "cinder", "glusterfs",
    "flexVolume", "awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "azureFile",
    "vsphereVolume", "portworxVolume",
)


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _access_modes(modes: Any, path: str) -> Errors:
    if not modes:
        return [required(path, "")]
    errs: Errors = []
    for mode in modes if isinstance(modes, list) else []:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(path, mode, ACCESS_MODES))
    if "ReadWriteOncePod" in (modes or []) and len(modes) > 1:
        errs.append(field_forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _volume_mode(spec: Obj, path: str) -> Errors:
    mode = spec.get("volumeMode")
    return [] if mode in (None, *VOLUME_MODES) else [not_supported(path, mode, VOLUME_MODES)]


def validate_persistent_volume(obj: Obj) -> Errors:
    spec = _spec(obj)
    errs = _access_modes(spec.get("accessModes"), "spec.accessModes")
    capacity = spec.get("capacity") or {}
    if not capacity:
        errs.append(required("spec.capacity", ""))
    elif "storage" not in capacity or len(capacity) != 1:
        errs.append(not_supported("spec.capacity", capacity, ["storage"]))
    sources = [s for s in PV_SOURCES if spec.get(s) is not None]
    if not sources:
        errs.append(required("spec", "must specify a volume type"))
    elif len(sources) > 1:
        errs.append(field_forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy not in PV_RECLAIM:
        errs.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, PV_RECLAIM))
    if "local" in sources and not spec.get("nodeAffinity"):
        errs.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
    return errs + _volume_mode(spec, "spec.volumeMode")


def validate_persistent_volume_update(new: Obj, old: Obj) -> Errors:
    errs: Errors = []
    new_spec, old_spec = _spec(new), _spec(old)
    if new_spec.get("volumeMode") != old_spec.get("volumeMode"):
        errs.append(immutable("spec.volumeMode", new_spec.get("volumeMode")))
    for source in PV_SOURCES:
        if old_spec.get(source) is not None and new_spec.get(source) != old_spec.get(source):
            errs.append(field_forbidden("spec.persistentvolumesource",
                                        "spec.persistentvolumesource is immutable after creation"))
            break
    return errs


def validate_persistent_volume_claim(obj: Obj) -> Errors:
    spec = _spec(obj)
    errs = _access_modes(spec.get("accessModes"), "spec.accessModes")
    requests = ((spec.get("resources") or {}).get("requests")) or {}
    if "storage" not in requests:
        errs.append(required("spec.resources[storage]", ""))
    return errs + _volume_mode(spec, "spec.volumeMode")


def validate_persistent_volume_claim_update(new: Obj, old: Obj) -> Errors:
    new_spec, old_spec = dict(_spec(new)), dict(_spec(old))
    for spec in (new_spec, old_spec):
        spec.pop("resources", None)
        spec.pop("volumeAttributesClassName", None)
    if not old_spec.get("volumeName"):  # the binder may fill volumeName in once
        new_spec.pop("volumeName", None)
        old_spec.pop("volumeName", None)
    if new_spec != old_spec:
        return [field_forbidden(
            "spec",
            "spec is immutable after creation except resources.requests and volumeAttributesClassName "
            "for bound claims",
        )]
    return []


def validate_storage_class(obj: Obj) -> Errors:
    errs: Errors = []
    provisioner = obj.get("provisioner")
    if not provisioner:
        errs.append(required("provisioner", ""))
    elif len(provisioner) > 63:
        errs.append(invalid_value("provisioner", provisioner, "must be no more than 63 characters"))
    policy = obj.get("reclaimPolicy")
    if policy not in SC_RECLAIM:
        errs.append(not_supported("reclaimPolicy", policy, SC_RECLAIM))
    mode = obj.get("volumeBindingMode")
    if mode not in BINDING_MODES:
        errs.append(not_supported("volumeBindingMode", mode, BINDING_MODES))
    return errs


def validate_storage_class_update(new: Obj, old: Obj) -> Errors:
    errs: Errors = []
    for field in ("parameters", "provisioner", "reclaimPolicy", "volumeBindingMode"):
        if new.get(field) != old.get(field):
            errs.append(field_forbidden(field, "updates to " + field + " are forbidden."))
    return errs
