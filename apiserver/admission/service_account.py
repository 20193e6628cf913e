"""ServiceAccount: a pod runs as a service account that exists; one that names none runs as `default`.

Kubernetes' plugin of the same name sets `spec.serviceAccountName` to `default` when the pod names
none, and refuses a pod whose service account does not exist (403, `error looking up service
account <ns>/<name>: serviceaccount "<name>" not found`): a workload controller then reports
FailedCreate until someone creates the account.

One difference, on purpose: a missing `default` account is tolerated. Kubernetes refuses pods for
the moment between a namespace's creation and its serviceaccount controller creating `default`;
here pods may be created in namespaces where no controller-manager runs at all (the API server
alone is a complete lesson).

Then the pod gets its token volume at /var/run/secrets/kubernetes.io/serviceaccount
(service_account_token_volume.py) unless it or its account turns that off.

A mirror pod (annotation `kubernetes.io/config.mirror`, written by a kubelet for a static pod)
gets no account, as in Kubernetes: the kubelet would not recognise a pod it did not write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from api import errors, registry
from apiserver.admission import Attributes
from apiserver.admission import service_account_token_volume as token_volume

if TYPE_CHECKING:
    from apiserver.server import APIServer

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


class ServiceAccount:
    name = "ServiceAccount"

    def __init__(self, server: APIServer) -> None:
        self.server = server

    async def admit(self, attrs: Attributes) -> None:
        if attrs.rt.key != "pods" or attrs.operation != "CREATE" or attrs.obj is None or attrs.subresource:
            return
        if MIRROR_ANNOTATION in ((attrs.obj.get("metadata") or {}).get("annotations") or {}):
            return  # a kubelet's mirror pod is left as the kubelet wrote it, as in Kubernetes
        spec = attrs.obj.setdefault("spec", {})
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
        account, namespace = spec["serviceAccountName"], attrs.namespace or "default"
        issues_tokens = self._can_issue_tokens()
        # looked up only when it matters: to refuse a missing named account, or for its automount
        found = await self._account(namespace, account) if account != "default" or issues_tokens else None
        if account != "default" and found is None:
            raise errors.forbidden_error(
                "pods",
                attrs.name or "",
                f'error looking up service account {namespace}/{account}: serviceaccount "{account}" not found',
            )
        if issues_tokens and token_volume.wants_token(spec, found):
            token_volume.add_token_volume(spec)

    def _can_issue_tokens(self) -> bool:
        return bool(self.server.config.service_account_signing_key_file and self.server.config.service_account_issuers)

    async def _account(self, namespace: str, account: str) -> dict[str, Any] | None:
        rt = registry.by_key("serviceaccounts")
        assert rt is not None
        store = self.server.store(rt)
        cached = self.server.cache(rt).peek(store.key(namespace, account))
        if cached is not None:
            return cached
        try:  # the cache may not have seen an account created a moment ago
            found: dict[str, Any] = await store.get(namespace, account)
        except errors.NotFoundError:
            return None
        return found
