"""Patch metadata: which lists merge by which key, per resource type.

A strategic merge patch needs to know, for every list in an object, what "the same item" means.
Kubernetes keeps that knowledge in Go struct tags on the types in k8s.io/api, for example

    Containers []Container `json:"containers" patchStrategy:"merge" patchMergeKey:"name"`

and the patch code reads them by reflection. We keep the same facts as data: a small table of
*types* (PodSpec, Container, ObjectMeta, ...) listing only the fields that carry a patch
strategy or lead to a type that does, and a map from each resource key ("pods",
"deployments.apps", ...) to its root type. Nested paths then resolve naturally:
Deployment.spec -> DeploymentSpec.template -> PodTemplateSpec.spec -> PodSpec.containers ->
Container.ports (merge key containerPort).

Strategies, as in the struct tags:
- "merge" on a list of objects: items are matched by `merge_key` and merged one by one;
- "merge" on a list of scalars (e.g. `finalizers`): the list is treated as a set (union);
- "retainKeys" on an object (e.g. `DeploymentSpec.strategy`): the patch may carry a
  `$retainKeys` list and every key not listed is cleared; this is how switching a Deployment
  from RollingUpdate to Recreate drops the old `rollingUpdate` block;
- "replace" (rare): the value is replaced wholesale;
- no strategy: objects merge key by key, lists are replaced (e.g. `tolerations`, `taints`,
  `endpoints.subsets`, `command`). Unknown resources and fields get this default too.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """Patch metadata for one field: its struct type (for objects and list items) and strategy."""

    type: str | None = None
    strategy: str = ""  # "", "merge", "replace", "retainKeys" or "merge,retainKeys" as in the tags
    merge_key: str = ""


@dataclass(frozen=True)
class PatchMeta:
    """The parsed strategy of a field: the main strategy plus whether retainKeys applies."""

    strategy: str  # "merge", "replace" or "" (no strategy: merge objects, replace lists)
    merge_key: str
    retain_keys: bool


def _merge(key: str = "", type: str | None = None, retain_keys: bool = False) -> Field:
    return Field(type=type, strategy="merge,retainKeys" if retain_keys else "merge", merge_key=key)


_CONDITIONS = _merge("type")  # status.conditions on nearly every kind merge by `type`

# Field tables, transcribed from the patchStrategy/patchMergeKey tags in k8s.io/api (v1.32).
# Only fields that matter for patching are listed; everything else gets the default.
TYPES: dict[str, dict[str, Field]] = {
    "ObjectMeta": {
        "finalizers": _merge(),
        "ownerReferences": _merge("uid"),
    },
    "PodTemplateSpec": {"metadata": Field("ObjectMeta"), "spec": Field("PodSpec")},
    "PodSpec": {
        "volumes": _merge("name", retain_keys=True),
        "initContainers": _merge("name", "Container"),
        "containers": _merge("name", "Container"),
        "ephemeralContainers": _merge("name", "Container"),
        "imagePullSecrets": _merge("name"),
        "hostAliases": _merge("ip"),
        "topologySpreadConstraints": _merge("topologyKey"),
        "schedulingGates": _merge("name"),
        "resourceClaims": _merge("name", retain_keys=True),
        # tolerations, readinessGates: no strategy, so a patch replaces the whole list.
    },
    "Container": {
        "ports": _merge("containerPort"),
        "env": _merge("name"),
        "volumeMounts": _merge("mountPath"),
        "volumeDevices": _merge("devicePath"),
        # command, args, envFrom, resizePolicy: atomic lists, replaced by a patch.
    },
    "PodStatus": {
        "conditions": _CONDITIONS,
        "podIPs": _merge("ip"),
        "hostIPs": _merge("ip"),
        "resourceClaimStatuses": _merge("name", retain_keys=True),
        # containerStatuses and friends carry no strategy: the kubelet sends them whole.
    },
    "Pod": {"metadata": Field("ObjectMeta"), "spec": Field("PodSpec"), "status": Field("PodStatus")},
    "Node": {
        "metadata": Field("ObjectMeta"),
        "spec": Field("NodeSpec"),
        "status": Field("NodeStatus"),
    },
    "NodeSpec": {"podCIDRs": _merge()},  # taints: no strategy
    "NodeStatus": {"conditions": _CONDITIONS, "addresses": _merge("type")},
    "Namespace": {"metadata": Field("ObjectMeta"), "status": Field("NamespaceStatus")},
    "NamespaceStatus": {"conditions": _CONDITIONS},
    "Service": {
        "metadata": Field("ObjectMeta"),
        "spec": Field("ServiceSpec"),
        "status": Field("ServiceStatus"),
    },
    "ServiceSpec": {"ports": _merge("port")},
    "ServiceStatus": {"conditions": _CONDITIONS},
    "ServiceAccount": {"metadata": Field("ObjectMeta"), "secrets": _merge("name")},
    "ReplicationController": {
        "metadata": Field("ObjectMeta"),
        "spec": Field("ReplicationControllerSpec"),
        "status": Field("WorkloadStatus"),
    },
    "ReplicationControllerSpec": {"template": Field("PodTemplateSpec")},
    # Deployment, ReplicaSet, DaemonSet, StatefulSet, RC, Job and HPA statuses all tag
    # `conditions` with patchStrategy=merge, patchMergeKey=type and nothing else.
    "WorkloadStatus": {"conditions": _CONDITIONS},
    "Deployment": {
        "metadata": Field("ObjectMeta"),
        "spec": Field("DeploymentSpec"),
        "status": Field("WorkloadStatus"),
    },
    "DeploymentSpec": {
        "template": Field("PodTemplateSpec"),
        "strategy": Field(strategy="retainKeys"),
    },
    "WorkloadWithTemplate": {
        "metadata": Field("ObjectMeta"),
        "spec": Field("TemplateSpec"),
        "status": Field("WorkloadStatus"),
    },
    # ReplicaSetSpec, DaemonSetSpec, StatefulSetSpec and JobSpec: only `template` matters.
    "TemplateSpec": {"template": Field("PodTemplateSpec")},
    "CronJob": {"metadata": Field("ObjectMeta"), "spec": Field("CronJobSpec")},
    "CronJobSpec": {"jobTemplate": Field("JobTemplateSpec")},
    "JobTemplateSpec": {"metadata": Field("ObjectMeta"), "spec": Field("TemplateSpec")},
    "HorizontalPodAutoscaler": {"metadata": Field("ObjectMeta"), "status": Field("WorkloadStatus")},
    # Kinds whose only patch metadata is in ObjectMeta (endpoints.subsets, RBAC rules and
    # subjects, limit ranges, quotas, leases, events, configmaps, secrets have no strategy).
    "Object": {"metadata": Field("ObjectMeta")},
}

# Server-side apply keys list items by *all* of Kubernetes' x-kubernetes-list-map-keys; where
# those are more than the strategic merge key, they are listed here (owner type.field -> keys).
LIST_MAP_KEYS: dict[str, tuple[str, ...]] = {
    "Container.ports": ("containerPort", "protocol"),
    "ServiceSpec.ports": ("port", "protocol"),
}

# Resource key (see the helper brief: plural, or plural.group) -> root type.
RESOURCE_TYPES: dict[str, str] = {
    "pods": "Pod",
    "nodes": "Node",
    "namespaces": "Namespace",
    "services": "Service",
    "endpoints": "Object",
    "events": "Object",
    "configmaps": "Object",
    "secrets": "Object",
    "replicationcontrollers": "ReplicationController",
    "serviceaccounts": "ServiceAccount",
    "resourcequotas": "Object",
    "limitranges": "Object",
    "deployments.apps": "Deployment",
    "replicasets.apps": "WorkloadWithTemplate",
    "daemonsets.apps": "WorkloadWithTemplate",
    "statefulsets.apps": "WorkloadWithTemplate",
    "jobs.batch": "WorkloadWithTemplate",
    "cronjobs.batch": "CronJob",
    "horizontalpodautoscalers.autoscaling": "HorizontalPodAutoscaler",
    "leases.coordination.k8s.io": "Object",
    "roles.rbac.authorization.k8s.io": "Object",
    "clusterroles.rbac.authorization.k8s.io": "Object",
    "rolebindings.rbac.authorization.k8s.io": "Object",
    "clusterrolebindings.rbac.authorization.k8s.io": "Object",
}


@dataclass(frozen=True)
class Schema:
    """A position in a resource's type tree: ask it about one field at a time.

    `Schema(None)` is the "unknown" schema: every field has no strategy and leads to another
    unknown schema, which gives plain merge-patch behaviour (objects merge, lists replace).
    """

    type_name: str | None

    def lookup(self, field: str) -> tuple[PatchMeta, "Schema"]:
        """Patch metadata for `field` and the schema of its value (or of its list items)."""
        spec = TYPES.get(self.type_name or "", {}).get(field, Field())
        strategies = [s for s in spec.strategy.split(",") if s]
        main = next((s for s in strategies if s != "retainKeys"), "")
        return (
            PatchMeta(strategy=main, merge_key=spec.merge_key, retain_keys="retainKeys" in strategies),
            Schema(spec.type),
        )


def schema_for(resource: str) -> Schema:
    """The root schema for a resource key such as "pods" or "deployments.apps"."""
    return Schema(RESOURCE_TYPES.get(resource))
