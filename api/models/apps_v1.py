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
    # Pods whose labels match the template's labels exactly.
    fully_labeled_replicas: int | None = None
    # Pods that pass their readiness checks.
    ready_replicas: int | None = None
    # Pods ready for at least minReadySeconds.
    available_replicas: int | None = None
    # Pods of this ReplicaSet that are shutting down.
    terminating_replicas: int | None = None
    # The spec generation this status describes.
    observed_generation: Int64 | None = None
    # The latest observations of the ReplicaSet's state.
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
    """How fast a DaemonSet rolling update goes."""

    # Nodes whose daemon pod may be unavailable during the update: a number or a percentage (default 1).
    max_unavailable: IntOrString | None = None
    # Nodes that may briefly run an old and a new daemon pod: a number or a percentage (default 0).
    max_surge: IntOrString | None = None


class DaemonSetUpdateStrategy(K8sModel):
    """How a DaemonSet replaces its pods when the template changes."""

    type: str | None = None  # RollingUpdate (default) or OnDelete
    # Settings of the RollingUpdate strategy.
    rolling_update: RollingUpdateDaemonSet | None = None


class DaemonSetSpec(K8sModel):
    """The desired state of a DaemonSet: the pod to run on each eligible node, and how to update it."""

    # Which pods belong to this DaemonSet; must match the template's labels.
    selector: LabelSelector | None = None
    # The pod to run on every eligible node.
    template: PodTemplateSpec | None = None
    # How to replace the pods when the template changes.
    update_strategy: DaemonSetUpdateStrategy | None = None
    # Seconds a new pod must be ready before it counts as available (default 0).
    min_ready_seconds: int | None = None
    # Old revisions kept for rollback (default 10).
    revision_history_limit: int | None = None


class DaemonSetCondition(BaseCondition):
    pass


class DaemonSetStatus(K8sModel):
    """The observed state of a DaemonSet."""

    # Nodes running a daemon pod that should run one.
    current_number_scheduled: int | None = None
    # Nodes running a daemon pod that should not run one.
    number_misscheduled: int | None = None
    desired_number_scheduled: int | None = None  # nodes that should run the daemon pod
    # Nodes whose daemon pod is ready.
    number_ready: int | None = None
    observed_generation: Int64 | None = None
    # Nodes running a daemon pod with the current template.
    updated_number_scheduled: int | None = None
    # Nodes whose daemon pod has been ready for minReadySeconds.
    number_available: int | None = None
    # Nodes that should run an available daemon pod and do not.
    number_unavailable: int | None = None
    # Salts the name of new revisions after a hash collision.
    collision_count: int | None = None
    # The latest observations of the DaemonSet's state.
    conditions: list[DaemonSetCondition] | None = None


class DaemonSet(K8sModel):
    """A DaemonSet runs one copy of a pod on every node that matches its template's node selector, and adds or
    removes pods as nodes come and go."""

    api_version: str | None = "apps/v1"
    kind: str | None = "DaemonSet"
    metadata: ObjectMeta | None = None
    spec: DaemonSetSpec | None = None
    status: DaemonSetStatus | None = None


# --- StatefulSet ----------------------------------------------------------------------------------


class RollingUpdateStatefulSetStrategy(K8sModel):
    partition: int | None = None  # only ordinals >= partition are updated
    # Pods that may be unavailable during the update: a number or a percentage (default 1).
    max_unavailable: IntOrString | None = None


class StatefulSetUpdateStrategy(K8sModel):
    """How a StatefulSet replaces its pods when the template changes."""

    type: str | None = None  # RollingUpdate (default) or OnDelete
    # Settings of the RollingUpdate strategy.
    rolling_update: RollingUpdateStatefulSetStrategy | None = None


class StatefulSetSpec(K8sModel):
    """The desired state of a StatefulSet: numbered pods with stable names and storage, created and updated in order.
    """

    # How many pods to run (default 1).
    replicas: int | None = None
    # Which pods belong to this StatefulSet; must match the template's labels.
    selector: LabelSelector | None = None
    # The pod each ordinal runs; pods are named <statefulset>-0, -1, ...
    template: PodTemplateSpec | None = None
    volume_claim_templates: list[FreeDict] | None = None  # PersistentVolumeClaims, kept verbatim
    service_name: str | None = None  # the headless Service giving pods stable DNS names
    pod_management_policy: str | None = None  # OrderedReady (default) or Parallel
    # How to replace the pods when the template changes.
    update_strategy: StatefulSetUpdateStrategy | None = None
    # Old revisions kept for rollback (default 10).
    revision_history_limit: int | None = None
    # Seconds a new pod must be ready before it counts as available (default 0).
    min_ready_seconds: int | None = None
    # Whether the claims are deleted with the StatefulSet or when it scales down.
    persistent_volume_claim_retention_policy: FreeDict | None = None
    # The number the first pod gets (default 0).
    ordinals: FreeDict | None = None


class StatefulSetCondition(BaseCondition):
    pass


class StatefulSetStatus(K8sModel):
    """The observed state of a StatefulSet."""

    observed_generation: Int64 | None = None
    # Pods the StatefulSet has created.
    replicas: int | None = None
    # Pods that pass their readiness checks.
    ready_replicas: int | None = None
    # Pods at the currentRevision.
    current_replicas: int | None = None
    # Pods at the updateRevision.
    updated_replicas: int | None = None
    # The revision of the pods before the update in progress.
    current_revision: str | None = None
    # The revision the pods are being updated to.
    update_revision: str | None = None
    # Salts the name of new revisions after a hash collision.
    collision_count: int | None = None
    # The latest observations of the StatefulSet's state.
    conditions: list[StatefulSetCondition] | None = None
    # Pods ready for at least minReadySeconds.
    available_replicas: int | None = None


class StatefulSet(K8sModel):
    """A StatefulSet runs pods with stable identities: each has a fixed ordinal name, a stable DNS name through a
    headless Service, and its own storage."""

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
