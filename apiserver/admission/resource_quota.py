"""ResourceQuota admission: a create that would take a namespace over one of its quotas is refused.

Kubernetes' design, kept: the quota object itself is the lock. Before the new object is stored,
each quota that counts it is charged with a compare-and-swap update of its `status.used` (re-read
and re-checked on every conflict), so of two creates racing for the last unit exactly one wins;
the resourcequota controller later recounts `status.used` from what really exists (a charged
create that then failed to store is corrected there). Enforcement uses `status.hard`, which the
controller copies from `spec.hard`: a quota the controller has not seen yet refuses everything it
would count ("status unknown"), rather than letting anything through uncounted.

The refusals are 403 Forbidden in Kubernetes' words:

    pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2
    pods "x" is forbidden: failed quota: q: must specify limits.cpu for: app
    pods "x" is forbidden: status unknown for quota: q, resources: pods

Only creates are charged (what the cost of an update could change — a Service's type, a claim's
size — is left to the controller's recount). A dry run checks and charges nothing. Charges to one
quota are committed in batches (a create arriving while a write is in flight joins the next one),
each batch checked in arrival order, so a burst costs a few writes instead of a conflict storm.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from api import errors, quota, registry
from api.quantity import Quantity, format_resource_list, parse_resource_list
from apiserver.admission import Attributes

if TYPE_CHECKING:
    from apiserver.server import APIServer

CHARGE_ATTEMPTS = 100  # a burst of creates all race for the same quota object
Charge = tuple[Attributes, dict[str, Quantity], "asyncio.Future[None]"]


class ResourceQuota:
    name = "ResourceQuota"

    def __init__(self, server: APIServer) -> None:
        self.server = server
        rt = registry.by_key("resourcequotas")
        assert rt is not None
        self.rt = rt
        self._pending: dict[tuple[str, str], list[Charge]] = {}  # (namespace, quota) → charges waiting
        self._committing: set[tuple[str, str]] = set()  # quotas with a commit loop running

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation != "CREATE" or attrs.subresource or not attrs.rt.namespaced or attrs.obj is None:
            return
        quotas, _ = await self.server.cache(self.rt).snapshot()
        mine = [q for q in quotas if q["metadata"].get("namespace") == attrs.namespace]
        if not mine:
            return
        cost = quota.usage(attrs.rt.key, attrs.obj)
        charges = []
        for q in sorted(mine, key=lambda q: q["metadata"]["name"]):
            if not quota.quota_covers(q, attrs.rt.key, attrs.obj):
                continue
            hard = (q.get("spec") or {}).get("hard") or {}
            if attrs.rt.key == "pods" and not quota.pod_is_terminal(attrs.obj):
                missing = quota.missing_requests_or_limits(attrs.obj, hard)
                if missing:
                    raise self._forbidden(attrs, f"failed quota: {q['metadata']['name']}: {missing}")
            wanted = {r: v for r, v in cost.items() if r in hard}
            if wanted:
                charges.append(self._charge(attrs, q["metadata"]["name"], wanted))
        # every quota at once; the refusal reported is that of the first quota by name, as before
        for outcome in await asyncio.gather(*charges, return_exceptions=True):
            if isinstance(outcome, BaseException):
                raise outcome

    async def _charge(self, attrs: Attributes, name: str, wanted: dict[str, Quantity]) -> None:
        """Wait until this create's charge to quota `name` is committed (or refused).

        Charges to one quota are committed in batches: whoever arrives while a write to that quota
        is in flight joins the next one. A burst of creates then costs a few compare-and-swaps
        instead of one each, all but one of them lost to conflicts and retried."""
        key = (attrs.namespace or "", name)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.setdefault(key, []).append((attrs, wanted, done))
        if key not in self._committing:
            self._committing.add(key)
            asyncio.create_task(self._commit_all(key))
        await done

    async def _commit_all(self, key: tuple[str, str]) -> None:
        try:
            while self._pending.get(key):
                await self._commit(key, self._pending.pop(key))
        finally:
            self._committing.discard(key)  # no await since the loop's last check: nobody is left behind

    async def _commit(self, key: tuple[str, str], batch: list[Charge]) -> None:
        namespace, name = key
        refused: dict[int, errors.StatusError] = {}

        def charged(current: dict[str, Any]) -> dict[str, Any] | None:
            refused.clear()
            status = current.get("status") or {}
            hard, used = parse_resource_list(status.get("hard")), parse_resource_list(status.get("used"))
            total, changed = dict(used), False
            for i, (attrs, wanted, _) in enumerate(batch):
                unknown = sorted(r for r in wanted if r not in hard or r not in used)
                if unknown:
                    refused[i] = self._forbidden(attrs, f"status unknown for quota: {name}, resources: "
                                                        f"{','.join(unknown)}")  # fmt: skip
                    continue
                after = {r: total[r] + q for r, q in wanted.items()}
                exceeded = sorted(r for r in wanted if after[r] > hard[r])
                if exceeded:
                    refused[i] = self._forbidden(attrs, (
                        f"exceeded quota: {name}, requested: {quota.pretty({r: wanted[r] for r in exceeded})}, "
                        f"used: {quota.pretty({r: total[r] for r in exceeded})}, "
                        f"limited: {quota.pretty({r: hard[r] for r in exceeded})}"
                    ))
                    continue
                if not attrs.dry_run:  # a dry run is checked in its place, and charges nothing
                    total.update(after)
                    changed = True
            if not changed:
                return None
            status["used"] = {**(status.get("used") or {}), **format_resource_list(total)}
            current["status"] = status
            return current

        try:
            await self.server.store(self.rt).guaranteed_update(namespace, name, charged, attempts=CHARGE_ATTEMPTS)
        except Exception as exc:  # the quota is gone, storage failed: every create of the batch hears it
            for _, _, done in batch:
                if not done.done():  # a request cancelled meanwhile (client gone, ?timeout=) waits no more
                    done.set_exception(exc)
            return
        for i, (_, _, done) in enumerate(batch):
            if done.done():
                continue
            if i in refused:
                done.set_exception(refused[i])
            else:
                done.set_result(None)

    @staticmethod
    def _forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
        return errors.forbidden_error(attrs.rt.key, attrs.name, reason)
