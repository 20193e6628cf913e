"""The replica manager: one implementation behind both ReplicationControllers and ReplicaSets.

Desired state: `spec.replicas` active pods that match `spec.selector` and are controlled by the
owner (an ownerReference with `controller: true`), each made from `spec.template`.
Current state: the pods in the informer cache that the owner controls, after adopting matching
orphans and releasing pods whose labels no longer match (see controller_ref_manager.py).
What it does about the difference: too few → create pods from the template (`<name>-xxxxx` via
generateName) in slow-start batches of 1, 2, 4, …; too many → delete the cheapest ones (see
pod_util.deletion_order). Either way it then writes `status` (replicas, fullyLabeledReplicas,
readyReplicas, availableReplicas, observedGeneration, a ReplicaFailure condition on errors)
through the `/status` subresource, which is what `kubectl get rc` prints as CURRENT and READY.

Two guards keep a burst from going wrong:
- *Expectations* (expectations.py): after asking for N creations or deletions, the owner does not
  count pods again until the informer has shown it those N changes (or 5 minutes pass), because
  until then the cache is known to be behind.
- *Slow start*: if the first pod fails (quota, a bad template), we find out after one request,
  not after 500; each successful batch doubles the next one. At most `burst_replicas` (500) pods
  are created or deleted per sync, like Kubernetes' BurstReplicas.

ReplicationController and ReplicaSet differ only in resource name, kind and selector type
(a plain map vs matchLabels/matchExpressions) — see replication.py and replicaset.py. Kubernetes
does the same: its ReplicationManager is the ReplicaSet controller behind a conversion.
"""

from __future__ import annotations

import abc
import asyncio
import copy
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from api.errors import ConflictError, ForbiddenError, NotFoundError
from api.labels import Selector
from api.timestamps import now_rfc3339
from client import NORMAL, WARNING, index_by_owner_uid, meta_namespace_key
from controller_manager.controller import Controller
from controller_manager.controllers.controller_ref_manager import (
    ControllerRefManager,
    controller_of,
    owner_reference,
    recheck_owner,
)
from controller_manager.controllers.deployment_util import semantically_equal
from controller_manager.controllers.expectations import ControllerExpectations
from controller_manager.controllers.pod_util import deletion_order, is_active, is_available, is_ready

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]

OWNER_INDEX = "ownerUid"  # pods by the uid of each ownerReference
ORPHAN_INDEX = "controllerlessByNamespace"  # pods without a controller ref, by namespace
BURST_REPLICAS = 500
SLOW_START_INITIAL_BATCH = 1


def orphans_by_namespace(pod: Obj) -> list[str]:
    return [] if controller_of(pod) else [(pod.get("metadata") or {}).get("namespace") or ""]


async def slow_start_batch(count: int, initial: int, fn: Callable[[], Awaitable[Any]]) -> tuple[int, Exception | None]:
    """Call `fn` `count` times in batches of initial, 2·initial, 4·initial, … (each batch at once);
    stop after the first batch with a failure. Returns (successes, first error)."""
    remaining, successes = count, 0
    batch = min(remaining, initial)
    while batch > 0:
        results = await asyncio.gather(*(fn() for _ in range(batch)), return_exceptions=True)
        errs = [r for r in results if isinstance(r, Exception)]
        successes += batch - len(errs)
        if errs:
            return successes, errs[0]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


MAX_INT32 = 2**31 - 1


def desired_replicas(owner: Obj) -> int | None:
    """`spec.replicas` (default 1) when it is a count Kubernetes could hold: an int32 >= 0.

    None for anything else (a number past int32, negative, a float, a string): the caller must
    not act on it.
    """
    value = (owner.get("spec") or {}).get("replicas", 1)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT32:
        return None
    return value


def _terminating_namespace(exc: Exception) -> bool:
    causes = (getattr(exc, "details", None) or {}).get("causes") or []
    return isinstance(exc, ForbiddenError) and (
        any(c.get("reason") == "NamespaceTerminating" for c in causes) or "being terminated" in str(exc)
    )


