"""autoscaling/v1 and autoscaling/v2: Scale and the HorizontalPodAutoscaler.

`Scale` (autoscaling/v1) is the common face of everything that has replicas: GET or PATCH
`deployments/<name>/scale` (or replicasets, statefulsets, replicationcontrollers) and you see
only `spec.replicas`, `status.replicas` and `status.selector` (a label-selector *string*).
`kubectl scale` and the HPA work through it without knowing the target's kind.

The HPA is served as autoscaling/v2 (metrics list, behavior). The older autoscaling/v1 shape
(one CPU target percentage) is modelled too, with the `V1` suffix, for clients that still use it.
"""

from __future__ import annotations

from api.models.base import FreeDict, Int64, K8sModel, Quantity, Time
from api.models.meta import BaseCondition, K8sList, ObjectMeta

# --- autoscaling/v1 Scale -------------------------------------------------------------------------


class ScaleSpec(K8sModel):
    """The desired size of a scalable object."""

    # The number of replicas wanted.
    replicas: int | None = None


class ScaleStatus(K8sModel):
    """The current size of a scalable object."""

    # The number of replicas there are.
    replicas: int | None = None
    selector: str | None = None  # serialized label selector, e.g. "app=nginx"


class Scale(K8sModel):
    """The size of any object with replicas (Deployment, ReplicaSet, StatefulSet, ReplicationController), seen
    through its scale subresource."""

    api_version: str | None = "autoscaling/v1"
    kind: str | None = "Scale"
    metadata: ObjectMeta | None = None
    spec: ScaleSpec | None = None
    status: ScaleStatus | None = None


# --- autoscaling/v2 HorizontalPodAutoscaler ---------------------------------------------------------


class CrossVersionObjectReference(K8sModel):
    """Names the object to scale."""

    kind: str | None = None
    # The object's name.
    name: str | None = None
    api_version: str | None = None


class MetricTarget(K8sModel):
    """The value a metric should have."""

    type: str | None = None  # Utilization, Value, AverageValue
    # The target value.
    value: Quantity | None = None
    # The target value averaged over the pods.
    average_value: Quantity | None = None
    average_utilization: int | None = None  # percent of the pods' requests


class ResourceMetricSource(K8sModel):
    name: str | None = None  # cpu, memory
    # The value the resource should have.
    target: MetricTarget | None = None


class MetricSpec(K8sModel):
    """One metric an HPA scales on."""

    type: str | None = None  # Resource, Pods, Object, External, ContainerResource
    # A resource (cpu, memory) of the pods, against their requests.
    resource: ResourceMetricSource | None = None
    # A metric of each pod, averaged; kept as given.
    pods: FreeDict | None = None
    # A metric of another object; kept as given.
    object: FreeDict | None = None
    # A metric from outside the cluster; kept as given.
    external: FreeDict | None = None
    # A resource of one container of the pods; kept as given.
    container_resource: FreeDict | None = None


class HPAScalingPolicy(K8sModel):
    """One allowed change: so many pods, or so many percent, per period."""

    type: str | None = None  # Pods or Percent
    # The number of pods, or the percentage.
    value: int | None = None
    # The period the change is measured over.
    period_seconds: int | None = None


class HPAScalingRules(K8sModel):
    """Limits on how fast an HPA scales in one direction."""

    # Recommendations from this many past seconds are considered, to avoid flapping.
    stabilization_window_seconds: int | None = None
    select_policy: str | None = None  # Max (default), Min, Disabled
    # The allowed changes per period.
    policies: list[HPAScalingPolicy] | None = None
    # The relative metric difference below which the HPA does nothing.
    tolerance: Quantity | None = None


class HorizontalPodAutoscalerBehavior(K8sModel):
    """How fast an HPA scales in each direction."""

    # Rules for scaling up.
    scale_up: HPAScalingRules | None = None
    # Rules for scaling down.
    scale_down: HPAScalingRules | None = None


