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
    replicas: int | None = None


class ScaleStatus(K8sModel):
    replicas: int | None = None
    selector: str | None = None  # serialized label selector, e.g. "app=nginx"


class Scale(K8sModel):
    api_version: str | None = "autoscaling/v1"
    kind: str | None = "Scale"
    metadata: ObjectMeta | None = None
    spec: ScaleSpec | None = None
    status: ScaleStatus | None = None


# --- autoscaling/v2 HorizontalPodAutoscaler ---------------------------------------------------------


class CrossVersionObjectReference(K8sModel):
    kind: str | None = None
    name: str | None = None
    api_version: str | None = None


class MetricTarget(K8sModel):
    type: str | None = None  # Utilization, Value, AverageValue
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None  # percent of the pods' requests


class ResourceMetricSource(K8sModel):
    name: str | None = None  # cpu, memory
    target: MetricTarget | None = None


class MetricSpec(K8sModel):
    type: str | None = None  # Resource, Pods, Object, External, ContainerResource
    resource: ResourceMetricSource | None = None
    pods: FreeDict | None = None
    object: FreeDict | None = None
    external: FreeDict | None = None
    container_resource: FreeDict | None = None


class HPAScalingPolicy(K8sModel):
    type: str | None = None  # Pods or Percent
    value: int | None = None
    period_seconds: int | None = None


class HPAScalingRules(K8sModel):
    stabilization_window_seconds: int | None = None
    select_policy: str | None = None  # Max (default), Min, Disabled
    policies: list[HPAScalingPolicy] | None = None
    tolerance: Quantity | None = None


class HorizontalPodAutoscalerBehavior(K8sModel):
    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None


class HorizontalPodAutoscalerSpec(K8sModel):
    scale_target_ref: CrossVersionObjectReference | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    metrics: list[MetricSpec] | None = None
    behavior: HorizontalPodAutoscalerBehavior | None = None


class MetricValueStatus(K8sModel):
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: int | None = None


class ResourceMetricStatus(K8sModel):
    name: str | None = None
    current: MetricValueStatus | None = None


class MetricStatus(K8sModel):
    type: str | None = None
    resource: ResourceMetricStatus | None = None
    pods: FreeDict | None = None
    object: FreeDict | None = None
    external: FreeDict | None = None
    container_resource: FreeDict | None = None


class HorizontalPodAutoscalerCondition(BaseCondition):
    pass  # AbleToScale, ScalingActive, ScalingLimited


class HorizontalPodAutoscalerStatus(K8sModel):
    observed_generation: Int64 | None = None
    last_scale_time: Time | None = None
    current_replicas: int | None = None
    desired_replicas: int | None = None
    current_metrics: list[MetricStatus] | None = None
    conditions: list[HorizontalPodAutoscalerCondition] | None = None


class HorizontalPodAutoscaler(K8sModel):
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
