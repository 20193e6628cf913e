"""ResourceQuotaController: every quota's status tells the truth about its namespace.

Desired state: for each ResourceQuota, `status.hard` equals `spec.hard`, and `status.used` holds,
for each resource in it, what the objects in the namespace that the quota's scopes cover really
use (api/quota.py counts: pods that are not finished, their requests and limits, Services, claims,
`count/<resource>` of any kind).
Current state: the quotas and the counted objects from informers.
What it does about the difference: recount a quota and write its status when it differs. A quota
is recounted when it is created or its spec changes, when something it counts is deleted or a
pod finishes (usage goes *down*: the API server's admission only ever charges, on create), and
every `--resource-quota-sync-period` (5 m) for all quotas, which also corrects a charge for a
create that then failed to be stored.

Creates are never counted here first: admission charged the quota before the object was stored,
so reacting to creates would only race with it. For the same reason a recount never gives back
what admission charged in the last CHARGE_SETTLE seconds: a create just charged may not be stored
yet, or not yet be in this controller's informers (they trail the API server, under load by a
second or more), and a recount that wrote the lower count then would hand the same room out twice
(a burst of 20 creates against `pods: 5` ending with 8 pods). So the charges seen in that window
(increases of `status.used` by anyone but this recount) stay counted on top of the recount, and
the quota is looked at again once they are older: room given back by a release (a deleted or
finished pod) shows at once less what was charged in that window, and in full at most
CHARGE_SETTLE seconds later. (Kubernetes' controller recounts from its informers too; with its
five-minute resync the race is rare there.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from api import errors, quota
from api.quantity import (
    Quantity,
    add_resource_lists,
    format_resource_list,
    parse_resource_list,
    subtract_resource_lists,
)
from client.informer import meta_namespace_key
from controller_manager.controller import Controller

Obj = dict[str, Any]

# The kinds whose objects a quota can count by name; `count/<resource>` of other kinds is left at 0.
COUNTED = ("pods", "services", "configmaps", "secrets", "persistentvolumeclaims", "replicationcontrollers",
           "resourcequotas", "deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps",
           "jobs.batch", "cronjobs.batch")
CHARGE_SETTLE = 2.0  # seconds a charge of `status.used` stays counted whatever a recount finds


class ResourceQuotaController(Controller):
    name = "resourcequota"
    component = "resourcequota-controller"

    def setup(self) -> None:
        informers = self.ctx.informers
        self.quotas = informers.informer_for("resourcequotas")
        self.quotas.add_event_handler(self._quota_added, self._quota_updated, self._quota_deleted)
        self.charges: dict[str, list[tuple[float, dict[str, Quantity]]]] = {}  # quota key → (seen at, increase)
        self.counted = {key: informers.informer_for(key) for key in COUNTED}
        for key, informer in self.counted.items():
            on_update = self._pod_updated if key == "pods" else None
            informer.add_event_handler(None, on_update, self._released)

    def _quota_added(self, q: Obj) -> None:
        self.charges.pop(meta_namespace_key(q), None)
        self.enqueue(q)

    def _quota_deleted(self, q: Obj) -> None:
        self.charges.pop(meta_namespace_key(q), None)

    def _quota_updated(self, old: Obj, new: Obj) -> None:
        change = subtract_resource_lists((new.get("status") or {}).get("used"), (old.get("status") or {}).get("used"))
        increase = {r: q for r, q in change.items() if q > Quantity(0)}
        if increase:  # a charge (admission), or a recount that found more
            self.charges.setdefault(meta_namespace_key(new), []).append((time.monotonic(), increase))
        if (old.get("spec") or {}) != (new.get("spec") or {}) or (new.get("status") or {}).get("hard") != (
            (new.get("spec") or {}).get("hard")
        ):
            self.enqueue(new)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        if quota.pod_is_terminal(new) and not quota.pod_is_terminal(old):
            self._released(new)

    def _released(self, obj: Obj) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace")
        for q in self.quotas.by_index("namespace", namespace) if namespace else []:
            self.enqueue(q)

    def resync(self) -> tuple[float, Callable[[], Iterable[Obj]]]:
        return self.ctx.options.resource_quota_sync_period, self.quotas.list

    def used(self, q: Obj) -> dict[str, Quantity]:
        """What the namespace uses of each resource `q` limits, counted from the informers."""
        namespace = q["metadata"]["namespace"]
        hard = (q.get("spec") or {}).get("hard") or {}
        total = {r: Quantity(0) for r in hard}
        for key, informer in self.counted.items():
            for obj in informer.by_index("namespace", namespace):
                if not quota.quota_covers(q, key, obj):
                    continue
                for r, amount in quota.usage(key, obj).items():
                    if r in total:
                        total[r] = total[r] + amount
        return total

    def _recent_charges(self, key: str) -> tuple[dict[str, Quantity], float]:
        """The increases of the quota's `used` seen in the last CHARGE_SETTLE seconds, summed by
        resource, and how long until the oldest of them is older than that."""
        now = time.monotonic()
        kept = [(at, inc) for at, inc in self.charges.get(key, ()) if now - at < CHARGE_SETTLE]
        if not kept:
            self.charges.pop(key, None)
            return {}, 0.0
        self.charges[key] = kept
        total: dict[str, Quantity] = {}
        for _, inc in kept:
            total = add_resource_lists(total, inc)
        return total, kept[0][0] + CHARGE_SETTLE - now

    async def reconcile(self, key: str) -> None:
        q = self.quotas.get(key)
        if q is None or q["metadata"].get("deletionTimestamp"):
            return
        hard = (q.get("spec") or {}).get("hard") or {}
        status = q.get("status") or {}
        used = self.used(q)
        recorded = parse_resource_list(status.get("used"))
        recent, settles_in = self._recent_charges(key)
        held = False
        for r, amount in list(used.items()):
            if r in recent and r in recorded and amount < recorded[r]:  # keep what was just charged
                used[r] = min(recorded[r], amount + recent[r])
                held = True
        if held:
            self.enqueue_after(key, settles_in)
        same_hard = parse_resource_list(status.get("hard")) == parse_resource_list(hard)
        if same_hard and recorded == used:
            return
        body = {**q, "status": {"hard": dict(hard), "used": format_resource_list(used)}}
        try:
            await self.client.update_status("resourcequotas", body)
        except errors.ConflictError:
            self.enqueue_after(key, 0.1)  # admission charged it meanwhile: recount from the newer one
        except errors.NotFoundError:
            pass
