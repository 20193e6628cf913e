"""DefaultStorageClass: a claim that names no class gets the cluster's default one.

Which disk a claim gets is cluster policy, not something a manifest from a textbook should have to
know, so Kubernetes lets the administrator mark one StorageClass with the annotation
`storageclass.kubernetes.io/is-default-class: "true"`. This plugin fills in that class's name when
a PersistentVolumeClaim is created without `spec.storageClassName` (an explicit `""` means "no
class, bind only to class-less volumes" and is kept). With several defaults, the newest wins, as
in Kubernetes ≥ 1.28. Without one, the claim is left alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from api import registry
from apiserver.admission import Attributes

if TYPE_CHECKING:
    from apiserver.server import APIServer

DEFAULT_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


class DefaultStorageClass:
    name = "DefaultStorageClass"

    def __init__(self, server: APIServer) -> None:
        self.server = server

    async def admit(self, attrs: Attributes) -> None:
        if attrs.rt.key != "persistentvolumeclaims" or attrs.operation != "CREATE" or attrs.obj is None:
            return
        spec = attrs.obj.setdefault("spec", {})
        annotations = attrs.obj.get("metadata", {}).get("annotations") or {}
        if spec.get("storageClassName") is not None or "volume.beta.kubernetes.io/storage-class" in annotations:
            return
        classes = registry.by_key("storageclasses.storage.k8s.io")
        assert classes is not None
        defaults = [
            sc for sc in (await self.server.store(classes).list(None)).items
            if any((sc["metadata"].get("annotations") or {}).get(a) == "true" for a in DEFAULT_ANNOTATIONS)
        ]  # fmt: skip
        if defaults:
            newest = max(defaults, key=lambda sc: (sc["metadata"].get("creationTimestamp", ""), sc["metadata"]["name"]))
            spec["storageClassName"] = newest["metadata"]["name"]
