"""ServiceAccountsController: every namespace has a `default` ServiceAccount.

Desired state: in each namespace that is not being deleted, a ServiceAccount named `default` (the
one a pod runs as when it names none — ServiceAccount admission fills that in).
Current state: namespaces and service accounts from informers.
What we do about the difference: create it. A new namespace is queued when it appears; a deleted
`default` account queues its namespace, so it comes straight back. A Terminating namespace is
skipped: NamespaceLifecycle admission would refuse the create anyway.
"""

from __future__ import annotations

from typing import Any

from api import errors
from controller_manager.controller import Controller

DEFAULT = "default"


class ServiceAccountsController(Controller):
    name = "serviceaccount"
    component = "service-account-controller"

    def setup(self) -> None:
        f = self.ctx.informers
        self.namespaces = f.informer_for("namespaces")
        self.accounts = f.informer_for("serviceaccounts")
        self.namespaces.add_event_handler(self.enqueue, lambda _old, new: self.enqueue(new))
        self.accounts.add_event_handler(on_delete=self._account_deleted)

    def _account_deleted(self, sa: dict[str, Any]) -> None:
        if sa["metadata"].get("name") == DEFAULT:
            self.enqueue(sa["metadata"].get("namespace") or "")

    async def reconcile(self, key: str) -> None:
        ns = self.namespaces.get(key)
        if (
            ns is None
            or ns["metadata"].get("deletionTimestamp")
            or (ns.get("status") or {}).get("phase") == "Terminating"
        ):
            return
        if self.accounts.get(f"{key}/{DEFAULT}") is not None:
            return
        body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT, "namespace": key}}
        try:
            await self.client.create("serviceaccounts", body, key)
        except errors.AlreadyExistsError:
            pass  # our cache is behind: it exists
        except (errors.ForbiddenError, errors.NotFoundError):
            pass  # the namespace is going away or gone
