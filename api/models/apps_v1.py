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
    """How fast a rolling update replaces pods: how many may be missing and how many may be extra during the update.
    """

    # Pods that may be unavailable during the update, as a number or a percentage of replicas:
    max_unavailable: IntOrString | None = None  # 1 or "25%" (default 25%)
    # Pods that may be created above the desired replicas during the update, as a number or a percentage:
    max_surge: IntOrString | None = None  # 1 or "25%" (default 25%)


class DeploymentStrategy(K8sModel):
    """How a Deployment replaces old pods with new ones when its template changes."""

    type: str | None = None  # RollingUpdate (default) or Recreate
    # Settings of the RollingUpdate strategy; only allowed when type is RollingUpdate.
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(K8sModel):
    """The desired state of a Deployment: a pod template, how many copies, and how to roll out changes."""

    # How many pods to run (default 1).
    replicas: int | None = None
    # Which pods belong to this Deployment; it must match the template's labels and cannot be changed.
    selector: LabelSelector | None = None
    # The pod to run. Changing it starts a rollout to a new ReplicaSet.
    template: PodTemplateSpec | None = None
    # How to replace old pods with new ones.
    strategy: DeploymentStrategy | None = None
    # Seconds a new pod must be ready before it counts as available (default 0).
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None  # old ReplicaSets kept for rollback (default 10)
    # While true, template changes do not start a rollout.
    paused: bool | None = None
    progress_deadline_seconds: int | None = None  # default 600


class DeploymentCondition(BaseCondition):
    last_update_time: Time | None = None  # Available, Progressing, ReplicaFailure


class DeploymentStatus(K8sModel):
    """The observed state of a Deployment, as the deployment controller last saw it."""

    observed_generation: Int64 | None = None  # the spec generation this status describes
    # Pods owned by this Deployment's ReplicaSets.
    replicas: int | None = None
    updated_replicas: int | None = None  # pods with the current template
    # Pods that pass their readiness checks.
    ready_replicas: int | None = None
    available_replicas: int | None = None  # ready for at least minReadySeconds
    # Pods still needed before the Deployment has all its replicas available.
    unavailable_replicas: int | None = None
    # Pods of this Deployment that are shutting down.
    terminating_replicas: int | None = None
    # The latest observations: Available, Progressing, ReplicaFailure.
    conditions: list[DeploymentCondition] | None = None
    collision_count: int | None = None  # salts the pod-template-hash after a name collision


class Deployment(K8sModel):
    """A Deployment keeps a number of identical pods running and rolls out changes to their template by moving
    replicas from an old ReplicaSet to a new one."""

    api_version: str | None = "apps/v1"
    kind: str | None = "Deployment"
    metadata: ObjectMeta | None = None
    spec: DeploymentSpec | None = None
    status: DeploymentStatus | None = None


# --- ReplicaSet ---------------------------------------------------------------------------------


class ReplicaSetSpec(K8sModel):
    """The desired state of a ReplicaSet: how many pods, which pods count, and the template of new ones."""

    # How many pods to run (default 1).
    replicas: int | None = None
    # Seconds a new pod must be ready before it counts as available (default 0).
    min_ready_seconds: int | None = None
    # Which pods count as replicas; must match the template's labels.
    selector: LabelSelector | None = None
    # The pod created when there are too few replicas.
    template: PodTemplateSpec | None = None


class ReplicaSetCondition(BaseCondition):
    pass


class ReplicaSetStatus(K8sModel):
    """The observed state of a ReplicaSet."""

    # The number of pods the selector matches.
    replicas: int | None = None
    fully_labeled_replicas: int | None = None
    # Pods that pass their readiness checks.
    ready_replicas: int | None = None
    # Pods ready for at least minReadySeconds.
    available_replicas: int | None = None
    terminating_replicas: int | None = None
    observed_generation: Int64 | None = None
    conditions: list[ReplicaSetCondition] | None = None


class ReplicaSet(K8sModel):
    """A ReplicaSet keeps a number of pods matching its selector running, creating pods from its template and
    deleting extra ones. Deployments manage ReplicaSets; you rarely create one directly."""

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
