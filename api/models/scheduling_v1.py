"""scheduling.k8s.io/v1 PriorityClass: a named integer that orders pods for scheduling and eviction.

A pod names a class in `spec.priorityClassName`; admission copies the class's `value` into
`spec.priority`. Higher values schedule first and are evicted last. Two classes exist in every
cluster, created by the API server at start-up: `system-cluster-critical` (2000000000) and
`system-node-critical` (2000001000), for the add-ons a cluster cannot live without.
"""

from __future__ import annotations

from api.models.base import K8sModel
from api.models.meta import K8sList, ObjectMeta


class PriorityClass(K8sModel):
    api_version: str | None = "scheduling.k8s.io/v1"
    kind: str | None = "PriorityClass"
    metadata: ObjectMeta | None = None
    value: int | None = None
    global_default: bool | None = None
    description: str | None = None
    preemption_policy: str | None = None  # PreemptLowerPriority (default) or Never


class PriorityClassList(K8sList[PriorityClass]):
    api_version: str | None = "scheduling.k8s.io/v1"
    kind: str | None = "PriorityClassList"
