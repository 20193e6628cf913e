"""Every resource type the server serves, with one minimal valid object each: the fuzzer's seeds.

Kept as a plain table here (not imported from `api.registry`) so the fuzz suite treats the server
as a black box, the way kubectl does: if the registry and this table disagree, requests the
fuzzer believes are valid come back 404, which the suite reports instead of silently adapting.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    subresources: tuple[str, ...]
    spec: dict[str, Any] = field(default_factory=dict)  # top-level fields besides metadata

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else "/api/v1"

    def collection_path(self, namespace: str) -> str:
        if self.namespaced:
            return f"{self.prefix}/namespaces/{namespace}/{self.plural}"
        return f"{self.prefix}/{self.plural}"

    def object(self, name: str, namespace: str | None = None) -> dict[str, Any]:
        md: dict[str, Any] = {"name": name, "labels": {"app": "fuzz"}}
        if self.namespaced and namespace:
            md["namespace"] = namespace
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": md, **copy.deepcopy(self.spec)}


_LABELS = {"app": "fuzz"}
_POD_SPEC = {"containers": [{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]}
_TEMPLATE = {"metadata": {"labels": _LABELS}, "spec": _POD_SPEC}
_JOB_TEMPLATE = {"metadata": {"labels": _LABELS}, "spec": {**_POD_SPEC, "restartPolicy": "Never"}}
_WORKLOAD = {"spec": {"replicas": 1, "selector": {"matchLabels": _LABELS}, "template": _TEMPLATE}}
_RULES = {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}
_SUBJECTS = [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}]
_RBAC = "rbac.authorization.k8s.io"

KINDS: list[Kind] = [
    Kind("", "v1", "pods", "Pod", True, ("status", "binding", "log", "eviction"), {"spec": _POD_SPEC}),
    Kind("", "v1", "nodes", "Node", False, ("status",), {"spec": {"unschedulable": False}}),
    Kind("", "v1", "namespaces", "Namespace", False, ("status", "finalize")),
    Kind("", "v1", "services", "Service", True, ("status",),
         {"spec": {"selector": _LABELS, "ports": [{"port": 80, "targetPort": 8080}]}}),
    Kind("", "v1", "endpoints", "Endpoints", True, (),
         {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}),
    Kind("", "v1", "events", "Event", True, (),
         {"involvedObject": {"kind": "Pod", "name": "x"}, "reason": "Fuzzed", "message": "m", "type": "Normal"}),
    Kind("", "v1", "configmaps", "ConfigMap", True, (), {"data": {"k": "v"}}),
    Kind("", "v1", "secrets", "Secret", True, (), {"type": "Opaque", "data": {"k": "dg=="}}),
    Kind("", "v1", "replicationcontrollers", "ReplicationController", True, ("status", "scale"),
         {"spec": {"replicas": 1, "selector": _LABELS, "template": _TEMPLATE}}),
    Kind("", "v1", "serviceaccounts", "ServiceAccount", True, ()),
    # It counts nothing the other seeded objects are: no controller runs here to give it a status,
    # and until one does, admission refuses everything a quota counts ("status unknown").
    Kind("", "v1", "resourcequotas", "ResourceQuota", True, ("status",),
         {"spec": {"hard": {"count/widgets.example.com": "100"}}}),
    Kind("", "v1", "limitranges", "LimitRange", True, (),
         {"spec": {"limits": [{"type": "Container", "default": {"cpu": "100m"}}]}}),
    Kind("apps", "v1", "deployments", "Deployment", True, ("status", "scale"), _WORKLOAD),
    Kind("apps", "v1", "replicasets", "ReplicaSet", True, ("status", "scale"), _WORKLOAD),
    Kind("apps", "v1", "daemonsets", "DaemonSet", True, ("status",),
         {"spec": {"selector": {"matchLabels": _LABELS}, "template": _TEMPLATE}}),
    Kind("apps", "v1", "statefulsets", "StatefulSet", True, ("status", "scale"),
         {"spec": {**_WORKLOAD["spec"], "serviceName": "x"}}),
    Kind("batch", "v1", "jobs", "Job", True, ("status",), {"spec": {"template": _JOB_TEMPLATE}}),
    Kind("batch", "v1", "cronjobs", "CronJob", True, ("status",),
         {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": _JOB_TEMPLATE}}}}),
    Kind("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("status",),
         {"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
                   "minReplicas": 1, "maxReplicas": 3}}),
    Kind("coordination.k8s.io", "v1", "leases", "Lease", True, (),
         {"spec": {"holderIdentity": "fuzz", "leaseDurationSeconds": 15}}),
    Kind(_RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", False, (),
         {"roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": "x"}, "subjects": _SUBJECTS}),
    Kind(_RBAC, "v1", "clusterroles", "ClusterRole", False, (), _RULES),
    Kind(_RBAC, "v1", "rolebindings", "RoleBinding", True, (),
         {"roleRef": {"apiGroup": _RBAC, "kind": "Role", "name": "x"}, "subjects": _SUBJECTS}),
    Kind(_RBAC, "v1", "roles", "Role", True, (), _RULES),
]

BY_PLURAL = {k.plural: k for k in KINDS}