class ReplicaManager(Controller):
    resource: ClassVar[str]  # "replicationcontrollers" or "replicasets.apps"
    burst_replicas: ClassVar[int] = BURST_REPLICAS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.expectations = ControllerExpectations()

    @abc.abstractmethod
    def selector_of(self, owner: Obj) -> Selector:
        """The owner's pod selector."""

    # ------------------------------------------------------------------ informers → keys
    def setup(self) -> None:
        self.owners = self.ctx.informers.informer_for(self.resource)
        self.pods = self.ctx.informers.informer_for("pods")
        self.pods.add_indexers({OWNER_INDEX: index_by_owner_uid, ORPHAN_INDEX: orphans_by_namespace})
        self.owners.add_event_handler(self.enqueue, lambda _old, new: self.enqueue(new), self._owner_deleted)
        self.pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_deleted)

    def _owner_deleted(self, owner: Obj) -> None:
        self.expectations.delete(meta_namespace_key(owner))

    def _resolve(self, pod: Obj, ref: Obj | None) -> Obj | None:
        """The owner a controller ref points at, if it is one of ours and still the same object."""
        if ref is None or ref.get("kind") != self.owners.rt.kind:
            return None
        owner = self.owners.get(f"{pod['metadata'].get('namespace')}/{ref.get('name')}")
        if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
            return None
        return owner

    def _matching_owners(self, pod: Obj) -> list[Obj]:
        """Owners whose selector matches an orphan pod: candidates to adopt it."""
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        found = []
        for owner in self.owners.by_index("namespace", meta.get("namespace") or ""):
            sel = self.selector_of(owner)
            if not sel.empty and sel.matches(labels):
                found.append(owner)
        return found

    def _pod_added(self, pod: Obj) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._pod_deleted(pod)  # seen for the first time already dying: not a creation
            return
        ref = controller_of(pod)
        if ref is not None:
            owner = self._resolve(pod, ref)
            if owner is not None:
                key = meta_namespace_key(owner)
                self.expectations.creation_observed(key)
                self.enqueue(key)
            return
        for owner in self._matching_owners(pod):
            self.enqueue(owner)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        labels_changed = (old["metadata"].get("labels") or {}) != (new["metadata"].get("labels") or {})
        if new["metadata"].get("deletionTimestamp"):
            self._pod_deleted(new)  # graceful deletion started: for us the pod is gone now
            if labels_changed:
                self._pod_deleted(old)
            return
        old_ref, new_ref = controller_of(old), controller_of(new)
        if old_ref != new_ref and old_ref is not None:
            old_owner = self._resolve(old, old_ref)
            if old_owner is not None:
                self.enqueue(old_owner)  # it lost a pod
        if new_ref is not None:
            owner = self._resolve(new, new_ref)
            if owner is not None:
                self.enqueue(owner)
                min_ready = int((owner.get("spec") or {}).get("minReadySeconds") or 0)
                if min_ready > 0 and not is_ready(old) and is_ready(new):
                    # Available only after minReadySeconds: look again then (nothing else will tell us).
                    self.enqueue_after(meta_namespace_key(owner), min_ready + 1.0)
            return
        if labels_changed or old_ref != new_ref:
            for owner in self._matching_owners(new):
                self.enqueue(owner)

    def _pod_deleted(self, pod: Obj) -> None:
        owner = self._resolve(pod, controller_of(pod))
        if owner is not None:
            key = meta_namespace_key(owner)
            self.expectations.deletion_observed(key, meta_namespace_key(pod))
            self.enqueue(key)

    # ------------------------------------------------------------------ the reconcile
    async def reconcile(self, key: str) -> None:
        owner = self.owners.get(key)
        if owner is None:
            self.expectations.delete(key)
            return
        want = desired_replicas(owner)
        if want is None:
            # Defence in depth: the API server refuses such a count, but an object written
            # before it did (or by another writer of storage) must not make us create pods
            # without end. Act on nothing, change nothing; a fixed spec brings a new event.
            log.error("%s %s: spec.replicas %r is not an int32 >= 0; not acting on it",
                      self.resource, key, (owner.get("spec") or {}).get("replicas"))
            return
        needs_sync = self.expectations.satisfied(key)
        meta = owner["metadata"]
        candidates = {meta_namespace_key(p): p for p in self.pods.by_index(OWNER_INDEX, meta["uid"])}
        for p in self.pods.by_index(ORPHAN_INDEX, meta.get("namespace") or ""):
            candidates.setdefault(meta_namespace_key(p), p)
        active = [p for p in candidates.values() if is_active(p)]
        refs = ControllerRefManager(
            self.client, "pods", owner, self.selector_of(owner), recheck_owner(self.client, self.resource, owner)
        )
        pods = await refs.claim(active)

        manage_err: Exception | None = None
        diff = len(pods) - want
        if needs_sync and not meta.get("deletionTimestamp"):
            try:
                await self.manage_replicas(owner, pods, diff)
            except Exception as exc:  # noqa: BLE001 - reported in status, then retried
                manage_err = exc
        updated = await self.update_status(owner, self.calculate_status(owner, pods, manage_err, diff))

        spec = updated.get("spec") or {}
        status = updated.get("status") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        replicas = int(spec.get("replicas", 1) or 0)
        if (
            manage_err is None
            and min_ready > 0
            and status.get("readyReplicas", 0) == replicas != status.get("availableReplicas", 0)
        ):
            self.enqueue_after(key, float(min_ready))
        if manage_err is not None:
            raise manage_err

    async def manage_replicas(self, owner: Obj, pods: list[Obj], diff: int) -> None:
        key = meta_namespace_key(owner)
        if diff < 0:
            count = min(-diff, self.burst_replicas)
            # Record the expectation *before* the first POST: the informer may deliver the new
            # pod before create() even returns.
            self.expectations.expect_creations(key, count)
            log.info(
                "%s %s: too few replicas (%d of %d), creating %d",
                self.owners.rt.kind,
                key,
                len(pods),
                len(pods) - diff,
                count,
            )
            ok, err = await slow_start_batch(count, SLOW_START_INITIAL_BATCH, lambda: self._create_pod(owner))
            for _ in range(count - ok):
                self.expectations.creation_observed(key)  # never coming: do not wait for them
            if err is not None:
                raise err
        elif diff > 0:
            count = min(diff, self.burst_replicas)
            victims = deletion_order(pods, pods)[:count]
            self.expectations.expect_deletions(key, [meta_namespace_key(p) for p in victims])
            log.info(
                "%s %s: too many replicas (%d of %d), deleting %d",
                self.owners.rt.kind,
                key,
                len(pods),
                len(pods) - diff,
                count,
            )
            results = await asyncio.gather(*(self._delete_pod(owner, p) for p in victims), return_exceptions=True)
            errs = [r for r in results if isinstance(r, Exception)]
            if errs:
                raise errs[0]

    async def _create_pod(self, owner: Obj, shape: Callable[[Obj], Obj] | None = None) -> None:
        """Create one pod from the owner's template (`shape` may turn it into a particular one,
        e.g. the pod of one index of an Indexed Job)."""
        meta, template = owner["metadata"], (owner.get("spec") or {}).get("template") or {}
        tmeta = template.get("metadata") or {}
        pod_meta: Obj = {
            "generateName": f"{meta['name']}-",
            "namespace": meta.get("namespace"),
            "labels": dict(tmeta.get("labels") or {}),
            "ownerReferences": [owner_reference(owner)],
        }
        if tmeta.get("annotations"):
            pod_meta["annotations"] = dict(tmeta["annotations"])
        if tmeta.get("finalizers"):
            pod_meta["finalizers"] = list(tmeta["finalizers"])
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(template.get("spec"))}
        if shape is not None:
            pod = shape(pod)
        try:
            created = await self.client.create("pods", pod, meta.get("namespace"))
        except Exception as exc:
            if _terminating_namespace(exc):
                return  # the namespace is going away: nothing to create, nothing to report
            self.recorder.event(owner, WARNING, "FailedCreate", f"Error creating: {exc}")
            raise
        self.recorder.event(owner, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")

    async def _delete_pod(self, owner: Obj, pod: Obj) -> None:
        pmeta = pod["metadata"]
        try:
            await self.client.delete("pods", pmeta["name"], pmeta.get("namespace"))
        except NotFoundError:
            self.expectations.deletion_observed(meta_namespace_key(owner), meta_namespace_key(pod))
            return
        except Exception as exc:
            self.expectations.deletion_observed(meta_namespace_key(owner), meta_namespace_key(pod))
            self.recorder.event(owner, WARNING, "FailedDelete", f"Error deleting: {exc}")
            raise
        self.recorder.event(owner, NORMAL, "SuccessfulDelete", f"Deleted pod: {pmeta['name']}")

    # ------------------------------------------------------------------ status
    def calculate_status(self, owner: Obj, pods: list[Obj], manage_err: Exception | None, diff: int) -> Obj:
        spec = owner.get("spec") or {}
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        status: Obj = copy.deepcopy(owner.get("status") or {})
        status["replicas"] = len(pods)
        status["fullyLabeledReplicas"] = sum(
            1 for p in pods if template_labels.items() <= (p["metadata"].get("labels") or {}).items()
        )
        status["readyReplicas"] = sum(1 for p in pods if is_ready(p))
        status["availableReplicas"] = sum(1 for p in pods if is_available(p, min_ready))
        status["observedGeneration"] = owner["metadata"].get("generation", 1)
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "ReplicaFailure"]
        failure = next((c for c in status.get("conditions") or [] if c.get("type") == "ReplicaFailure"), None)
        if manage_err is not None:
            if failure is None:
                failure = {
                    "type": "ReplicaFailure",
                    "status": "True",
                    "lastTransitionTime": now_rfc3339(),
                    "reason": "FailedCreate" if diff < 0 else "FailedDelete",
                    "message": str(manage_err),
                }
            conditions.append(failure)
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
        return status

    async def update_status(self, owner: Obj, status: Obj) -> Obj:
        """PUT /status if anything changed; on a conflict re-read once and try again."""
        if semantically_equal(owner.get("status") or {}, status):
            return owner
        obj = {k: v for k, v in owner.items() if k != "status"}
        obj["status"] = status
        try:
            return await self.client.update_status(self.resource, obj)
        except ConflictError:
            meta = owner["metadata"]
            fresh = await self.client.get(self.resource, meta["name"], meta.get("namespace"))
            if fresh["metadata"].get("uid") != meta.get("uid"):
                return owner
            fresh["status"] = status
            return await self.client.update_status(self.resource, fresh)
        except NotFoundError:
            return owner
