"""TokensController (`serviceaccount-token`): fills in ServiceAccount token Secrets.

Desired state: every Secret of type `kubernetes.io/service-account-token` whose annotation
`kubernetes.io/service-account.name` names an existing ServiceAccount holds `token` (a JWT for that
account signed with --service-account-private-key-file), `namespace`, and `ca.crt`
(--root-ca-file, when given); its `kubernetes.io/service-account.uid` annotation is the account's
UID. A token Secret whose account is gone — or was deleted and re-created under a new UID — is gone.
Current state: ServiceAccounts and token Secrets from informers.
What we do about the difference: write the missing data into the Secret (one update), or delete
the orphan with a UID precondition, so a Secret re-created meanwhile under the same name survives.

Since Kubernetes 1.24 nothing creates these Secrets automatically: a user who wants a long-lived
token creates one (empty, with the annotation) and this controller fills it in. Pods normally get
short-lived projected tokens instead (TokenRequest), which mini-k8s does not have yet.
"""

from __future__ import annotations

import base64
from typing import Any

from api import errors
from controller_manager.controller import Controller
from controller_manager.controllers.serviceaccount_jwt import legacy_token

TOKEN_TYPE = "kubernetes.io/service-account-token"
NAME_KEY = "kubernetes.io/service-account.name"
UID_KEY = "kubernetes.io/service-account.uid"


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


class TokensController(Controller):
    name = "serviceaccount-token"
    component = "tokens-controller"

    def setup(self) -> None:
        creds = self.ctx.credentials
        assert creds.signing_key is not None, "the manager starts us only with a key"
        self.key = creds.signing_key
        self.root_ca = creds.root_ca
        f = self.ctx.informers
        self.accounts = f.informer_for("serviceaccounts")
        self.secrets = f.informer_for("secrets", field_selector=f"type={TOKEN_TYPE}")
        self.secrets.add_indexers({"byAccount": self._account_of})
        self.secrets.add_event_handler(self.enqueue, lambda _old, new: self.enqueue(new))
        self.accounts.add_event_handler(self._account_changed, lambda _old, new: self._account_changed(new),
                                        self._account_changed)  # fmt: skip

    @staticmethod
    def _account_of(secret: dict[str, Any]) -> list[str]:
        meta = secret["metadata"]
        name = (meta.get("annotations") or {}).get(NAME_KEY)
        return [f"{meta.get('namespace')}/{name}"] if name else []

    def _account_changed(self, sa: dict[str, Any]) -> None:
        """A new, changed or deleted account: look again at every Secret that names it."""
        meta = sa["metadata"]
        for key in self.secrets.index_keys("byAccount", f"{meta.get('namespace')}/{meta.get('name')}"):
            self.enqueue(key)

    async def reconcile(self, key: str) -> None:
        secret = self.secrets.get(key)
        if secret is None or secret.get("type") != TOKEN_TYPE or secret["metadata"].get("deletionTimestamp"):
            return
        meta = secret["metadata"]
        ns, annotations = meta.get("namespace") or "", meta.get("annotations") or {}
        sa = await self._account(ns, annotations.get(NAME_KEY, ""), annotations.get(UID_KEY))
        if sa is None:
            await self._delete(secret)
            return
        data = dict(secret.get("data") or {})
        want: dict[str, str] = {"namespace": _b64(ns.encode())}
        if self.root_ca:
            want["ca.crt"] = _b64(self.root_ca)
        missing = {k: v for k, v in want.items() if data.get(k) != v}
        if data.get("token") and not missing and annotations.get(UID_KEY):
            return
        if not data.get("token"):
            missing["token"] = _b64(legacy_token(self.key, sa, meta["name"]).encode())
        updated = {
            **secret,
            "metadata": {**meta, "annotations": {**annotations, UID_KEY: sa["metadata"]["uid"]}},
            "data": {**data, **missing},
        }
        try:
            await self.client.update("secrets", updated)
        except errors.NotFoundError:
            pass  # deleted meanwhile: nothing to fill in
        # a ConflictError (our cache is behind) is retried by the loop

    async def _account(self, ns: str, name: str, uid: str | None) -> dict[str, Any] | None:
        """The account the Secret names (with the UID it names, if any), or None if there is none.
        Before an orphan is deleted the API server is asked: a Secret created right after its
        account may reach us before the account does, and deleting it would be wrong."""
        if not name:
            return None  # the API server requires the annotation; an old object might lack it
        sa = self.accounts.get(f"{ns}/{name}")
        if sa is not None and (not uid or sa["metadata"].get("uid") == uid):
            return sa
        try:
            sa = await self.client.get("serviceaccounts", name, ns)
        except errors.NotFoundError:
            return None
        return sa if not uid or sa["metadata"].get("uid") == uid else None

    async def _delete(self, secret: dict[str, Any]) -> None:
        meta = secret["metadata"]
        try:
            await self.client.delete("secrets", meta["name"], meta.get("namespace"),
                                     preconditions={"uid": meta["uid"]})  # fmt: skip
        except (errors.NotFoundError, errors.ConflictError):
            pass  # already gone, or a new Secret took the name: not ours to delete