class HorizontalPodAutoscalerSpec(K8sModel):
    """The desired state of an HPA: what to scale, between which bounds, on which metrics."""

    # The object whose replicas the HPA sets.
    scale_target_ref: CrossVersionObjectReference | None = None
    # The fewest replicas the HPA scales down to (default 1).
    min_replicas: int | None = None
    # The most replicas the HPA scales up to.
    max_replicas: int | None = None
    # The metrics that drive the replica count; the largest proposal wins (default: 80% CPU).
    metrics: list[MetricSpec] | None = None
    # How fast to scale up and down.
    behavior: HorizontalPodAutoscalerBehavior | None = None


class MetricValueStatus(K8sModel):
    """The current value of a metric."""

    # The value.
    value: Quantity | None = None
    # The value averaged over the pods.
    average_value: Quantity | None = None
    # The percentage of the pods' requests in use.
    average_utilization: int | None = None


class ResourceMetricStatus(K8sModel):
    # The resource's name.
    name: str | None = None
    # Its current value.
    current: MetricValueStatus | None = None


class MetricStatus(K8sModel):
    # The metric's source: Resource, Pods, Object, External, ContainerResource.
    type: str | None = None
    # The current value of a resource metric.
    resource: ResourceMetricStatus | None = None
    # The current value of a pods metric.
    pods: FreeDict | None = None
    # The current value of an object metric.
    object: FreeDict | None = None
    # The current value of an external metric.
    external: FreeDict | None = None
    # The current value of a container resource metric.
    container_resource: FreeDict | None = None


class HorizontalPodAutoscalerCondition(BaseCondition):
    pass  # AbleToScale, ScalingActive, ScalingLimited


class HorizontalPodAutoscalerStatus(K8sModel):
    """The observed state of an HPA."""

    # The spec generation this status describes.
    observed_generation: Int64 | None = None
    # When the HPA last changed the replica count.
    last_scale_time: Time | None = None
    # Replicas the target has now.
    current_replicas: int | None = None
    # Replicas the HPA last asked for.
    desired_replicas: int | None = None
    # The last values read for the metrics.
    current_metrics: list[MetricStatus] | None = None
    # The latest observations: AbleToScale, ScalingActive, ScalingLimited.
    conditions: list[HorizontalPodAutoscalerCondition] | None = None


class HorizontalPodAutoscaler(K8sModel):
    """A HorizontalPodAutoscaler sets the replica count of a workload from observed metrics, such as the pods' CPU
    use against their requests."""

    api_version: str | None = "autoscaling/v2"
    kind: str | None = "HorizontalPodAutoscaler"
    metadata: ObjectMeta | None = None
    spec: HorizontalPodAutoscalerSpec | None = None
    status: HorizontalPodAutoscalerStatus | None = None


class HorizontalPodAutoscalerList(K8sList[HorizontalPodAutoscaler]):
    api_version: str | None = "autoscaling/v2"
    kind: str | None = "HorizontalPodAutoscalerList"


# --- autoscaling/v1 HorizontalPodAutoscaler ---------------------------------------------------------


class HorizontalPodAutoscalerSpecV1(K8sModel):
    scale_target_ref: CrossVersionObjectReference | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    target_cpu_utilization_percentage: int | None = None  # wire: targetCPUUtilizationPercentage


class HorizontalPodAutoscalerStatusV1(K8sModel):
    observed_generation: Int64 | None = None
    last_scale_time: Time | None = None
    current_replicas: int | None = None
    desired_replicas: int | None = None
    current_cpu_utilization_percentage: int | None = None  # wire: currentCPUUtilizationPercentage


class HorizontalPodAutoscalerV1(K8sModel):
    api_version: str | None = "autoscaling/v1"
    kind: str | None = "HorizontalPodAutoscaler"
    metadata: ObjectMeta | None = None
    spec: HorizontalPodAutoscalerSpecV1 | None = None
    status: HorizontalPodAutoscalerStatusV1 | None = None


class HorizontalPodAutoscalerListV1(K8sList[HorizontalPodAutoscalerV1]):
    api_version: str | None = "autoscaling/v1"
    kind: str | None = "HorizontalPodAutoscalerList"
