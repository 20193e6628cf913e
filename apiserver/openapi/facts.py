"""What Kubernetes' own schema says about fields that our models cannot say: required fields,
list semantics, patch strategies.

Our models make every field optional (decoding must never fail on a missing field; "Required
value" is validation's job, with a better message). Kubernetes' published schema still marks
some fields required, and `kubectl explain` prints `-required-` after them, so we publish the
same marks: `REQUIRED` lists them per model class.

`LIST_FACTS` carries the `x-kubernetes-*` markers Kubernetes puts on list and map fields:
- `x-kubernetes-list-type`: "atomic" (replaced whole), "set" (scalars, unique), or "map" (items
  identified by `x-kubernetes-list-map-keys`);
- `x-kubernetes-map-type`: "atomic" for maps that are replaced whole (a Service selector);
- `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key`: how a strategic merge patch
  matches list items. kubectl reads these from /openapi/v3 to compute `kubectl apply` patches,
  so they must agree with the server's own patch code: the patch facts below come from
  api/patch/schema.py (`TYPES`) wherever that table names the same type, and a test keeps the
  two in step.

The facts are Kubernetes' (k8s.io/api struct tags, as the published v1.32 schema carries them);
only the table is ours. Classes and fields not listed simply carry no marker.
"""

from __future__ import annotations

from typing import Any

_ITEMS = ["items"]
_CONDITION = ["type", "status"]

# Model class name -> wire names of the fields Kubernetes marks required.
REQUIRED: dict[str, list[str]] = {
    # meta
    "Condition": ["type", "status", "lastTransitionTime", "reason", "message"],
    "LabelSelectorRequirement": ["key", "operator"],
    "OwnerReference": ["apiVersion", "kind", "name", "uid"],
    # core/v1: pods
    "Container": ["name"],
    "ContainerPort": ["containerPort"],
    "ContainerStateTerminated": ["exitCode"],
    "ContainerStatus": ["name", "ready", "restartCount", "image", "imageID"],
    "EnvVar": ["name"],
    "HTTPGetAction": ["port"],
    "TCPSocketAction": ["port"],
    "NodeSelector": ["nodeSelectorTerms"],
    "NodeSelectorRequirement": ["key", "operator"],
    "PodAffinityTerm": ["topologyKey"],
    "WeightedPodAffinityTerm": ["weight", "podAffinityTerm"],
    "PreferredSchedulingTerm": ["weight", "preference"],
    "PodCondition": _CONDITION,
    "PodSpec": ["containers"],
    "TopologySpreadConstraint": ["maxSkew", "topologyKey", "whenUnsatisfiable"],
    "Volume": ["name"],
    "VolumeMount": ["name", "mountPath"],
    "PodIP": ["ip"],
    "HostIP": ["ip"],
    # core/v1: the rest
    "Binding": ["target"],
    "DaemonEndpoint": ["Port"],
    "EndpointAddress": ["ip"],
    "EndpointPort": ["port"],
    "Event": ["metadata", "involvedObject"],
    "LimitRangeItem": ["type"],
    "LimitRangeSpec": ["limits"],
    "NamespaceCondition": _CONDITION,
    "NodeAddress": ["type", "address"],
    "NodeCondition": _CONDITION,
    "NodeSystemInfo": [
        "machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
        "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture",
    ],
    "ReplicationControllerCondition": _CONDITION,
    "ReplicationControllerStatus": ["replicas"],
    "ServicePort": ["port"],
    "Taint": ["key", "effect"],
    # apps/v1
    "DeploymentSpec": ["selector", "template"],
    "DeploymentCondition": _CONDITION,
    "ReplicaSetSpec": ["selector"],
    "ReplicaSetStatus": ["replicas"],
    "ReplicaSetCondition": _CONDITION,
    "DaemonSetSpec": ["selector", "template"],
    "DaemonSetStatus": ["currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady"],
    "DaemonSetCondition": _CONDITION,
    "StatefulSetSpec": ["selector", "template"],
    "StatefulSetStatus": ["replicas"],
    "StatefulSetCondition": _CONDITION,
    # batch/v1
    "JobSpec": ["template"],
    "JobCondition": _CONDITION,
    "CronJobSpec": ["schedule", "jobTemplate"],
    # autoscaling
    "ScaleStatus": ["replicas"],
    "CrossVersionObjectReference": ["kind", "name"],
    "HPAScalingPolicy": ["type", "value", "periodSeconds"],
    "HorizontalPodAutoscalerCondition": _CONDITION,
    "HorizontalPodAutoscalerSpec": ["scaleTargetRef", "maxReplicas"],
    "HorizontalPodAutoscalerSpecV1": ["scaleTargetRef", "maxReplicas"],
    "HorizontalPodAutoscalerStatus": ["desiredReplicas"],
    "HorizontalPodAutoscalerStatusV1": ["currentReplicas", "desiredReplicas"],
    "MetricSpec": ["type"],
    "MetricStatus": ["type"],
    "MetricTarget": ["type"],
    "ResourceMetricSource": ["name", "target"],
    "ResourceMetricStatus": ["name", "current"],
    # rbac.authorization.k8s.io/v1
    "PolicyRule": ["verbs"],
    "Subject": ["kind", "name"],
    "RoleRef": ["apiGroup", "kind", "name"],
    "RoleBinding": ["roleRef"],
    "ClusterRoleBinding": ["roleRef"],
}


