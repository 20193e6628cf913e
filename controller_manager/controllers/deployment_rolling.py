"""Rollouts: how a Deployment moves its pods from the old template to the new one.

RollingUpdate, one step per sync, each step bounded by two numbers (deployment_util.py):

    total pods  ≤ replicas + maxSurge        (scale the new ReplicaSet up only that far)
    available   ≥ replicas − maxUnavailable  (scale old ReplicaSets down only that far)

    replicas 4, maxSurge 1, maxUnavailable 0:   new 0→1 · wait for it to be available ·
    old 4→3 · new 1→2 · wait · old 3→2 · …      at no moment fewer than 4 available, more than 5 pods

Old ReplicaSets with unhealthy pods are shrunk first (losing a pod that is not available costs
no availability). When the rollout is complete, old ReplicaSets at zero beyond
revisionHistoryLimit are deleted; the others stay, for `kubectl rollout undo`.

Recreate: scale every old ReplicaSet to 0, wait until their pods are really gone, then create the
new ReplicaSet at full size. There is downtime, but two versions never run at once.

Paused: no rollout at all (template changes wait), but `replicas` changes are still applied, and
history is still cleaned up. A scaling event (replicas changed while several ReplicaSets are
active) is likewise handled by proportional scaling rather than by a rollout step.
"""

from __future__ import annotations

from typing import Any

from controller_manager.controllers import deployment_util as du
from controller_manager.controllers.deployment_sync import DeploymentSyncMixin

Obj = dict[str, Any]


