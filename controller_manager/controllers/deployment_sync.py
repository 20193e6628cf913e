"""The Deployment controller's building blocks: find or create the new ReplicaSet, scale ReplicaSets,
write status, clean up old revisions. deployment_rolling.py composes them into rollouts.

A Deployment never touches pods. It owns ReplicaSets — one per template version — and only ever
changes their `spec.replicas` (and annotations); each ReplicaSet's own controller makes the pods.
Every number the Deployment reports (`updatedReplicas`, `availableReplicas`, …) is a sum over its
ReplicaSets' status, so the Deployment is a controller of controllers.

Writes are guarded: a ReplicaSet is scaled with a JSON patch that first *tests* the replica count
the decision was based on. If the cache was behind (say, this controller scaled it a moment ago and
the informer has not shown that yet), the test fails, the sync is retried on a fresh cache, and no
decision is ever made twice on stale numbers.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from typing import Any

from api.errors import AlreadyExistsError, ConflictError, NotFoundError
from client import NORMAL, WARNING, EventRecorder, RESTClient, meta_namespace_key
from controller_manager.controllers import deployment_util as du
from controller_manager.controllers.controller_ref_manager import controller_of, owner_reference

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]
RS = "replicasets.apps"
DEPLOY = "deployments.apps"


def _replace(target: Obj, new: Obj) -> None:
    """Refresh a working copy in place, so every list that holds it sees the new version."""
    target.clear()
    target.update(new)


class DeploymentSyncMixin:
    client: RESTClient
    recorder: EventRecorder

    enqueue_after: Callable[[str, float], None]  # provided by Controller

    # ------------------------------------------------------------------ writes
    async def update_deployment_status(self, d: Obj, status: Obj) -> None:
        body = {k: v for k, v in d.items() if k != "status"}
        body["status"] = status
        _replace(d, await self.client.update_status(DEPLOY, body))

    async def set_deployment_revision(self, d: Obj, rev: str) -> None:
        """The revision annotation lives in metadata, which `/status` does not write: PATCH it."""
        if du.annotations_of(d).get(du.REVISION) == rev:
            return
        meta = d["metadata"]
        patch = {"metadata": {"annotations": {du.REVISION: rev}}}
        status = copy.deepcopy(d.get("status") or {})
        _replace(d, await self.client.patch(DEPLOY, meta["name"], patch, meta.get("namespace")))
        d["status"] = status  # keep our working status (the caller may be about to write it)

    async def write_rs(self, rs: Obj, new_replicas: int) -> None:
        """Set spec.replicas and the annotations, on the condition that replicas is still what we read."""
        meta = rs["metadata"]
        ops = [
            {"op": "test", "path": "/spec/replicas", "value": int((rs.get("spec") or {}).get("replicas", 1))},
            {"op": "replace", "path": "/spec/replicas", "value": new_replicas},
            {"op": "add", "path": "/metadata/annotations", "value": du.annotations_of(rs)},
        ]
        try:
            _replace(rs, await self.client.patch(RS, meta["name"], ops, meta.get("namespace"), patch_type="json"))
        except NotFoundError as exc:
            raise ConflictError(f"replica set {meta['name']} is gone") from exc

    # ------------------------------------------------------------------ new and old replica sets
    async def get_all_replica_sets(self, d: Obj, rs_list: list[Obj], create: bool) -> tuple[Obj | None, list[Obj]]:
        """(new ReplicaSet or None, old ones). Brings the new one's revision and annotations up to
        date, and the Deployment's revision with it; creates the new one when `create`."""
        new_rs = du.find_new_replica_set(d, rs_list)
        old = [rs for rs in rs_list if rs is not new_rs]
        new_rs = await self.get_new_replica_set(d, new_rs, old, create)
        return new_rs, old

    async def get_new_replica_set(self, d: Obj, existing: Obj | None, old: list[Obj], create: bool) -> Obj | None:
        new_revision = du.max_revision(old) + 1
        min_ready = int(d["spec"].get("minReadySeconds") or 0)
        status = copy.deepcopy(d.get("status") or {})
        if existing is not None:
            rs_copy = copy.deepcopy(existing)
            changed = du.set_new_rs_annotations(d, rs_copy, new_revision, exists=True)
            if changed or int(rs_copy["spec"].get("minReadySeconds") or 0) != min_ready:
                rs_copy["spec"]["minReadySeconds"] = min_ready
                _replace(existing, await self.client.update(RS, rs_copy))
            await self.set_deployment_revision(d, du.annotations_of(existing).get(du.REVISION, ""))
            if du.has_progress_deadline(d) and du.get_condition(status, du.PROGRESSING) is None:
                msg = f'Found new replica set "{existing["metadata"]["name"]}"'
                du.set_condition(status, du.new_condition(du.PROGRESSING, "True", du.FOUND_NEW_RS, msg))
                await self.update_deployment_status(d, status)
            return existing
        if not create:
            return None

        # A new template: a new ReplicaSet, named after the template's hash.
        spec, meta = d["spec"], d["metadata"]
        template_hash = du.compute_hash(spec["template"], status.get("collisionCount"))
        template = copy.deepcopy(spec["template"])
        template.setdefault("metadata", {}).setdefault("labels", {})[du.POD_TEMPLATE_HASH] = template_hash
        selector = copy.deepcopy(spec["selector"])
        selector.setdefault("matchLabels", {})[du.POD_TEMPLATE_HASH] = template_hash
        new_rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{template_hash}",
                "namespace": meta.get("namespace"),
                "labels": dict(template["metadata"]["labels"]),
                "ownerReferences": [owner_reference(d)],
            },
            "spec": {"replicas": 0, "minReadySeconds": min_ready, "selector": selector, "template": template},
        }
        new_replicas = du.new_rs_new_replicas(d, [*old, new_rs], new_rs)
        new_rs["spec"]["replicas"] = new_replicas
        du.set_new_rs_annotations(d, new_rs, new_revision, exists=False)
        already_exists = False
        try:
            created = await self.client.create(RS, new_rs, meta.get("namespace"))
        except AlreadyExistsError:
            found = await self.client.get(RS, new_rs["metadata"]["name"], meta.get("namespace"))
            ref = controller_of(found)
            if (
                ref
                and ref.get("uid") == meta["uid"]
                and du.equal_ignore_hash(found["spec"]["template"], spec["template"])
            ):
                created, already_exists = found, True  # ours; the cache had not shown it yet
            else:
                # Someone else's ReplicaSet has our name: change the hash and try again.
                status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
                await self.update_deployment_status(d, status)
                raise ConflictError(f"hash collision for ReplicaSet {new_rs['metadata']['name']}") from None
        except Exception as exc:
            msg = f'Failed to create new replica set "{new_rs["metadata"]["name"]}": {exc}'
            self.recorder.event(d, WARNING, "FailedCreate", msg)
            if du.has_progress_deadline(d):
                du.set_condition(status, du.new_condition(du.PROGRESSING, "False", du.FAILED_RS_CREATE, msg))
                await self.update_deployment_status(d, status)
            raise
        if not already_exists and new_replicas > 0:
            self.recorder.event(
                d, NORMAL, "ScalingReplicaSet", f"Scaled up replica set {created['metadata']['name']} to {new_replicas}"
            )
        await self.set_deployment_revision(d, str(new_revision))
        if not already_exists and du.has_progress_deadline(d):
            msg = f'Created new replica set "{created["metadata"]["name"]}"'
            du.set_condition(status, du.new_condition(du.PROGRESSING, "True", du.NEW_RS_CREATED, msg))
            await self.update_deployment_status(d, status)
        return created

    # ------------------------------------------------------------------ scaling
    async def scale_replica_set(self, rs: Obj, new_scale: int, d: Obj) -> bool:
        """Scale `rs` (and refresh its replica annotations); True if the size changed."""
        old_scale = du.replicas(rs)
        size_changed = old_scale != new_scale
        rs_copy = copy.deepcopy(rs)
        annotations_changed = du.set_replicas_annotations(rs_copy, du.replicas(d), du.replicas(d) + du.max_surge(d))
        if not (size_changed or annotations_changed):
            return False
        await self.write_rs(rs_copy, new_scale)  # tests that replicas is still old_scale
        _replace(rs, rs_copy)
        if size_changed:
            direction = "up" if new_scale > old_scale else "down"
            self.recorder.event(
                d, NORMAL, "ScalingReplicaSet",
                f"Scaled {direction} replica set {rs['metadata']['name']} to {new_scale} from {old_scale}",
            )  # fmt: skip
        return size_changed

    async def scale(self, d: Obj, new_rs: Obj | None, old: list[Obj]) -> None:
        """Bring the ReplicaSets' sizes in line with a changed `replicas` (kubectl scale, HPA),
        spreading an increase or decrease over the active ReplicaSets in proportion to their size."""
        want = du.replicas(d)
        actives = du.active([new_rs, *old])
        if len(actives) <= 1:
            target = actives[0] if actives else (new_rs or (sorted(old, key=du.by_creation)[-1] if old else None))
            if target is not None and du.replicas(target) != want:
                await self.scale_replica_set(target, want, d)
            return
        if new_rs is not None and self.is_saturated(d, new_rs):
            for rs in du.active(old):
                await self.scale_replica_set(rs, 0, d)
            return
        if not du.is_rolling(d):
            return
        allowed = want + du.max_surge(d) if want > 0 else 0
        to_add = allowed - du.total_replicas(actives)
        if to_add > 0:  # largest first, newer first among equals
            actives.sort(key=lambda rs: (-du.replicas(rs), -du.by_creation(rs)[0]))
        else:  # largest first, older first among equals
            actives.sort(key=lambda rs: (-du.replicas(rs), du.by_creation(rs)[0]))
        sizes: dict[str, int] = {}
        added = 0
        for rs in actives:
            proportion = self._proportion(rs, d, to_add, added) if to_add else 0
            sizes[rs["metadata"]["name"]] = du.replicas(rs) + proportion
            added += proportion
        if to_add != added:  # rounding leftovers go to the largest
            first = actives[0]["metadata"]["name"]
            sizes[first] = max(sizes[first] + to_add - added, 0)
        for rs in actives:
            await self.scale_replica_set(rs, sizes[rs["metadata"]["name"]], d)

    @staticmethod
    def _proportion(rs: Obj, d: Obj, to_add: int, added: int) -> int:
        if du.replicas(rs) == 0 or to_add == added:
            return 0
        want = du.replicas(d)
        if want == 0:
            fraction = -du.replicas(rs)
        else:
            try:
                annotated = int(du.annotations_of(rs).get(du.MAX_REPLICAS, ""))
            except ValueError:
                annotated = du.status_of(d, "replicas")
            target = du.replicas(rs) * (want + du.max_surge(d)) / annotated if annotated else du.replicas(rs)
            fraction = int(target + 0.5) - du.replicas(rs)
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    @staticmethod
    def is_saturated(d: Obj, rs: Obj) -> bool:
        want = du.replicas(d)
        return (
            du.replicas(rs) == want
            and du.annotations_of(rs).get(du.DESIRED_REPLICAS) == str(want)
            and du.status_of(rs, "availableReplicas") == want
        )

    # ------------------------------------------------------------------ status
    def calculate_status(self, all_rss: list[Obj | None], new_rs: Obj | None, d: Obj) -> Obj:
        available = du.total_status(all_rss, "availableReplicas")
        status: Obj = {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": du.total_status(all_rss, "replicas"),
            "updatedReplicas": du.total_status([new_rs], "replicas"),
            "readyReplicas": du.total_status(all_rss, "readyReplicas"),
            "availableReplicas": available,
            "unavailableReplicas": max(du.total_replicas(all_rss) - available, 0),
        }
        old = d.get("status") or {}
        if old.get("collisionCount") is not None:
            status["collisionCount"] = old["collisionCount"]
        if old.get("conditions"):
            status["conditions"] = copy.deepcopy(old["conditions"])
        if available >= du.replicas(d) - du.max_unavailable(d):
            cond = du.new_condition(
                du.AVAILABLE, "True", du.MIN_REPLICAS_AVAILABLE, "Deployment has minimum availability."
            )
        else:
            cond = du.new_condition(
                du.AVAILABLE, "False", du.MIN_REPLICAS_UNAVAILABLE, "Deployment does not have minimum availability."
            )
        du.set_condition(status, cond)
        return status

    async def sync_deployment_status(self, all_rss: list[Obj | None], new_rs: Obj | None, d: Obj) -> None:
        status = self.calculate_status(all_rss, new_rs, d)
        if not du.semantically_equal(d.get("status") or {}, status):
            await self.update_deployment_status(d, status)

    async def sync_rollout_status(self, all_rss: list[Obj | None], new_rs: Obj | None, d: Obj) -> None:
        """Status plus the Progressing condition: progressing, complete, or past its deadline."""
        status = self.calculate_status(all_rss, new_rs, d)
        if not du.has_progress_deadline(d):
            du.remove_condition(status, du.PROGRESSING)
        current = du.get_condition(d.get("status") or {}, du.PROGRESSING)
        complete = (
            status["replicas"] == status["updatedReplicas"]
            and current is not None
            and current.get("reason") == du.NEW_RS_AVAILABLE
        )
        what = f'ReplicaSet "{new_rs["metadata"]["name"]}"' if new_rs else f'Deployment "{d["metadata"]["name"]}"'
        if du.has_progress_deadline(d) and not complete:
            if du.deployment_complete(d, status):
                msg = f"{what} has successfully progressed."
                du.set_condition(status, du.new_condition(du.PROGRESSING, "True", du.NEW_RS_AVAILABLE, msg))
            elif du.deployment_progressing(d, status):
                cond = du.new_condition(du.PROGRESSING, "True", du.RS_UPDATED, f"{what} is progressing.")
                if current is not None:
                    if current.get("status") == "True":
                        cond["lastTransitionTime"] = current.get("lastTransitionTime", cond["lastTransitionTime"])
                    du.remove_condition(status, du.PROGRESSING)
                du.set_condition(status, cond)
            elif du.deployment_timed_out(d, status, time.time()):
                msg = f"{what} has timed out progressing."
                du.set_condition(status, du.new_condition(du.PROGRESSING, "False", du.TIMED_OUT, msg))
        failures = [
            c for rs in ([new_rs] if new_rs else []) + [r for r in all_rss if r is not None and r is not new_rs]
            for c in (rs.get("status") or {}).get("conditions") or [] if c.get("type") == "ReplicaFailure"
        ]  # fmt: skip
        if failures:
            f = failures[0]
            du.set_condition(
                status,
                du.new_condition(
                    du.REPLICA_FAILURE, f.get("status", "True"), f.get("reason", ""), f.get("message", "")
                ),
            )
        else:
            du.remove_condition(status, du.REPLICA_FAILURE)
        if du.semantically_equal(d.get("status") or {}, status):
            self.requeue_stuck(d, status)
            return
        await self.update_deployment_status(d, status)

    def requeue_stuck(self, d: Obj, status: Obj) -> None:
        """Nothing changed: if a deadline is running, look again just after it would pass."""
        cond = du.get_condition(status, du.PROGRESSING)
        if not du.has_progress_deadline(d) or cond is None or du.deployment_complete(d, status):
            return
        if cond.get("reason") == du.TIMED_OUT:
            return
        due = du.parse_time(cond.get("lastUpdateTime")) + int(d["spec"]["progressDeadlineSeconds"]) - time.time()
        self.enqueue_after(meta_namespace_key(d), max(due, 0.0) + 1.0)

    # ------------------------------------------------------------------ history
    async def cleanup(self, old: list[Obj], d: Obj) -> None:
        """Delete the oldest zero-sized ReplicaSets beyond revisionHistoryLimit."""
        limit = d["spec"].get("revisionHistoryLimit")
        if limit is None:
            return
        alive = [rs for rs in old if not rs["metadata"].get("deletionTimestamp")]
        excess = len(alive) - int(limit)
        if excess <= 0:
            return
        alive.sort(key=lambda rs: (du.revision(rs), du.by_creation(rs)))
        for rs in alive[:excess]:
            meta = rs["metadata"]
            if (
                du.status_of(rs, "replicas") != 0
                or du.replicas(rs) != 0
                or int(meta.get("generation") or 0) > du.status_of(rs, "observedGeneration")
            ):
                continue  # still has (or may have) pods
            try:
                await self.client.delete(RS, meta["name"], meta.get("namespace"))
            except NotFoundError:
                pass
