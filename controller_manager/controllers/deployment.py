"""DeploymentController: declarative updates of pods, by way of ReplicaSets.

Desired state: `spec.replicas` available pods made from `spec.template`, reached by the strategy
in `spec.strategy` (RollingUpdate within maxSurge/maxUnavailable, or Recreate), with old
templates kept as scaled-down ReplicaSets up to `revisionHistoryLimit`.
Current state: the ReplicaSets this Deployment controls (ownerReferences, adopting orphans that
match its selector) and their status, summed up.
What it does about the difference: one rollout step per sync — create the ReplicaSet for a new
template, or scale the new one up / old ones down within the bounds — and report status with the
conditions `kubectl rollout status` waits on (Available, Progressing, ReplicaFailure).

    Deployment nginx-deployment ──owns──▶ ReplicaSet nginx-deployment-66b6c48dd5 ──owns──▶ pods
                                 └─owns──▶ ReplicaSet nginx-deployment-5d59d67564 (old, 0 replicas)

It watches Deployments, ReplicaSets (a change to a ReplicaSet wakes the Deployment that controls
it) and pod deletions (Recreate waits for the old pods to be really gone), and resyncs every
Deployment each --deployment-controller-sync-period, so a progress deadline is noticed even when
nothing else happens. The steps themselves are in deployment_rolling.py and deployment_sync.py;
the arithmetic and the names in deployment_util.py. Events come "From deployment-controller":

    Normal  ScalingReplicaSet  Scaled up replica set redis-bb7894d65 to 1
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from api.labels import from_label_selector
from client import WARNING, index_by_owner_uid, meta_namespace_key
from controller_manager.controller import Controller
from controller_manager.controllers.controller_ref_manager import ControllerRefManager, controller_of, recheck_owner
from controller_manager.controllers.deployment_rolling import RolloutMixin
from controller_manager.controllers.deployment_sync import DEPLOY, RS
from controller_manager.controllers.replica_manager import OWNER_INDEX

Obj = dict[str, Any]


class DeploymentController(RolloutMixin, Controller):
    name = "deployment"
    component = "deployment-controller"

    def setup(self) -> None:
        informers = self.ctx.informers
        self.deployments = informers.informer_for(DEPLOY)
        self.replica_sets = informers.informer_for(RS)
        self.pods = informers.informer_for("pods")
        self.replica_sets.add_indexers({OWNER_INDEX: index_by_owner_uid})
        self.pods.add_indexers({OWNER_INDEX: index_by_owner_uid})
        self.deployments.add_event_handler(self.enqueue, lambda _o, n: self.enqueue(n), self.enqueue)
        self.replica_sets.add_event_handler(self._rs_added, self._rs_updated, self._rs_deleted)
        self.pods.add_event_handler(on_delete=self._pod_deleted)

    def resync(self) -> tuple[float, Callable[[], Iterable[Obj]]]:
        return self.ctx.options.deployment_controller_sync_period, self.deployments.list

    # ------------------------------------------------------------------ ReplicaSets and pods → Deployment keys
    def _owner(self, obj: Obj, ref: Obj | None) -> Obj | None:
        if ref is None or ref.get("kind") != "Deployment":
            return None
        d = self.deployments.get(f"{obj['metadata'].get('namespace')}/{ref.get('name')}")
        return d if d is not None and d["metadata"].get("uid") == ref.get("uid") else None

    def _deployments_matching(self, rs: Obj) -> list[Obj]:
        meta = rs.get("metadata") or {}
        labels = meta.get("labels") or {}
        out = []
        for d in self.deployments.by_index("namespace", meta.get("namespace") or ""):
            sel = from_label_selector((d.get("spec") or {}).get("selector"))
            if not sel.empty and sel.matches(labels):
                out.append(d)
        return out

    def _rs_added(self, rs: Obj) -> None:
        if rs["metadata"].get("deletionTimestamp"):
            self._rs_deleted(rs)
            return
        ref = controller_of(rs)
        if ref is not None:
            d = self._owner(rs, ref)
            if d is not None:
                self.enqueue(d)
            return
        for d in self._deployments_matching(rs):
            self.enqueue(d)

    def _rs_updated(self, old: Obj, new: Obj) -> None:
        old_ref, new_ref = controller_of(old), controller_of(new)
        if old_ref != new_ref and old_ref is not None:
            d = self._owner(old, old_ref)
            if d is not None:
                self.enqueue(d)
        if new_ref is not None:
            d = self._owner(new, new_ref)
            if d is not None:
                self.enqueue(d)
            return
        if old_ref != new_ref or (old["metadata"].get("labels") != new["metadata"].get("labels")):
            for d in self._deployments_matching(new):
                self.enqueue(d)

    def _rs_deleted(self, rs: Obj) -> None:
        d = self._owner(rs, controller_of(rs))
        if d is not None:
            self.enqueue(d)

    def _pod_deleted(self, pod: Obj) -> None:
        """Recreate waits until old pods are gone: their deletion is the signal."""
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        rs = self.replica_sets.get(f"{pod['metadata'].get('namespace')}/{ref.get('name')}")
        if rs is None:
            return
        d = self._owner(rs, controller_of(rs))
        if d is not None and ((d.get("spec") or {}).get("strategy") or {}).get("type") == "Recreate":
            self.enqueue(d)

    # ------------------------------------------------------------------ the reconcile
    async def reconcile(self, key: str) -> None:
        cached = self.deployments.get(key)
        if cached is None:
            return
        d = copy.deepcopy(cached)
        selector = from_label_selector(d["spec"].get("selector"))
        if selector.empty:
            self.recorder.event(
                d, WARNING, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required."
            )
            status = dict(d.get("status") or {})
            if int(status.get("observedGeneration") or 0) < int(d["metadata"].get("generation") or 0):
                status["observedGeneration"] = d["metadata"]["generation"]
                await self.update_deployment_status(d, status)
            return
        rs_list = await self.replica_sets_for(d, selector)
        if d["metadata"].get("deletionTimestamp"):
            new_rs, old = await self.get_all_replica_sets(d, rs_list, create=False)
            await self.sync_deployment_status([*old, new_rs], new_rs, d)
            return
        await self.check_paused_conditions(d)
        if d["spec"].get("paused"):
            await self.sync(d, rs_list)
            return
        if await self.is_scaling_event(d, rs_list):
            await self.sync(d, rs_list)
            return
        if (d["spec"].get("strategy") or {}).get("type") == "Recreate":
            pods_by_rs = {
                rs["metadata"]["uid"]: self.pods.by_index(OWNER_INDEX, rs["metadata"]["uid"]) for rs in rs_list
            }
            await self.rollout_recreate(d, rs_list, pods_by_rs)
        else:
            await self.rollout_rolling(d, rs_list)

    async def replica_sets_for(self, d: Obj, selector: Any) -> list[Obj]:
        """The ReplicaSets this Deployment controls, adopting and releasing by its selector.
        Working copies: the sync changes them as it writes."""
        meta = d["metadata"]
        candidates = {meta_namespace_key(rs): rs for rs in self.replica_sets.by_index(OWNER_INDEX, meta["uid"])}
        for rs in self.replica_sets.by_index("namespace", meta.get("namespace") or ""):
            if controller_of(rs) is None:
                candidates.setdefault(meta_namespace_key(rs), rs)
        refs = ControllerRefManager(self.client, RS, d, selector, recheck_owner(self.client, DEPLOY, d))
        return [copy.deepcopy(rs) for rs in await refs.claim(list(candidates.values()))]
