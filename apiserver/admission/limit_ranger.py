"""LimitRanger admission: a namespace's LimitRanges fill in and bound what pods and claims ask for.

Mutating half (`admit`, on pod creation): each container without a limit or request for a resource
gets the LimitRange's `default` / `defaultRequest`, and the pod records what was set in the
annotation `kubernetes.io/limit-ranger` (`LimitRanger plugin set: cpu request for container app`),
as Kubernetes does. Its QoS class is worked out again, since the defaults can change it.
Validating half (`validate`, pods and claims, create and update): every `min`, `max` and
`maxLimitRequestRatio` holds, per Container, per Pod (the containers' sum) and per
PersistentVolumeClaim; otherwise 403 Forbidden listing each broken bound in Kubernetes' words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from api import errors, limitrange, registry
from apiserver.admission import Attributes
from apiserver.strategy import qos_class

if TYPE_CHECKING:
    from apiserver.server import APIServer

ANNOTATION = "kubernetes.io/limit-ranger"


class LimitRanger:
    name = "LimitRanger"

    def __init__(self, server: APIServer) -> None:
        self.server = server
        rt = registry.by_key("limitranges")
        assert rt is not None
        self.rt = rt

    async def _items(self, namespace: str | None) -> list[dict[str, Any]]:
        # a LimitRange this server has just answered applies to the very next pod
        if not await self.server.cache_has_own_writes(self.rt):
            raise errors.internal("limit range evaluation timed out")
        ranges, _ = await self.server.cache(self.rt).snapshot()
        mine = sorted((r for r in ranges if r["metadata"].get("namespace") == namespace),
                      key=lambda r: r["metadata"]["name"])
        return [item for r in mine for item in (r.get("spec") or {}).get("limits") or []]

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation != "CREATE" or attrs.rt.key != "pods" or attrs.subresource or attrs.obj is None:
            return
        items = await self._items(attrs.namespace)
        if not items:
            return
        note = limitrange.fill_container_defaults(attrs.obj, items)
        if note:
            annotations = attrs.obj["metadata"].setdefault("annotations", {})
            annotations[ANNOTATION] = note
            attrs.obj.setdefault("status", {})["qosClass"] = qos_class(attrs.obj)

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation not in ("CREATE", "UPDATE") or attrs.subresource or attrs.obj is None:
            return
        if attrs.rt.key not in ("pods", "persistentvolumeclaims"):
            return
        if attrs.operation == "UPDATE" and attrs.rt.key == "pods":
            return  # a pod's resources cannot change after creation
        items = await self._items(attrs.namespace)
        problems = limitrange.violations(attrs.rt.key, attrs.obj, items) if items else []
        if problems:
            reason = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
            raise errors.forbidden_error(attrs.rt.key, attrs.name, reason)
