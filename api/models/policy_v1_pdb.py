"""policy/v1 PodDisruptionBudget: how many pods of a set may be down at once by choice.

Voluntary disruptions (`kubectl drain`, evictions) must leave at least `minAvailable` pods, or
take at most `maxUnavailable`; the disruption controller keeps `status.disruptionsAllowed`
current and the eviction subresource refuses (429) when it is zero. Kept apart from the
Eviction model (policy_v1.py) so each file holds one concept.
"""

from __future__ import annotations

from api.models.base import Int64, IntOrString, K8sModel, Time
from api.models.meta import BaseCondition, K8sList, LabelSelector, ObjectMeta


class PodDisruptionBudgetSpec(K8sModel):
    min_available: IntOrString | None = None
    selector: LabelSelector | None = None
    max_unavailable: IntOrString | None = None
    unhealthy_pod_eviction_policy: str | None = None  # IfHealthyBudget or AlwaysAllow


class PodDisruptionBudgetStatus(K8sModel):
    observed_generation: Int64 | None = None
    disrupted_pods: dict[str, Time] | None = None
    disruptions_allowed: int | None = None
    current_healthy: int | None = None
    desired_healthy: int | None = None
    expected_pods: int | None = None
    conditions: list[BaseCondition] | None = None


class PodDisruptionBudget(K8sModel):
    api_version: str | None = "policy/v1"
    kind: str | None = "PodDisruptionBudget"
    metadata: ObjectMeta | None = None
    spec: PodDisruptionBudgetSpec | None = None
    status: PodDisruptionBudgetStatus | None = None


class PodDisruptionBudgetList(K8sList[PodDisruptionBudget]):
    api_version: str | None = "policy/v1"
    kind: str | None = "PodDisruptionBudgetList"
