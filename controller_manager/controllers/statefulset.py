"""StatefulSetController: pods with stable names, made and replaced in order, each with its own claims.

Desired state: pods `<set>-0 … <set>-(replicas-1)`, each with hostname = its name and subdomain =
`spec.serviceName` (so `web-0.nginx.default.svc.cluster.local` names one pod for good), each with a
PersistentVolumeClaim `<template>-<pod>` per `volumeClaimTemplates` entry that outlives the pod,
all from the update revision of the template — except ordinals below a RollingUpdate `partition`,
which keep the current revision, and any pod under `OnDelete`, which is replaced only when someone
deletes it.
Current state: the set's pods (by ownerReference and selector) indexed by their ordinal, its
ControllerRevisions (`history.py`), its claims.
What it does about the difference, one step at a time as Kubernetes does:

    OrderedReady (default)   create the lowest missing ordinal only once every lower pod is
                             Running and Ready; delete the highest surplus ordinal only then too;
                             a rolling update replaces the highest out-of-date pod, then waits
    Parallel                 create and delete every ordinal at once (updates still one by one)

A pod that Failed or Succeeded is deleted and made again under the same name. Events come "From
statefulset-controller", worded as Kubernetes words them:

    Normal  SuccessfulCreate  create Claim www-web-0 Pod web-0 in StatefulSet web success
    Normal  SuccessfulCreate  create Pod web-0 in StatefulSet web successful
    Normal  SuccessfulDelete  delete Pod web-2 in StatefulSet web successful
"""

from __future__ import annotations

import copy
import logging
import re
from typing import Any

from api import errors
from api.labels import from_label_selector
from client import NORMAL, WARNING, meta_namespace_key
from client.informer import index_by_owner_uid
from controller_manager.controller import Controller
from controller_manager.controllers import history
from controller_manager.controllers.controller_ref_manager import (
    ControllerRefManager,
    controller_of,
    owner_reference,
    recheck_owner,
)
from controller_manager.controllers.daemonset_util import REVISION_HASH
from controller_manager.controllers.deployment_util import semantically_equal
from controller_manager.controllers.pod_util import is_available, is_ready

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]
RESOURCE = "statefulsets.apps"
OWNER_INDEX = "owner-uid"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def ordinal(set_name: str, pod: Obj) -> int | None:
    m = re.fullmatch(re.escape(set_name) + r"-(\d+)", pod["metadata"]["name"])
    return int(m.group(1)) if m else None


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _running_and_ready(pod: Obj) -> bool:
    return _phase(pod) == "Running" and is_ready(pod) and not pod["metadata"].get("deletionTimestamp")


def claim_name(template: Obj, pod_name: str) -> str:
    return f"{template['metadata']['name']}-{pod_name}"