class RolloutMixin(DeploymentSyncMixin):
    # ------------------------------------------------------------------ paused and scaling
    async def check_paused_conditions(self, d: Obj) -> None:
        """Progressing=Unknown while paused, so the progress deadline does not run out meanwhile."""
        if not du.has_progress_deadline(d):
            return
        status = dict(d.get("status") or {})
        cond = du.get_condition(status, du.PROGRESSING)
        paused = bool(d["spec"].get("paused"))
        reason = cond.get("reason") if cond else None
        if paused and reason != du.PAUSED:
            new = du.new_condition(du.PROGRESSING, "Unknown", du.PAUSED, "Deployment is paused")
        elif not paused and reason == du.PAUSED:
            new = du.new_condition(du.PROGRESSING, "Unknown", du.RESUMED, "Deployment is resumed")
        else:
            return
        du.set_condition(status, new)
        await self.update_deployment_status(d, status)

    async def is_scaling_event(self, d: Obj, rs_list: list[Obj]) -> bool:
        new_rs, old = await self.get_all_replica_sets(d, rs_list, create=False)
        for rs in du.active([new_rs, *old]):
            desired = du.annotations_of(rs).get(du.DESIRED_REPLICAS)
            if desired is not None and desired != str(du.replicas(d)):
                return True
        return False

    async def sync(self, d: Obj, rs_list: list[Obj]) -> None:
        """Scale only (paused Deployments and scaling events); no new ReplicaSet is created."""
        new_rs, old = await self.get_all_replica_sets(d, rs_list, create=False)
        await self.scale(d, new_rs, old)
        if d["spec"].get("paused"):
            await self.cleanup(old, d)
        await self.sync_deployment_status([*old, new_rs], new_rs, d)

    # ------------------------------------------------------------------ RollingUpdate
    async def rollout_rolling(self, d: Obj, rs_list: list[Obj]) -> None:
        new_rs, old = await self.get_all_replica_sets(d, rs_list, create=True)
        assert new_rs is not None
        all_rss: list[Obj | None] = [*old, new_rs]
        if await self.reconcile_new_replica_set(all_rss, new_rs, d):
            await self.sync_rollout_status(all_rss, new_rs, d)
            return
        if await self.reconcile_old_replica_sets(all_rss, du.active(list(old)), new_rs, d):
            await self.sync_rollout_status(all_rss, new_rs, d)
            return
        if du.deployment_complete(d, d.get("status") or {}):
            await self.cleanup(old, d)
        await self.sync_rollout_status(all_rss, new_rs, d)

    async def reconcile_new_replica_set(self, all_rss: list[Obj | None], new_rs: Obj, d: Obj) -> bool:
        want = du.replicas(d)
        if du.replicas(new_rs) == want:
            return False
        if du.replicas(new_rs) > want:
            return await self.scale_replica_set(new_rs, want, d)
        return await self.scale_replica_set(new_rs, du.new_rs_new_replicas(d, all_rss, new_rs), d)

    async def reconcile_old_replica_sets(self, all_rss: list[Obj | None], old: list[Obj], new_rs: Obj, d: Obj) -> bool:
        if du.total_replicas(list(old)) == 0:
            return False
        min_available = du.replicas(d) - du.max_unavailable(d)
        new_unavailable = du.replicas(new_rs) - du.status_of(new_rs, "availableReplicas")
        # Pods we may lose now: everything above the floor, minus new pods not available yet
        # (they will count against availability until they are).
        max_scaled_down = du.total_replicas(all_rss) - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        cleaned = await self.cleanup_unhealthy_replicas(old, d, max_scaled_down)
        scaled = await self.scale_down_old_for_rolling_update([*old, new_rs], old, d)
        return cleaned + scaled > 0

    async def cleanup_unhealthy_replicas(self, old: list[Obj], d: Obj, max_cleanup: int) -> int:
        """Shrink old ReplicaSets by their unavailable pods first: that costs no availability."""
        total = 0
        for rs in sorted(old, key=du.by_creation):
            if total >= max_cleanup:
                break
            size, available = du.replicas(rs), du.status_of(rs, "availableReplicas")
            if size == 0 or size <= available:
                # All its pods are available — or its status still counts pods from before a
                # scale-down that has not been observed yet: nothing unhealthy to remove.
                continue
            count = min(max_cleanup - total, size - available)
            await self.scale_replica_set(rs, size - count, d)
            total += count
        return total

    async def scale_down_old_for_rolling_update(self, all_rss: list[Obj | None], old: list[Obj], d: Obj) -> int:
        """Shrink old ReplicaSets by as many available pods as the availability floor allows."""
        min_available = du.replicas(d) - du.max_unavailable(d)
        available = du.total_status(all_rss, "availableReplicas")
        if available <= min_available:
            return 0
        budget, total = available - min_available, 0
        for rs in sorted(old, key=du.by_creation):
            if total >= budget:
                break
            if du.replicas(rs) == 0:
                continue
            count = min(du.replicas(rs), budget - total)
            await self.scale_replica_set(rs, du.replicas(rs) - count, d)
            total += count
        return total

    # ------------------------------------------------------------------ Recreate
    async def rollout_recreate(self, d: Obj, rs_list: list[Obj], pods_by_rs: dict[str, list[Obj]]) -> None:
        new_rs, old = await self.get_all_replica_sets(d, rs_list, create=False)
        all_rss: list[Obj | None] = [*old, new_rs]
        scaled_down = False
        for rs in du.active(list(old)):
            scaled_down = await self.scale_replica_set(rs, 0, d) or scaled_down
        if scaled_down:
            await self.sync_rollout_status(all_rss, new_rs, d)
            return
        if self.old_pods_running(new_rs, old, pods_by_rs):
            await self.sync_rollout_status(all_rss, new_rs, d)  # wait: the pod deletions wake us
            return
        if new_rs is None:
            new_rs, old = await self.get_all_replica_sets(d, rs_list, create=True)
            all_rss = [*old, new_rs]
        assert new_rs is not None
        await self.scale_replica_set(new_rs, du.replicas(d), d)
        if du.deployment_complete(d, d.get("status") or {}):
            await self.cleanup(old, d)
        await self.sync_rollout_status(all_rss, new_rs, d)

    @staticmethod
    def old_pods_running(new_rs: Obj | None, old: list[Obj], pods_by_rs: dict[str, list[Obj]]) -> bool:
        if du.total_status(list(old), "replicas") > 0:
            return True
        new_uid = new_rs["metadata"]["uid"] if new_rs else None
        for uid, pods in pods_by_rs.items():
            if uid == new_uid:
                continue
            for pod in pods:
                if (pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded"):
                    return True
        return False
