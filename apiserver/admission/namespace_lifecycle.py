"""NamespaceLifecycle: nothing is created in a namespace that is missing or being deleted.

Without this rule a namespace deletion could never finish: the namespace controller deletes
everything inside, while someone keeps creating new things. So once a namespace is Terminating,
creates in it are forbidden; and a create in a namespace that does not exist is a 404 for the
namespace, exactly as Kubernetes answers.

Where the namespace is read from matters for speed: this runs on every create. Like Kubernetes,
we read the watch cache (no storage round trip) and go to storage only when the cache may be
wrong: the namespace is not in it (created a moment ago), or it was deleted through this server
within the last FORCE_LIVE_LOOKUP_SECONDS (the cache may still show it Active — Kubernetes keeps
the same "force live lookup" list for the same reason).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from api import errors, registry
from apiserver.admission import Attributes

if TYPE_CHECKING:
    from apiserver.server import APIServer

# The system namespaces can never be deleted.
IMMORTAL = ("default", "kube-system", "kube-public")
FORCE_LIVE_LOOKUP_SECONDS = 30.0  # kube-apiserver's forceLiveLookupTTL


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self._deleted_at: dict[str, float] = {}  # namespace -> when a DELETE for it was admitted

    async def admit(self, attrs: Attributes) -> None:
        if attrs.rt.key == "namespaces" and attrs.operation == "DELETE" and attrs.name in IMMORTAL:
            raise errors.forbidden("namespaces", attrs.name, "this namespace may not be deleted")
        if attrs.rt.key == "namespaces" and attrs.operation == "DELETE":
            self._remember_deletion(attrs.name or "")
        if attrs.operation != "CREATE" or not attrs.rt.namespaced or attrs.subresource:
            return
        ns = await self._namespace(attrs.namespace or "")
        if ns is None:
            raise errors.not_found("namespaces", attrs.namespace or "")
        if (ns.get("status") or {}).get("phase") == "Terminating" or ns["metadata"].get("deletionTimestamp"):
            raise errors.forbidden(
                attrs.rt.key,
                attrs.name,
                f"unable to create new content in namespace {attrs.namespace} because it is being terminated",
            )

    def _remember_deletion(self, name: str) -> None:
        now = time.monotonic()
        self._deleted_at = {n: t for n, t in self._deleted_at.items() if now - t < FORCE_LIVE_LOOKUP_SECONDS}
        self._deleted_at[name] = now

    async def _namespace(self, name: str) -> dict | None:
        rt = registry.by_key("namespaces")
        assert rt is not None
        store = self.server.store(rt)
        deleted = self._deleted_at.get(name)
        if deleted is None or time.monotonic() - deleted >= FORCE_LIVE_LOOKUP_SECONDS:
            cached = self.server.cache(rt).peek(store.key(None, name))
            if cached is not None:
                return cached
        try:  # live read: the cache may not have caught up with this namespace yet
            return await store.get(None, name)
        except errors.StatusError as exc:
            if exc.code == 404:
                return None
            raise
