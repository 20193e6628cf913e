"""PersistentVolumeController (`persistentvolume-binder`): claims meet volumes, and volumes outlive claims as asked.

Desired state: every PersistentVolumeClaim is Bound to one PersistentVolume that fits it
(persistentvolume_match.py says which), both sides saying so (`pv.spec.claimRef`,
`pvc.spec.volumeName`, phase Bound on both); a claim of a class whose provisioner is ours gets a
new volume made for it; a volume whose claim is gone is Released and then kept (`Retain`) or
deleted (`Delete`) as its `persistentVolumeReclaimPolicy` says.
Current state: volumes, claims and StorageClasses from informers.
What it does about the difference, one key at a time (`claim:<ns>/<name>` or `volume:<name>`):
- a pending claim: bind it to the best free volume — the volume first (claimRef), then the claim
  (volumeName), then their statuses, so a crash in between leaves a volume reserved for the claim,
  which the next pass completes; with no volume: provision one (host-path provisioner, below),
  or note that an external provisioner must (`ExternalProvisioning`), or say why it waits
  (`FailedBinding`);
- a volume: Available when free, Bound when its claim names it, Released when its claim was
  deleted; a Released `Delete` volume is deleted, with its directory when we made it.

The host-path provisioner is kube-controller-manager's own development provisioner
(`--enable-hostpath-provisioner`, provisioner name `kubernetes.io/host-path`): a volume is a new
directory under `--hostpath-provisioner-root` (Kubernetes hard-codes /tmp/hostpath_pv; mini-k8s up
points it into its data directory so `mini-k8s down` removes it). It only makes sense when every
node shares this machine's disk, which is exactly mini-k8s. `mini-k8s up` creates the default
StorageClass `standard` that uses it.

Not done here (see docs/STATUS.md): `WaitForFirstConsumer` binding (the scheduler does not pick
volumes), the pvc-protection/pv-protection finalizers, Recycle, expansion.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from api import errors
from api.timestamps import now_rfc3339
from client.informer import meta_namespace_key
from controller_manager.controller import Controller
from controller_manager.controllers.persistentvolume_match import best_volume, claim_class, claim_ref_is

Obj = dict[str, Any]

PV, PVC, SC = "persistentvolumes", "persistentvolumeclaims", "storageclasses.storage.k8s.io"
HOST_PATH = "kubernetes.io/host-path"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"


class PersistentVolumeController(Controller):
    name = "persistentvolume-binder"
    component = "persistentvolume-controller"

    def setup(self) -> None:
        f = self.ctx.informers
        self.volumes = f.informer_for(PV)
        self.claims = f.informer_for(PVC)
        self.classes = f.informer_for(SC)
        self.volumes.add_event_handler(self._volume_changed, lambda _o, n: self._volume_changed(n), None)
        self.claims.add_event_handler(self._claim_changed, lambda _o, n: self._claim_changed(n), self._claim_deleted)
        self.classes.add_event_handler(self._class_added, None, None)
        opts = self.ctx.options
        self.provision_host_paths = opts.enable_hostpath_provisioner
        self.root = Path(opts.hostpath_provisioner_root)

    # -- events → keys ---------------------------------------------------------------------------
    def _volume_changed(self, pv: Obj) -> None:
        self.enqueue(f"volume:{pv['metadata']['name']}")
        ref = (pv.get("spec") or {}).get("claimRef")
        if ref and ref.get("namespace") and ref.get("name"):
            self.enqueue(f"claim:{ref['namespace']}/{ref['name']}")

    def _claim_changed(self, claim: Obj) -> None:
        self.enqueue(f"claim:{meta_namespace_key(claim)}")

    def _claim_deleted(self, claim: Obj) -> None:
        for pv in self.volumes.list():
            if claim_ref_is(pv, claim):
                self.enqueue(f"volume:{pv['metadata']['name']}")

    def _class_added(self, _sc: Obj) -> None:
        for claim in self.claims.list():
            if (claim.get("status") or {}).get("phase") != "Bound":
                self._claim_changed(claim)

    def resync(self) -> tuple[float, Any]:
        def keys() -> list[str]:
            return [f"volume:{k}" for k in self.volumes.list_keys()] + [f"claim:{k}" for k in self.claims.list_keys()]

        return self.ctx.options.pvclaimbinder_sync_period, keys

    async def reconcile(self, key: str) -> None:
        kind, _, rest = key.partition(":")
        if kind == "claim":
            claim = self.claims.get(rest)
            if claim is not None and not claim["metadata"].get("deletionTimestamp"):
                await self.sync_claim(claim)
        elif kind == "volume":
            pv = self.volumes.get(rest)
            if pv is not None:  # a Terminating one too: its phase tells pv-protection when it may go
                await self.sync_volume(pv)

    # -- claims ----------------------------------------------------------------------------------
    async def sync_claim(self, claim: Obj) -> None:
        wanted = (claim.get("spec") or {}).get("volumeName")
        if wanted:
            pv = self.volumes.get(wanted)
            if pv is None:
                await self._claim_phase(claim, "Lost" if _bound(claim) else "Pending")
                if _bound(claim):
                    lost = "Bound claim has lost its PersistentVolume. Data on the volume is lost!"
                    self.recorder.event(claim, "Warning", "ClaimLost", lost)
                return
            ref = (pv.get("spec") or {}).get("claimRef")
            if ref and not claim_ref_is(pv, claim):
                self.recorder.event(claim, "Warning", "FailedBinding",
                                    f'volume "{wanted}" already bound to a different claim.')  # fmt: skip
                await self._claim_phase(claim, "Pending")
                return
            await self.bind(pv, claim)
            return
        pv = best_volume(self.volumes.list(), claim)
        if pv is not None:
            await self.bind(pv, claim)
            return
        await self._claim_phase(claim, "Pending")
        await self._without_volume(claim)

    async def _without_volume(self, claim: Obj) -> None:
        """No volume fits: provision one, or say who should, or why the claim waits."""
        class_name = claim_class(claim)
        if not class_name:
            why = "no persistent volumes available for this claim and no storage class is set"
            self.recorder.event(claim, "Normal", "FailedBinding", why)
            return
        sc = self.classes.get(class_name)
        if sc is None:
            self.recorder.event(claim, "Warning", "ProvisioningFailed",
                                f'storageclass.storage.k8s.io "{class_name}" not found')  # fmt: skip
            return
        if sc.get("volumeBindingMode") == "WaitForFirstConsumer":
            self.recorder.event(claim, "Normal", "WaitForFirstConsumer",
                                "waiting for first consumer to be created before binding")  # fmt: skip
            return
        provisioner = sc.get("provisioner") or ""
        if provisioner == HOST_PATH and self.provision_host_paths:
            await self.provision(claim, sc)
            return
        annotations = claim["metadata"].get("annotations") or {}
        if annotations.get(STORAGE_PROVISIONER) != provisioner:
            annotations = {**annotations, STORAGE_PROVISIONER: provisioner, BETA_STORAGE_PROVISIONER: provisioner}
            await self.client.update(PVC, {**claim, "metadata": {**claim["metadata"], "annotations": annotations}})
        self.recorder.event(
            claim, "Normal", "ExternalProvisioning",
            f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by "
            "the system administrator. If volume creation is delayed, please verify that the provisioner is "
            "running and correctly registered.",
        )  # fmt: skip

    async def provision(self, claim: Obj, sc: Obj) -> None:
        md = claim["metadata"]
        name = f"pvc-{md['uid']}"
        if self.volumes.get(name) is not None:
            return  # made already; the informer brings it, and with it the bind
        path = self.root / str(uuid.uuid4())
        path.mkdir(mode=0o750, parents=True, exist_ok=True)
        spec = claim.get("spec") or {}
        pv: Obj = {
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {PROVISIONED_BY: HOST_PATH}},
            "spec": {
                "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")},
                "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
                "storageClassName": sc["metadata"]["name"],
                "volumeMode": spec.get("volumeMode") or "Filesystem",
                "hostPath": {"path": str(path), "type": ""},
                "claimRef": _claim_ref(claim),
            },
        }  # fmt: skip
        if sc.get("mountOptions"):
            pv["spec"]["mountOptions"] = sc["mountOptions"]
        try:
            await self.client.create(PV, pv)
        except errors.AlreadyExistsError:
            shutil.rmtree(path, ignore_errors=True)
            return
        except errors.StatusError as exc:
            shutil.rmtree(path, ignore_errors=True)
            self.recorder.event(claim, "Warning", "ProvisioningFailed", f"Failed to create volume {name}: {exc}")
            raise
        self.recorder.event(claim, "Normal", "ProvisioningSucceeded",
                            f"Successfully provisioned volume {name} using {HOST_PATH}")  # fmt: skip

    async def bind(self, pv: Obj, claim: Obj) -> None:
        """Volume first, then claim, then the two statuses; each step is skipped when already done."""
        if not claim_ref_is(pv, claim) or not (pv["spec"]["claimRef"].get("uid")):
            annotations = dict(pv["metadata"].get("annotations") or {})
            if not (pv.get("spec") or {}).get("claimRef"):
                annotations[BOUND_BY_CONTROLLER] = "yes"
            body = {**pv, "metadata": {**pv["metadata"], "annotations": annotations},
                    "spec": {**pv["spec"], "claimRef": _claim_ref(claim)}}  # fmt: skip
            pv = await self.client.update(PV, body)
        pv = await self._volume_phase(pv, "Bound")
        md = claim["metadata"]
        annotations = dict(md.get("annotations") or {})
        if (claim.get("spec") or {}).get("volumeName") != pv["metadata"]["name"] or annotations.get(
            BIND_COMPLETED
        ) != "yes":
            if not (claim.get("spec") or {}).get("volumeName"):
                annotations[BOUND_BY_CONTROLLER] = "yes"
            annotations[BIND_COMPLETED] = "yes"
            body = {**claim, "metadata": {**md, "annotations": annotations},
                    "spec": {**claim["spec"], "volumeName": pv["metadata"]["name"]}}  # fmt: skip
            claim = await self.client.update(PVC, body)
        status = dict(claim.get("status") or {})
        want = {"phase": "Bound", "accessModes": pv["spec"].get("accessModes") or [],
                "capacity": dict(pv["spec"].get("capacity") or {})}  # fmt: skip
        if any(status.get(k) != v for k, v in want.items()):
            await self.client.update_status(PVC, {**claim, "status": {**status, **want}})

    # -- volumes ---------------------------------------------------------------------------------
    async def sync_volume(self, pv: Obj) -> None:
        ref = (pv.get("spec") or {}).get("claimRef")
        if not ref:
            await self._volume_phase(pv, "Available")
            return
        claim = self.claims.get(f"{ref.get('namespace')}/{ref.get('name')}")
        if claim is not None and claim_ref_is(pv, claim):
            if (claim.get("spec") or {}).get("volumeName") == pv["metadata"]["name"]:
                await self._volume_phase(pv, "Bound")
            else:
                self.enqueue(f"claim:{meta_namespace_key(claim)}")  # the claim side is not done yet
            return
        if not ref.get("uid"):
            await self._volume_phase(pv, "Available")  # pre-bound to a claim that does not exist yet
            return
        if (pv.get("status") or {}).get("phase") == "Failed":
            return  # reclaiming it failed once; an administrator decides what happens to it now
        if claim is None:  # the informer may be behind: ask before releasing anything
            try:
                fresh = await self.client.get(PVC, str(ref.get("name")), str(ref.get("namespace")))
                if fresh["metadata"].get("uid") == ref.get("uid"):
                    return
            except errors.NotFoundError:
                pass
        pv = await self._volume_phase(pv, "Released")
        await self.reclaim(pv)

    async def reclaim(self, pv: Obj) -> None:
        policy = (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") or "Retain"
        if policy == "Retain":
            return
        name = pv["metadata"]["name"]
        if policy == "Delete" and self._ours(pv):
            shutil.rmtree(pv["spec"]["hostPath"]["path"], ignore_errors=True)
            try:
                await self.client.delete(PV, name, preconditions={"uid": pv["metadata"]["uid"]})
            except (errors.NotFoundError, errors.ConflictError):
                pass
            return
        message = (f'error getting deleter volume plugin for volume "{name}": no deletable volume plugin matched'
                   if policy == "Delete" else f"recycling volume {name} is not supported")  # fmt: skip
        reason = "VolumeFailedDelete" if policy == "Delete" else "VolumeFailedRecycle"
        self.recorder.event(pv, "Warning", reason, message)
        await self._volume_phase(pv, "Failed", message)

    def _ours(self, pv: Obj) -> bool:
        """Made by our host-path provisioner, in a directory under its root (never delete anything else)."""
        if (pv["metadata"].get("annotations") or {}).get(PROVISIONED_BY) != HOST_PATH:
            return False
        path = ((pv.get("spec") or {}).get("hostPath") or {}).get("path") or ""
        root = os.path.realpath(self.root)
        return bool(path) and os.path.realpath(path).startswith(root + os.sep)

    # -- writes ----------------------------------------------------------------------------------
    async def _volume_phase(self, pv: Obj, phase: str, message: str = "") -> Obj:
        status = pv.get("status") or {}
        if status.get("phase") == phase and (status.get("message") or "") == message:
            return pv
        new: Obj = {"phase": phase, "lastPhaseTransitionTime": now_rfc3339()}
        if message:
            new["message"] = message
        return await self.client.update_status(PV, {**pv, "status": new})

    async def _claim_phase(self, claim: Obj, phase: str) -> None:
        if (claim.get("status") or {}).get("phase") != phase:
            await self.client.update_status(PVC, {**claim, "status": {**(claim.get("status") or {}), "phase": phase}})


def _bound(claim: Obj) -> bool:
    return (claim["metadata"].get("annotations") or {}).get(BIND_COMPLETED) == "yes"


def _claim_ref(claim: Obj) -> Obj:
    md = claim["metadata"]
    return {"kind": "PersistentVolumeClaim", "namespace": md["namespace"], "name": md["name"],
            "uid": md["uid"], "apiVersion": "v1", "resourceVersion": md.get("resourceVersion", "")}  # fmt: skip
