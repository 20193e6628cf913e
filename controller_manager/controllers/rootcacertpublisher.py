"""Publisher (`root-ca-cert-publisher`): the cluster's CA in a ConfigMap in every namespace.

Desired state: each namespace that is not being deleted has the ConfigMap `kube-root-ca.crt`
whose data is exactly `{"ca.crt": <contents of --root-ca-file>}`, with Kubernetes' description
annotation. Pods mount it (projected service account volumes do) to verify the API server.
Current state: namespaces, and ConfigMaps named `kube-root-ca.crt`, from informers.
What we do about the difference: create the ConfigMap, or overwrite its data and annotation when
someone edited or deleted it — the namespace is queued again on every change to that ConfigMap,
so an edit is undone at once.
"""

from __future__ import annotations

from typing import Any

from api import errors
from controller_manager.controller import Controller

NAME = "kube-root-ca.crt"
DESCRIPTION_KEY = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
    "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
    "distributions of Kubernetes clusters."
)


class RootCACertPublisher(Controller):
    name = "root-ca-cert-publisher"
    component = "root-ca-cert-publisher"

    def setup(self) -> None:
        root_ca = self.ctx.credentials.root_ca
        assert root_ca is not None, "the manager starts us only with a root CA"
        self.ca = root_ca.decode()
        f = self.ctx.informers
        self.namespaces = f.informer_for("namespaces")
        self.configmaps = f.informer_for("configmaps", field_selector=f"metadata.name={NAME}")
        self.namespaces.add_event_handler(self.enqueue, lambda _old, new: self.enqueue(new))
        self.configmaps.add_event_handler(
            self._configmap_changed, lambda _old, new: self._configmap_changed(new), self._configmap_changed
        )

    def _configmap_changed(self, cm: dict[str, Any]) -> None:
        if cm["metadata"].get("name") == NAME:
            self.enqueue(cm["metadata"].get("namespace") or "")

    async def reconcile(self, key: str) -> None:
        ns = self.namespaces.get(key)
        if (
            ns is None
            or ns["metadata"].get("deletionTimestamp")
            or (ns.get("status") or {}).get("phase") == "Terminating"
        ):
            return
        data = {"ca.crt": self.ca}
        cm = self.configmaps.get(f"{key}/{NAME}")
        try:
            if cm is None:
                body = {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": NAME, "namespace": key, "annotations": {DESCRIPTION_KEY: DESCRIPTION}},
                    "data": data,
                }
                await self.client.create("configmaps", body, key)
                return
            annotations = cm["metadata"].get("annotations") or {}
            if cm.get("data") == data and not cm.get("binaryData") and annotations.get(DESCRIPTION_KEY) == DESCRIPTION:
                return
            meta = {**cm["metadata"], "annotations": {**annotations, DESCRIPTION_KEY: DESCRIPTION}}
            body = {k: v for k, v in cm.items() if k != "binaryData"}
            await self.client.update("configmaps", {**body, "metadata": meta, "data": data})
        except errors.AlreadyExistsError:
            pass  # our cache is behind: the ConfigMap's add event will bring it here again
        except (errors.ForbiddenError, errors.NotFoundError):
            pass  # the namespace is going away or gone (NamespaceLifecycle refuses the write)
