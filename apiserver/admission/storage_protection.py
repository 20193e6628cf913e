"""StorageObjectInUseProtection: claims and volumes get a finalizer when they are created.

Deleting a PersistentVolumeClaim that a running pod still mounts would pull the disk from under
it. So every new claim carries the finalizer `kubernetes.io/pvc-protection`, and every new volume
`kubernetes.io/pv-protection`: a delete only marks them (Terminating, as `kubectl get pvc` shows),
and the controller-manager's pvc-protection and pv-protection controllers remove the finalizer once
no pod uses the claim, or the volume is no longer bound — then they are really gone.
"""

from __future__ import annotations

from apiserver.admission import Attributes

FINALIZERS = {
    "persistentvolumeclaims": "kubernetes.io/pvc-protection",
    "persistentvolumes": "kubernetes.io/pv-protection",
}


class StorageObjectInUseProtection:
    name = "StorageObjectInUseProtection"

    async def admit(self, attrs: Attributes) -> None:
        finalizer = FINALIZERS.get(attrs.rt.key)
        if finalizer is None or attrs.operation != "CREATE" or attrs.obj is None:
            return
        md = attrs.obj.setdefault("metadata", {})
        finalizers = list(md.get("finalizers") or [])
        if finalizer not in finalizers:
            md["finalizers"] = [*finalizers, finalizer]
