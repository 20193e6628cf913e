"""policy/v1 Eviction: "delete this pod, politely".

POSTed to `pods/<name>/eviction` (kubectl drain does this). Unlike a plain DELETE, an eviction
may be refused (429) when a PodDisruptionBudget would be violated; mini-k8s has no PDBs yet, so
an eviction becomes a delete with the given `deleteOptions`.
"""

from __future__ import annotations

from api.models.meta import DeleteOptions, K8sModel, ObjectMeta


class Eviction(K8sModel):
    api_version: str | None = "policy/v1"
    kind: str | None = "Eviction"
    metadata: ObjectMeta | None = None  # name and namespace of the pod to evict
    # How to delete the pod.
    delete_options: DeleteOptions | None = None
