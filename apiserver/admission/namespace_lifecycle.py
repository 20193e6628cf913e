"""NamespaceLifecycle: nothing is created in a namespace that is missing or being deleted.

Without this rule a namespace deletion could never finish: the namespace controller deletes
everything inside, while someone keeps creating new things. So once a namespace is Terminating,
creates in it are forbidden; and a create in a namespace that does not exist is a 404 for the
namespace, exactly as Kubernetes answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from api import errors, registry
from apiserver.admission import Attributes

if TYPE_CHECKING:
    from apiserver.server import APIServer

# The system namespaces can never be deleted.
IMMORTAL = ("default", "kube-system", "kube-public")


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, server: APIServer) -> None:
        self.server = server

    async def admit(self, attrs: Attributes) -> None:
        if attrs.rt.key == "namespaces" and attrs.operation == "DELETE" and attrs.name in IMMORTAL:
            raise errors.forbidden("namespaces", attrs.name, "this namespace may not be deleted")
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

    async def _namespace(self, name: str) -> dict | None:
        # A live read, not the watch cache: the cache can lag a namespace that turned Terminating
        # a moment ago, and this rule must hold exactly.
        rt = registry.by_key("namespaces")
        assert rt is not None
        try:
            return await self.server.store(rt).get(None, name)
        except errors.StatusError as exc:
            if exc.code == 404:
                return None
            raise