def _atomic() -> dict[str, Any]:
    return {"x-kubernetes-list-type": "atomic"}


def _map(*keys: str) -> dict[str, Any]:
    return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": list(keys)}


_ATOMIC_MAP = {"x-kubernetes-map-type": "atomic"}

# Model class name -> field wire name -> list/map markers (patch markers come from api/patch/schema.py).
LIST_FACTS: dict[str, dict[str, dict[str, Any]]] = {
    "ObjectMeta": {"finalizers": {"x-kubernetes-list-type": "set"}, "ownerReferences": _map("uid")},
    "Container": {"ports": _map("containerPort", "protocol"), "resizePolicy": _atomic(),
                  "command": _atomic(), "args": _atomic()},
    "PodSpec": {
        "nodeSelector": _ATOMIC_MAP,
        "resourceClaims": _map("name"),
        "schedulingGates": _map("name"),
        "topologySpreadConstraints": _map("topologyKey", "whenUnsatisfiable"),
    },
    "PodAffinityTerm": {"matchLabelKeys": _atomic(), "mismatchLabelKeys": _atomic()},
    "TopologySpreadConstraint": {"matchLabelKeys": _atomic()},
    "ResourceRequirements": {"claims": _map("name")},
    "LabelSelector": {"matchExpressions": _atomic()},
    "LabelSelectorRequirement": {"values": _atomic()},
    "ServiceSpec": {
        "ports": _map("port", "protocol"),
        "selector": _ATOMIC_MAP,
        "clusterIPs": _atomic(),
        "ipFamilies": _atomic(),
    },
    "ServiceStatus": {"conditions": _map("type")},
    "LoadBalancerIngress": {"ports": _atomic()},
    "ReplicationControllerSpec": {"selector": _ATOMIC_MAP},
    "HorizontalPodAutoscalerSpec": {"metrics": _atomic()},
    "HorizontalPodAutoscalerStatus": {"conditions": _map("type"), "currentMetrics": _atomic()},
    "HPAScalingRules": {"policies": _atomic()},
    "JobStatus": {"conditions": _atomic()},
    "CronJobStatus": {"active": _atomic()},
    "PolicyRule": {"verbs": _atomic(), "apiGroups": _atomic(), "resources": _atomic(),
                   "resourceNames": _atomic(), "nonResourceURLs": _atomic()},
    "ClusterRole": {"rules": _atomic()},
    "Role": {"rules": _atomic()},
    "RoleBinding": {"subjects": _atomic()},
    "ClusterRoleBinding": {"subjects": _atomic()},
    "AggregationRule": {"clusterRoleSelectors": _atomic()},
}

# Status types whose `conditions` merge by `type` (api/patch/schema.py folds them into one
# pseudo-type, "WorkloadStatus"; Kubernetes tags each of them).
CONDITION_STATUSES = (
    "DeploymentStatus", "ReplicaSetStatus", "DaemonSetStatus", "StatefulSetStatus", "JobStatus",
    "ReplicationControllerStatus", "HorizontalPodAutoscalerStatus",
)
# Fields tagged merge in Kubernetes that api/patch/schema.py does not need for patching.
EXTRA_PATCH: dict[str, dict[str, tuple[str, str]]] = {
    "LabelSelectorRequirement": {"key": ("merge", "key")},
}
