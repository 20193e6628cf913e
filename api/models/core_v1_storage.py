"""core/v1 PersistentVolume and PersistentVolumeClaim: storage that outlives a pod.

A PersistentVolume (cluster-scoped) is a piece of storage with a capacity, access modes and
one volume source (hostPath, nfs, csi, local...). A PersistentVolumeClaim (namespaced) asks
for storage of some size and class; binding pairs a claim with a volume (`spec.volumeName`
and the volume's `claimRef`), and both report it in `status.phase` (Pending/Bound, and for a
volume Available/Released/Failed). Pods mount claims, never volumes directly.
"""

from __future__ import annotations

from api.models.base import FreeDict, K8sModel, ResourceList, Time
from api.models.core_v1 import ObjectReference
from api.models.meta import BaseCondition, K8sList, LabelSelector, ObjectMeta


class VolumeNodeAffinity(K8sModel):
    required: FreeDict | None = None


class PersistentVolumeSpec(K8sModel):
    capacity: ResourceList | None = None
    access_modes: list[str] | None = None  # ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod
    claim_ref: ObjectReference | None = None
    persistent_volume_reclaim_policy: str | None = None  # Retain (default for static), Delete, Recycle
    storage_class_name: str | None = None
    mount_options: list[str] | None = None
    volume_mode: str | None = None  # Filesystem (default) or Block
    node_affinity: VolumeNodeAffinity | None = None
    volume_attributes_class_name: str | None = None
    # The volume sources (exactly one); kept verbatim.
    host_path: FreeDict | None = None
    local: FreeDict | None = None
    nfs: FreeDict | None = None
    csi: FreeDict | None = None
    iscsi: FreeDict | None = None
    fc: FreeDict | None = None
    rbd: FreeDict | None = None
    cephfs: FreeDict | None = None
    cinder: FreeDict | None = None
    glusterfs: FreeDict | None = None
    flex_volume: FreeDict | None = None
    aws_elastic_block_store: FreeDict | None = None
    gce_persistent_disk: FreeDict | None = None
    azure_disk: FreeDict | None = None
    azure_file: FreeDict | None = None
    vsphere_volume: FreeDict | None = None
    portworx_volume: FreeDict | None = None


class PersistentVolumeStatus(K8sModel):
    phase: str | None = None  # Pending, Available, Bound, Released, Failed
    message: str | None = None
    reason: str | None = None
    last_phase_transition_time: Time | None = None


class PersistentVolume(K8sModel):
    api_version: str | None = "v1"
    kind: str | None = "PersistentVolume"
    metadata: ObjectMeta | None = None
    spec: PersistentVolumeSpec | None = None
    status: PersistentVolumeStatus | None = None


class PersistentVolumeList(K8sList[PersistentVolume]):
    api_version: str | None = "v1"
    kind: str | None = "PersistentVolumeList"


class VolumeResourceRequirements(K8sModel):
    limits: ResourceList | None = None
    requests: ResourceList | None = None


class PersistentVolumeClaimSpec(K8sModel):
    access_modes: list[str] | None = None
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements | None = None
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None
    data_source: FreeDict | None = None
    data_source_ref: FreeDict | None = None
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaimStatus(K8sModel):
    phase: str | None = None  # Pending, Bound, Lost
    access_modes: list[str] | None = None
    capacity: ResourceList | None = None
    conditions: list[BaseCondition] | None = None
    allocated_resources: ResourceList | None = None
    allocated_resource_statuses: dict[str, str] | None = None
    current_volume_attributes_class_name: str | None = None
    modify_volume_status: FreeDict | None = None


class PersistentVolumeClaim(K8sModel):
    api_version: str | None = "v1"
    kind: str | None = "PersistentVolumeClaim"
    metadata: ObjectMeta | None = None
    spec: PersistentVolumeClaimSpec | None = None
    status: PersistentVolumeClaimStatus | None = None


class PersistentVolumeClaimList(K8sList[PersistentVolumeClaim]):
    api_version: str | None = "v1"
    kind: str | None = "PersistentVolumeClaimList"
