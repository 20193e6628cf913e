"""apps/v1: the workload controllers - Deployment, ReplicaSet, DaemonSet, StatefulSet.

Each is "a pod template plus a rule for how many copies, where, and how to replace them".
A Deployment owns ReplicaSets (one per template revision) and moves replicas between them;
a ReplicaSet owns pods directly, like the older ReplicationController but with a set-based
LabelSelector instead of an equality-only map.
"""

from __future__ import annotations

from api.models.base import FreeDict, Int64, IntOrString, K8sModel, Time
from api.models.core_v1 import PodTemplateSpec
from api.models.meta import BaseCondition, K8sList, LabelSelector, ObjectMeta

# --- Deployment -----------------------------------------------------------------------------------


class RollingUpdateDeployment(K8sModel):
    max_unavailable: IntOrString | None = None  # 1 or "25%" (default 25%)
    max_surge: IntOrString | None = None  # 1 or "25%" (default 25%)


class DeploymentStrategy(K8sModel):
    type: str | None = None  # RollingUpdate (default) or Recreate
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(K8sModel):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    strategy: DeploymentStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None  # old ReplicaSets kept for rollback (default 10)
    paused: bool | None = None
    progress_deadline_seconds: int | None = None  # default 600


class DeploymentCondition(BaseCondition):
    last_update_time: Time | None = None  # Available, Progressing, ReplicaFailure


class DeploymentStatus(K8sModel):
    observed_generation: Int64 | None = None  # the spec generation this status describes
    replicas: int | None = None
    updated_replicas: int | None = None  # pods with the current template
    ready_replicas: int | None = None
    available_replicas: int | None = None  # ready for at least minReadySeconds
    unavailable_replicas: int | None = None
    terminating_replicas: int | None = None
    conditions: list[DeploymentCondition] | None = None
    collision_count: int | None = None  # salts the pod-template-hash after a name collision


class Deployment(K8sModel):
    api_version: str | None = "apps/v1"
    kind: str | None = "Deployment"
    metadata: ObjectMeta | None = None
    spec: DeploymentSpec | None = None
    status: DeploymentStatus | None = None


# --- ReplicaSet ---------------------------------------------------------------------------------


class ReplicaSetSpec(K8sModel):
    replicas: int | None = None
    min_ready_seconds: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None


class ReplicaSetCondition(BaseCondition):
    pass


class ReplicaSetStatus(K8sModel):
    replicas: int | None = None
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    terminating_replicas: int | None = None
    observed_generation: Int64 | None = None
    conditions: list[ReplicaSetCondition] | None = None


class ReplicaSet(K8sModel):
    api_version: str | None = "apps/v1"
    kind: str | None = "ReplicaSet"
    metadata: ObjectMeta | None = None
    spec: ReplicaSetSpec | None = None
    status: ReplicaSetStatus | None = None


# --- DaemonSet ------------------------------------------------------------------------------------


class RollingUpdateDaemonSet(K8sModel):
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None


class DaemonSetUpdateStrategy(K8sModel):
    type: str | None = None  # RollingUpdate (default) or OnDelete
    rolling_update: RollingUpdateDaemonSet | None = None


class DaemonSetSpec(K8sModel):
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    update_strategy: DaemonSetUpdateStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None


class DaemonSetCondition(BaseCondition):
    pass


class DaemonSetStatus(K8sModel):
    current_number_scheduled: int | None = None
    number_misscheduled: int | None = None
    desired_number_scheduled: int | None = None  # nodes that should run the daemon pod
    number_ready: int | None = None
    observed_generation: Int64 | None = None
    updated_number_scheduled: int | None = None
    number_available: int | None = None
    number_unavailable: int | None = None
    collision_count: int | None = None
    conditions: list[DaemonSetCondition] | None = None


class DaemonSet(K8sModel):
    api_version: str | None = "apps/v1"
    kind: str | None = "DaemonSet"
    metadata: ObjectMeta | None = None
    spec: DaemonSetSpec | None = None
    status: DaemonSetStatus | None = None


# --- StatefulSet ----------------------------------------------------------------------------------


class RollingUpdateStatefulSetStrategy(K8sModel):
    partition: int | None = None  # only ordinals >= partition are updated
    max_unavailable: IntOrString | None = None


class StatefulSetUpdateStrategy(K8sModel):
    type: str | None = None  # RollingUpdate (default) or OnDelete
    rolling_update: RollingUpdateStatefulSetStrategy | None = None


class StatefulSetSpec(K8sModel):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec | None = None
    volume_claim_templates: list[FreeDict] | None = None  # PersistentVolumeClaims, kept verbatim
    service_name: str | None = None  # the headless Service giving pods stable DNS names
    pod_management_policy: str | None = None  # OrderedReady (default) or Parallel
    update_strategy: StatefulSetUpdateStrategy | None = None
    revision_history_limit: int | None = None
    min_ready_seconds: int | None = None
    persistent_volume_claim_retention_policy: FreeDict | None = None
    ordinals: FreeDict | None = None


class StatefulSetCondition(BaseCondition):
    pass


class StatefulSetStatus(K8sModel):
    observed_generation: Int64 | None = None
    replicas: int | None = None
    ready_replicas: int | None = None
    current_replicas: int | None = None
    updated_replicas: int | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    collision_count: int | None = None
    conditions: list[StatefulSetCondition] | None = None
    available_replicas: int | None = None


class StatefulSet(K8sModel):
    api_version: str | None = "apps/v1"
    kind: str | None = "StatefulSet"
    metadata: ObjectMeta | None = None
    spec: StatefulSetSpec | None = None
    status: StatefulSetStatus | None = None


# --- ControllerRevision ---------------------------------------------------------------------------


class ControllerRevision(K8sModel):
    """One remembered pod template of a DaemonSet or StatefulSet: `data` restores it, `revision` counts."""

    api_version: str | None = "apps/v1"
    kind: str | None = "ControllerRevision"
    metadata: ObjectMeta | None = None
    data: FreeDict | None = None  # a RawExtension: the patch that brings the template back
    revision: Int64 | None = None


# --- lists ----------------------------------------------------------------------------------------


class DeploymentList(K8sList[Deployment]):
    api_version: str | None = "apps/v1"
    kind: str | None = "DeploymentList"


class ReplicaSetList(K8sList[ReplicaSet]):
    api_version: str | None = "apps/v1"
    kind: str | None = "ReplicaSetList"


class DaemonSetList(K8sList[DaemonSet]):
    api_version: str | None = "apps/v1"
    kind: str | None = "DaemonSetList"


class StatefulSetList(K8sList[StatefulSet]):
    api_version: str | None = "apps/v1"
    kind: str | None = "StatefulSetList"


class ControllerRevisionList(K8sList[ControllerRevision]):
    api_version: str | None = "apps/v1"
    kind: str | None = "ControllerRevisionList"
