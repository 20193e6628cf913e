"""ReplicaSetController: keeps `spec.replicas` pods of a ReplicaSet running.

Desired state: a ReplicaSet's `spec.replicas` pods matching `spec.selector` (`matchLabels` and
`matchExpressions`). Current state: the active pods it controls. What it does about the difference:
creates or deletes pods and reports status, in replica_manager.py (shared with the RC). Deployments
never touch pods themselves: they scale ReplicaSets, and this controller does the rest. Events come
"From replicaset-controller":

    Normal  SuccessfulCreate  Created pod: redis-bb7894d65-w2rsp
"""

from __future__ import annotations

from typing import Any

from api.labels import Selector, from_label_selector
from controller_manager.controllers.replica_manager import ReplicaManager


class ReplicaSetController(ReplicaManager):
    name = "replicaset"
    component = "replicaset-controller"
    resource = "replicasets.apps"

    def selector_of(self, owner: dict[str, Any]) -> Selector:
        return from_label_selector((owner.get("spec") or {}).get("selector"))
