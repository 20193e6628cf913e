"""storage.k8s.io/v1 StorageClass: how to make a PersistentVolume when a claim asks for one.

A claim naming `storageClassName: fast` is given a volume by the class's `provisioner`, with
its `parameters`; `reclaimPolicy` is copied to the volume and `volumeBindingMode`
(Immediate or WaitForFirstConsumer) says when to bind. Cluster-scoped; the class annotated
`storageclass.kubernetes.io/is-default-class: "true"` serves claims that name none.
"""

from __future__ import annotations

from api.models.base import FreeDict, K8sModel
from api.models.meta import K8sList, ObjectMeta


class StorageClass(K8sModel):
    api_version: str | None = "storage.k8s.io/v1"
    kind: str | None = "StorageClass"
    metadata: ObjectMeta | None = None
    provisioner: str | None = None
    parameters: dict[str, str] | None = None
    reclaim_policy: str | None = None  # Delete (default) or Retain
    mount_options: list[str] | None = None
    allow_volume_expansion: bool | None = None
    volume_binding_mode: str | None = None  # Immediate (default) or WaitForFirstConsumer
    allowed_topologies: list[FreeDict] | None = None


class StorageClassList(K8sList[StorageClass]):
    api_version: str | None = "storage.k8s.io/v1"
    kind: str | None = "StorageClassList"
