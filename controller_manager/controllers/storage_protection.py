"""The pvc-protection and pv-protection controllers: let a claim or volume go once nothing needs it.

pvc-protection — desired state: a PersistentVolumeClaim that is being deleted is gone as soon as
no pod that has not finished mounts it. Current state: claims and pods from informers. What it does:
for a Terminating claim still carrying `kubernetes.io/pvc-protection`, it asks the API server (not
its cache: a pod created a moment ago must count) for the namespace's pods, and removes the
finalizer when none uses the claim. A pod that goes or finishes re-queues its claims.

pv-protection — desired state: a PersistentVolume that is being deleted is gone once it is not
Bound. Current state: volumes from an informer. What it does: removes `kubernetes.io/pv-protection`
from a Terminating volume whose phase is not Bound.

The finalizers come from the API server's StorageObjectInUseProtection admission.
"""

from __future__ import annotations

from typing import Any

from api import errors
from client.informer import split_key
from controller_manager.controller import Controller

Obj = dict[str, Any]
PVC_FINALIZER = "kubernetes.io/pvc-protection"
PV_FINALIZER = "kubernetes.io/pv-protection"


def claims_of(pod: Obj) -> list[str]:
    return [v["persistentVolumeClaim"]["claimName"] for v in (pod.get("spec") or {}).get("volumes") or []
            if (v.get("persistentVolumeClaim") or {}).get("claimName")]  # fmt: skip


def uses(pod: Obj, claim: str) -> bool:
    finished = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    return not finished and claim in claims_of(pod)


async def remove_finalizer(controller: Controller, resource: str, obj: Obj, finalizer: str) -> None:
    md = obj["metadata"]
    kept = [f for f in md.get("finalizers") or [] if f != finalizer]
    patch = {"metadata": {"finalizers": kept or None, "resourceVersion": md["resourceVersion"]}}
    try:
        await controller.client.patch(resource, md["name"], patch, md.get("namespace"))
    except errors.ConflictError:
        controller.enqueue_after(f"{md.get('namespace', '')}/{md['name']}".lstrip("/"), 0.1)
    except errors.NotFoundError:
        pass


class PVCProtectionController(Controller):
    name = "pvc-protection"
    component = "pvc-protection-controller"

    def setup(self) -> None:
        f = self.ctx.informers
        self.claims = f.informer_for("persistentvolumeclaims")
        self.pods = f.informer_for("pods")
        self.claims.add_event_handler(self.enqueue, lambda _o, new: self.enqueue(new), None)
        self.pods.add_event_handler(None, lambda _o, new: self._pod_changed(new), self._pod_changed)

    def _pod_changed(self, pod: Obj) -> None:
        for claim in claims_of(pod):
            self.enqueue(f"{pod['metadata'].get('namespace')}/{claim}")

    async def reconcile(self, key: str) -> None:
        claim = self.claims.get(key)
        if claim is None or not claim["metadata"].get("deletionTimestamp"):
            return
        if PVC_FINALIZER not in (claim["metadata"].get("finalizers") or []):
            return
        namespace, name = split_key(key)
        live = (await self.client.list("pods", namespace)).get("items") or []
        if any(uses(pod, name) for pod in live):
            return  # still mounted: a pod event will bring us back
        await remove_finalizer(self, "persistentvolumeclaims", claim, PVC_FINALIZER)


class PVProtectionController(Controller):
    name = "pv-protection"
    component = "pv-protection-controller"

    def setup(self) -> None:
        self.volumes = self.ctx.informers.informer_for("persistentvolumes")
        self.volumes.add_event_handler(self.enqueue, lambda _o, new: self.enqueue(new), None)

    async def reconcile(self, key: str) -> None:
        pv = self.volumes.get(key)
        if pv is None or not pv["metadata"].get("deletionTimestamp"):
            return
        if PV_FINALIZER not in (pv["metadata"].get("finalizers") or []):
            return
        if (pv.get("status") or {}).get("phase") == "Bound":
            return  # its claim still holds it; the binder releases it when the claim goes
        await remove_finalizer(self, "persistentvolumes", pv, PV_FINALIZER)
