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
size — is left to the controller's recount). A dry run checks and charges nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from api import errors, quota, registry
from api.quantity import Quantity, format_resource_list, parse_resource_list
from apiserver.admission import Attributes

if TYPE_CHECKING:
    from apiserver.server import APIServer

CHARGE_ATTEMPTS = 100  # a burst of creates all race for the same quota object


class ResourceQuota:
    name = "ResourceQuota"

    def __init__(self, server: APIServer) -> None:
        self.server = server
        rt = registry.by_key("resourcequotas")
        assert rt is not None
        self.rt = rt

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation != "CREATE" or attrs.subresource or not attrs.rt.namespaced or attrs.obj is None:
            return
        quotas, _ = await self.server.cache(self.rt).snapshot()
        mine = [q for q in quotas if q["metadata"].get("namespace") == attrs.namespace]
        if not mine:
            return
        cost = quota.usage(attrs.rt.key, attrs.obj)
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
                await self._charge(attrs, q["metadata"]["name"], wanted)

    async def _charge(self, attrs: Attributes, name: str, wanted: dict[str, Quantity]) -> None:
        def charged(current: dict[str, Any]) -> dict[str, Any] | None:
            status = current.get("status") or {}
            hard, used = parse_resource_list(status.get("hard")), parse_resource_list(status.get("used"))
            unknown = sorted(r for r in wanted if r not in hard or r not in used)
            if unknown:
                raise self._forbidden(attrs, f"status unknown for quota: {name}, resources: {','.join(unknown)}")
            after = {r: used[r] + q for r, q in wanted.items()}
            exceeded = sorted(r for r in wanted if after[r] > hard[r])
            if exceeded:
                raise self._forbidden(attrs, (
                    f"exceeded quota: {name}, requested: {quota.pretty({r: wanted[r] for r in exceeded})}, "
                    f"used: {quota.pretty({r: used[r] for r in exceeded})}, "
                    f"limited: {quota.pretty({r: hard[r] for r in exceeded})}"
                ))
            if attrs.dry_run:
                return None
            status["used"] = {**(status.get("used") or {}), **format_resource_list(after)}
            current["status"] = status
            return current

        await self.server.store(self.rt).guaranteed_update(
            attrs.namespace, name, charged, attempts=CHARGE_ATTEMPTS
        )

    @staticmethod
    def _forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
        return errors.forbidden_error(attrs.rt.key, attrs.name, reason)
