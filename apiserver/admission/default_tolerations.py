"""DefaultTolerationSeconds: how long a pod may stay on a node that stopped reporting.

When the node lifecycle controller sees a node go NotReady or Unreachable it taints it with
`node.kubernetes.io/not-ready:NoExecute` or `node.kubernetes.io/unreachable:NoExecute`. A NoExecute
taint evicts every pod that does not tolerate it — at once. This plugin gives every pod a
toleration for both taints with `tolerationSeconds` (300 s by default, the apiserver flags
--default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds), so a short
network blip does not reschedule the whole node. A pod that already tolerates a taint keeps its own.
It runs on updates too, so a `kubectl replace` of a manifest without them does not look like a change.
"""

from __future__ import annotations

from apiserver.admission import Attributes

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


class DefaultTolerationSeconds:
    name = "DefaultTolerationSeconds"

    def __init__(self, not_ready_seconds: int, unreachable_seconds: int) -> None:
        self.defaults = ((NOT_READY, not_ready_seconds), (UNREACHABLE, unreachable_seconds))

    async def admit(self, attrs: Attributes) -> None:
        if (
            attrs.rt.key != "pods"
            or attrs.operation not in ("CREATE", "UPDATE")
            or attrs.obj is None
            or attrs.subresource
        ):
            return
        spec = attrs.obj.setdefault("spec", {})
        tolerations = spec.get("tolerations") or []
        for key, seconds in self.defaults:
            if not any(_tolerates(t, key) for t in tolerations):
                tolerations.append(
                    {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
                )
        spec["tolerations"] = tolerations


def _tolerates(t: dict, key: str) -> bool:
    """Does this toleration already cover `key:NoExecute`? (An empty key with Exists covers all.)"""
    if t.get("effect") not in (None, "", "NoExecute"):
        return False
    if t.get("operator") == "Exists" and not t.get("key"):
        return True
    return t.get("key") == key
