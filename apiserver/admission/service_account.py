"""ServiceAccount: a pod that names no service account runs as `default`, like in Kubernetes."""

from __future__ import annotations

from apiserver.admission import Attributes


class ServiceAccount:
    name = "ServiceAccount"

    async def admit(self, attrs: Attributes) -> None:
        if attrs.rt.key != "pods" or attrs.operation != "CREATE" or attrs.obj is None or attrs.subresource:
            return
        spec = attrs.obj.setdefault("spec", {})
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