class StatefulSetController(Controller):
    name = "statefulset"
    component = "statefulset-controller"

    def setup(self) -> None:
        f = self.ctx.informers
        self.sets = f.informer_for(RESOURCE)
        self.pods = f.informer_for("pods")
        self.revisions = f.informer_for(history.RESOURCE)
        self.claims = f.informer_for("persistentvolumeclaims")
        self.pods.add_indexers({OWNER_INDEX: index_by_owner_uid})
        self.sets.add_event_handler(self.enqueue, lambda _o, new: self.enqueue(new))
        self.pods.add_event_handler(self._pod_event, lambda _o, new: self._pod_event(new), self._pod_event)

    def _pod_event(self, pod: Obj) -> None:
        ref = controller_of(pod)
        if ref is not None and ref.get("kind") == "StatefulSet":
            self.enqueue(f"{pod['metadata'].get('namespace')}/{ref.get('name')}")

    # ------------------------------------------------------------------ the reconcile
    async def reconcile(self, key: str) -> None:
        sts = self.sets.get(key)
        if sts is None:
            return
        md, spec = sts["metadata"], sts.get("spec") or {}
        selector = from_label_selector(spec.get("selector"))
        candidates = {meta_namespace_key(p): p for p in self.pods.by_index(OWNER_INDEX, md["uid"])}
        for p in self.pods.by_index("namespace", md["namespace"]):
            if controller_of(p) is None and selector.matches(p["metadata"].get("labels") or {}):
                candidates.setdefault(meta_namespace_key(p), p)
        refs = ControllerRefManager(self.client, "pods", sts, selector, recheck_owner(self.client, RESOURCE, sts))
        pods = await refs.claim(list(candidates.values()))
        revisions = history.owned_revisions(sts, self.revisions.by_index("namespace", md["namespace"]))
        hash_, _ = await history.ensure_current(self.client, sts, revisions)
        update_revision = f"{md['name']}-{hash_}"
        status = sts.get("status") or {}
        current_revision = status.get("currentRevision") or update_revision

        by_ordinal: dict[int, Obj] = {}
        for p in pods:
            i = ordinal(md["name"], p)
            if i is not None:
                by_ordinal[i] = p
        if not md.get("deletionTimestamp"):
            await self._claim_owners(sts, by_ordinal)  # before any pod goes: its claim may go with it
            await self._step(sts, by_ordinal, current_revision, update_revision)
        await self._update_status(sts, by_ordinal, current_revision, update_revision)
        prefix = f"{md['name']}-"
        labels = [(p["metadata"].get("labels") or {}).get(REVISION_HASH) for p in pods]
        keep = {str(v).removeprefix(prefix) for v in labels if v} | {hash_, current_revision.removeprefix(prefix)}
        await history.truncate(self.client, sts, revisions, keep)

    async def _step(self, sts: Obj, pods: dict[int, Obj], current: str, update: str) -> None:
        """Make progress: create, replace or delete pods as far as the pod management policy allows."""
        spec = sts.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        parallel = spec.get("podManagementPolicy") == "Parallel"
        strategy = spec.get("updateStrategy") or {}
        partition = int(((strategy.get("rollingUpdate") or {}).get("partition")) or 0)

        def wanted_revision(i: int) -> str:
            if strategy.get("type") == "OnDelete" or i < partition:
                existing = pods.get(i)
                if existing is not None:
                    return str((existing["metadata"].get("labels") or {}).get(REVISION_HASH) or current)
                return current if i < partition else update
            return update

        # 1. Replace finished pods; create missing ordinals (in order unless Parallel).
        for i in range(replicas):
            pod = pods.get(i)
            if (
                pod is not None
                and _phase(pod) in ("Failed", "Succeeded")
                and not pod["metadata"].get("deletionTimestamp")
            ):
                await self._delete(sts, pod)
                return
            if pod is None:
                await self._create(sts, i, wanted_revision(i))
                if not parallel:
                    return
            elif not parallel and not _running_and_ready(pod):
                return  # OrderedReady: nothing further until this one is Running and Ready
        # 2. Scale down from the highest ordinal.
        surplus = sorted((i for i in pods if i >= replicas), reverse=True)
        for i in surplus:
            if not parallel and not all(_running_and_ready(p) for j, p in pods.items() if j < replicas):
                return
            if not pods[i]["metadata"].get("deletionTimestamp"):
                await self._delete(sts, pods[i])
            if not parallel:
                return
        if surplus and not parallel:
            return
        # 3. Rolling update: the highest out-of-date ordinal at or above the partition, one at a time.
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        if not all(_running_and_ready(pods[i]) for i in range(replicas) if i in pods):
            return
        for i in sorted((i for i in pods if partition <= i < replicas), reverse=True):
            if (pods[i]["metadata"].get("labels") or {}).get(REVISION_HASH) != update:
                await self._delete(sts, pods[i])
                return

    async def _create(self, sts: Obj, i: int, revision: str) -> None:
        md, spec = sts["metadata"], sts.get("spec") or {}
        template = self._template_for(sts, revision)
        tmd = template.get("metadata") or {}
        name = f"{md['name']}-{i}"
        pod_spec = copy.deepcopy(template.get("spec") or {})
        pod_spec["hostname"] = name
        if spec.get("serviceName"):
            pod_spec["subdomain"] = spec["serviceName"]
        await self._ensure_claims(sts, name, pod_spec)
        labels = {**(tmd.get("labels") or {}), REVISION_HASH: revision, POD_NAME_LABEL: name, POD_INDEX_LABEL: str(i)}
        pod_md: Obj = {
            "name": name,
            "namespace": md["namespace"],
            "labels": labels,
            "ownerReferences": [owner_reference(sts)],
        }
        if tmd.get("annotations"):
            pod_md["annotations"] = dict(tmd["annotations"])
        try:
            await self.client.create(
                "pods", {"apiVersion": "v1", "kind": "Pod", "metadata": pod_md, "spec": pod_spec}, md["namespace"]
            )
        except errors.AlreadyExistsError:
            return  # the cache is behind: it is there
        except errors.StatusError as exc:
            self.recorder.event(
                sts, WARNING, "FailedCreate", f"create Pod {name} in StatefulSet {md['name']} failed error: {exc}"
            )
            raise
        self.recorder.event(
            sts, NORMAL, "SuccessfulCreate", f"create Pod {name} in StatefulSet {md['name']} successful"
        )

    def _template_for(self, sts: Obj, revision: str) -> Obj:
        """The pod template of `revision`: the set's own, or an older one from its ControllerRevision."""
        template = (sts.get("spec") or {}).get("template") or {}
        if revision == f"{sts['metadata']['name']}-{history.template_hash(sts)}":
            return template
        rev = self.revisions.get(f"{sts['metadata']['namespace']}/{revision}")
        old = (((rev or {}).get("data") or {}).get("spec") or {}).get("template")
        if not old:
            return template
        return {k: v for k, v in old.items() if k != "$patch"}

    async def _ensure_claims(self, sts: Obj, pod_name: str, pod_spec: Obj) -> None:
        """One claim per volumeClaimTemplate, made before the pod and mounted by it; kept afterwards."""
        md, spec = sts["metadata"], sts.get("spec") or {}
        volumes: list[Obj] = pod_spec.setdefault("volumes", [])
        match_labels = ((spec.get("selector") or {}).get("matchLabels")) or {}
        for template in spec.get("volumeClaimTemplates") or []:
            claim = claim_name(template, pod_name)
            volumes[:] = [v for v in volumes if v.get("name") != template["metadata"]["name"]]
            volumes.append({"name": template["metadata"]["name"], "persistentVolumeClaim": {"claimName": claim}})
            if self.claims.get(f"{md['namespace']}/{claim}") is not None:
                continue
            body = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": claim, "namespace": md["namespace"],
                                 "labels": {**(template["metadata"].get("labels") or {}), **match_labels}},
                    "spec": copy.deepcopy(template.get("spec") or {})}  # fmt: skip
            try:
                await self.client.create("persistentvolumeclaims", body, md["namespace"])
            except errors.AlreadyExistsError:
                continue
            self.recorder.event(sts, NORMAL, "SuccessfulCreate",
                                f"create Claim {claim} Pod {pod_name} in StatefulSet {md['name']} success")  # fmt: skip

    async def _claim_owners(self, sts: Obj, pods: dict[int, Obj]) -> None:
        """`persistentVolumeClaimRetentionPolicy`, kept as Kubernetes keeps it, with ownerReferences
        the garbage collector acts on: `whenDeleted: Delete` makes the set an owner of every claim
        (they go with the set); `whenScaled: Delete` makes a surplus pod (ordinal ≥ replicas) the
        owner of its claims before the pod is deleted (they go with it), and takes that back if the
        set grows again first. `Retain` (the default) keeps claims owner-free: they outlive both."""
        md, spec = sts["metadata"], sts.get("spec") or {}
        templates = spec.get("volumeClaimTemplates") or []
        policy = spec.get("persistentVolumeClaimRetentionPolicy") or {}
        replicas = int(spec.get("replicas", 1))
        ordinals = set(pods) | set(range(replicas))
        by_claim = {claim_name(t, f"{md['name']}-{i}"): i for t in templates for i in ordinals}
        set_ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": md["name"], "uid": md["uid"]}
        for claim in self.claims.by_index("namespace", md["namespace"]) if templates else []:
            cmd = claim["metadata"]
            i = by_claim.get(cmd["name"])
            if i is None or cmd.get("deletionTimestamp"):
                continue
            pod_name = f"{md['name']}-{i}"
            ours = {md["uid"]} | {r.get("uid") for r in cmd.get("ownerReferences") or []
                                  if r.get("kind") == "Pod" and r.get("name") == pod_name}  # fmt: skip
            refs = [r for r in cmd.get("ownerReferences") or [] if r.get("uid") not in ours]
            pod = pods.get(i)
            if policy.get("whenScaled") == "Delete" and i >= replicas and pod is not None:
                # the pod alone: the garbage collector deletes a claim only once all its owners are gone
                refs.append({"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod["metadata"]["uid"]})
            elif policy.get("whenDeleted") == "Delete":
                refs.append(set_ref)
            if refs != (cmd.get("ownerReferences") or []):
                patch = {"metadata": {"ownerReferences": refs or None}}
                try:
                    await self.client.patch("persistentvolumeclaims", cmd["name"], patch, md["namespace"])
                except errors.NotFoundError:
                    pass

    async def _delete(self, sts: Obj, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        try:
            await self.client.delete("pods", name, pod["metadata"]["namespace"])
        except errors.NotFoundError:
            return
        self.recorder.event(
            sts, NORMAL, "SuccessfulDelete", f"delete Pod {name} in StatefulSet {sts['metadata']['name']} successful"
        )

    # ------------------------------------------------------------------ status
    async def _update_status(self, sts: Obj, pods: dict[int, Obj], current: str, update: str) -> None:
        spec = sts.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        min_ready = int(spec.get("minReadySeconds") or 0)
        live = [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")]

        def rev(p: Obj) -> str:
            return str((p["metadata"].get("labels") or {}).get(REVISION_HASH) or "")

        updated = sum(1 for p in live if rev(p) == update)
        status: Obj = {
            **(sts.get("status") or {}),
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": len(live),
            "readyReplicas": sum(1 for p in live if is_ready(p)),
            "availableReplicas": sum(1 for p in live if is_available(p, min_ready)),
            "currentReplicas": sum(1 for p in live if rev(p) == current),
            "updatedReplicas": updated,
            "currentRevision": current,
            "updateRevision": update,
            "collisionCount": (sts.get("status") or {}).get("collisionCount", 0),
        }
        all_updated = updated == replicas and len(live) == replicas and all(_running_and_ready(p) for p in live)
        if all_updated:  # the rollout is complete: the update revision becomes the current one
            status["currentRevision"] = update
            status["currentReplicas"] = updated
        for zero_omitted in ("readyReplicas", "availableReplicas", "currentReplicas", "updatedReplicas"):
            if not status[zero_omitted]:
                status.pop(zero_omitted)
        if semantically_equal(sts.get("status") or {}, status):
            return
        try:
            await self.client.update_status(RESOURCE, {**sts, "status": status})
        except errors.NotFoundError:
            pass
