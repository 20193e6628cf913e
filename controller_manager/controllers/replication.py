"""ReplicationManager: keeps `spec.replicas` pods of a ReplicationController running (seed 000).

Desired state: an RC's `spec.replicas` pods matching its `spec.selector` (a plain label map, e.g.
`app: nginx`). Current state: the active pods the RC controls. What it does about the difference:
creates or deletes pods and reports status — all of it in replica_manager.py, shared with the
ReplicaSet controller. This file only says what is special about the RC: the core/v1 resource and its
plain-map selector. Its events come "From replication-controller", as in `kubectl describe rc`:

    Normal  SuccessfulCreate  Created pod: nginx-server-4s7vw
"""

from __future__ import annotations

from typing import Any

from api.labels import Selector, from_set
from controller_manager.controllers.replica_manager import ReplicaManager


class ReplicationManager(ReplicaManager):
    name = "replicationcontroller"
    component = "replication-controller"
    resource = "replicationcontrollers"

    def selector_of(self, owner: dict[str, Any]) -> Selector:
        return from_set((owner.get("spec") or {}).get("selector"))
