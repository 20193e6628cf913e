"""The kind registry: every resource type the API server serves, in one table.

Kubernetes names one thing in several ways, and every part of the system needs a different one:
- URL routing uses group, version and *plural*: `/apis/apps/v1/namespaces/x/deployments`.
- Storage keys and error messages use the *resource key*: `deployments.apps "web" not found`.
- Objects say who they are by `apiVersion` + `kind`: `apps/v1`, `Deployment`.
- People type short names, singulars and kinds: `kubectl get deploy`, `kubectl get Deployment`.
- Discovery (`/api/v1`, `/apis/apps/v1`) publishes all of it - plus verbs, short names,
  categories ("all") and subresources - so that `kubectl` can do the same translation.

This module is the single source for all of those mappings; the facts in `_RESOURCES` (short
names, categories, verbs, which kinds are namespaced) are Kubernetes' own, as
`kubectl api-resources -o wide` prints them against a 1.32 cluster.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass

# Verb sets as discovery lists them (alphabetical, like the real API server).
_ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_NO_DELETECOLLECTION = ("create", "delete", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    group: str  # "" for the core (legacy) group
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...]
    categories: tuple[str, ...]  # ("all",) where Kubernetes has it: `kubectl get all`
    subresources: tuple[str, ...]  # e.g. ("status", "binding", "log", "eviction") for pods
    verbs: tuple[str, ...]  # discovery verbs of the main resource
    model_ref: str  # "core_v1.Pod": the pydantic class of one object, in api.models (imported lazily)
    list_kind: str  # e.g. "PodList"
    list_model_ref: str = ""  # "core_v1.PodList"

    @property
    def model(self) -> type:
        """The pydantic class of one object. Imported on first use: building every model costs
        about half a second, which a command-line tool that only needs names should not pay."""
        return _load_model(self.model_ref)

    @property
    def list_model(self) -> type | None:
        return _load_model(self.list_model_ref) if self.list_model_ref else None

    @property
    def key(self) -> str:
        """"pods" for the core group, "deployments.apps" otherwise: storage and error names."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        """"v1" for the core group, "apps/v1" otherwise: the objects' apiVersion."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version


@dataclass(frozen=True)
class Subresource:
    """What discovery says about `<plural>/<name>`: its kind (maybe from another group) and verbs."""

    name: str
    group: str
    version: str
    kind: str
    verbs: tuple[str, ...]


def _rt(
    group: str,
    version: str,
    kind: str,
    plural: str,
    model: str,
    list_model: str,
    *,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    all_: bool = False,
    sub: tuple[str, ...] = (),
    verbs: tuple[str, ...] = _ALL_VERBS,
    singular: str | None = None,
) -> ResourceType:
    return ResourceType(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        singular=singular or kind.lower(),
        namespaced=namespaced,
        short_names=short,
        categories=("all",) if all_ else (),
        subresources=sub,
        verbs=verbs,
        model_ref=model,
        list_kind=kind + "List",
        list_model_ref=list_model,
    )


_RBAC = "rbac.authorization.k8s.io"
_NET = "networking.k8s.io"

# Order matters twice: discovery lists groups in this order (core first), and resolve() returns
# matches in this order.
_RESOURCES: tuple[ResourceType, ...] = (
    # core/v1
    _rt("", "v1", "Pod", "pods", "core_v1.Pod", "core_v1.PodList", short=("po",), all_=True,
        sub=("status", "binding", "log", "eviction", "ephemeralcontainers", "exec", "attach", "portforward")),
    _rt("", "v1", "Node", "nodes", "core_v1.Node", "core_v1.NodeList", namespaced=False, short=("no",),
        sub=("status",)),
    _rt("", "v1", "Namespace", "namespaces", "core_v1.Namespace", "core_v1.NamespaceList", namespaced=False,
        short=("ns",), sub=("status", "finalize"), verbs=_NO_DELETECOLLECTION),
    _rt("", "v1", "Service", "services", "core_v1.Service", "core_v1.ServiceList", short=("svc",), all_=True,
        sub=("status",)),
    _rt("", "v1", "Endpoints", "endpoints", "core_v1.Endpoints", "core_v1.EndpointsList", short=("ep",),
        singular="endpoints"),
    _rt("", "v1", "Event", "events", "core_v1.Event", "core_v1.EventList", short=("ev",)),
    _rt("", "v1", "ConfigMap", "configmaps", "core_v1.ConfigMap", "core_v1.ConfigMapList", short=("cm",)),
    _rt("", "v1", "Secret", "secrets", "core_v1.Secret", "core_v1.SecretList"),
    _rt("", "v1", "ReplicationController", "replicationcontrollers", "core_v1.ReplicationController",
        "core_v1.ReplicationControllerList", short=("rc",), all_=True, sub=("status", "scale")),
    _rt("", "v1", "ServiceAccount", "serviceaccounts", "core_v1.ServiceAccount", "core_v1.ServiceAccountList",
        short=("sa",), sub=("token",)),
    _rt("", "v1", "ResourceQuota", "resourcequotas", "core_v1.ResourceQuota", "core_v1.ResourceQuotaList",
        short=("quota",), sub=("status",)),
    _rt("", "v1", "LimitRange", "limitranges", "core_v1.LimitRange", "core_v1.LimitRangeList", short=("limits",)),
    _rt("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "core_v1_storage.PersistentVolumeClaim",
        "core_v1_storage.PersistentVolumeClaimList", short=("pvc",), sub=("status",)),
    _rt("", "v1", "PersistentVolume", "persistentvolumes", "core_v1_storage.PersistentVolume",
        "core_v1_storage.PersistentVolumeList", namespaced=False, short=("pv",), sub=("status",)),
    # apps/v1
    _rt("apps", "v1", "Deployment", "deployments", "apps_v1.Deployment", "apps_v1.DeploymentList",
        short=("deploy",), all_=True, sub=("status", "scale")),
    _rt("apps", "v1", "ReplicaSet", "replicasets", "apps_v1.ReplicaSet", "apps_v1.ReplicaSetList",
        short=("rs",), all_=True, sub=("status", "scale")),
    _rt("apps", "v1", "DaemonSet", "daemonsets", "apps_v1.DaemonSet", "apps_v1.DaemonSetList",
        short=("ds",), all_=True, sub=("status",)),
    _rt("apps", "v1", "StatefulSet", "statefulsets", "apps_v1.StatefulSet", "apps_v1.StatefulSetList",
        short=("sts",), all_=True, sub=("status", "scale")),
    _rt("apps", "v1", "ControllerRevision", "controllerrevisions", "apps_v1_revision.ControllerRevision",
        "apps_v1_revision.ControllerRevisionList"),
    # batch/v1
    _rt("batch", "v1", "Job", "jobs", "batch_v1.Job", "batch_v1.JobList", all_=True, sub=("status",)),
    _rt("batch", "v1", "CronJob", "cronjobs", "batch_v1.CronJob", "batch_v1.CronJobList", short=("cj",), all_=True,
        sub=("status",)),
    # autoscaling/v2
    _rt("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
        "autoscaling.HorizontalPodAutoscaler", "autoscaling.HorizontalPodAutoscalerList",
        short=("hpa",), all_=True, sub=("status",)),
    # autoscaling/v1: the same objects (stored as v2), served by conversion (apiserver/hpa_v1.py).
    _rt("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
        "autoscaling.HorizontalPodAutoscalerV1", "autoscaling.HorizontalPodAutoscalerListV1",
        short=("hpa",), all_=True, sub=("status",)),
    # networking.k8s.io/v1
    _rt(_NET, "v1", "Ingress", "ingresses", "networking_v1.Ingress", "networking_v1.IngressList",
        short=("ing",), sub=("status",)),
    _rt(_NET, "v1", "IngressClass", "ingressclasses", "networking_v1.IngressClass",
        "networking_v1.IngressClassList", namespaced=False),
    _rt(_NET, "v1", "NetworkPolicy", "networkpolicies", "networking_v1.NetworkPolicy",
        "networking_v1.NetworkPolicyList", short=("netpol",)),
    # policy/v1
    _rt("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "policy_v1_pdb.PodDisruptionBudget",
        "policy_v1_pdb.PodDisruptionBudgetList", short=("pdb",), sub=("status",)),
    # storage.k8s.io/v1
    _rt("storage.k8s.io", "v1", "StorageClass", "storageclasses", "storage_v1.StorageClass",
        "storage_v1.StorageClassList", namespaced=False, short=("sc",)),
    # scheduling.k8s.io/v1
    _rt("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", "scheduling_v1.PriorityClass",
        "scheduling_v1.PriorityClassList", namespaced=False, short=("pc",)),
    # discovery.k8s.io/v1
    _rt("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", "discovery_v1.EndpointSlice",
        "discovery_v1.EndpointSliceList"),
    # coordination.k8s.io/v1
    _rt("coordination.k8s.io", "v1", "Lease", "leases", "coordination_v1.Lease",
        "coordination_v1.LeaseList"),
    # rbac.authorization.k8s.io/v1
    _rt(_RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", "rbac_v1.ClusterRoleBinding",
        "rbac_v1.ClusterRoleBindingList", namespaced=False),
    _rt(_RBAC, "v1", "ClusterRole", "clusterroles", "rbac_v1.ClusterRole", "rbac_v1.ClusterRoleList",
        namespaced=False),
    _rt(_RBAC, "v1", "RoleBinding", "rolebindings", "rbac_v1.RoleBinding", "rbac_v1.RoleBindingList"),
    _rt(_RBAC, "v1", "Role", "roles", "rbac_v1.Role", "rbac_v1.RoleList"),
    # apiregistration.k8s.io/v1: the aggregation layer's table (apiserver/aggregator/)
    _rt("apiregistration.k8s.io", "v1", "APIService", "apiservices", "apiregistration_v1.APIService",
        "apiregistration_v1.APIServiceList", namespaced=False, sub=("status",)),
)

# Subresources: most keep the parent's kind; some speak a kind of their own (from another group).
_SCALE = ("autoscaling", "v1", "Scale")
_SUBRESOURCE_VERBS: dict[str, tuple[str, ...]] = {
    "status": ("get", "patch", "update"),
    "scale": ("get", "patch", "update"),
    "binding": ("create",),
    "eviction": ("create",),
    "log": ("get",),
    "finalize": ("update",),
    "ephemeralcontainers": ("get", "patch", "update"),
    "token": ("create",),
    "exec": ("create", "get"),  # connect subresources: a WebSocket GET, or SPDY's POST
    "attach": ("create", "get"),
    "portforward": ("create", "get"),
}
_SUBRESOURCE_KIND: dict[str, tuple[str, str, str]] = {
    "scale": _SCALE,
    "eviction": ("policy", "v1", "Eviction"),
    "binding": ("", "v1", "Binding"),
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
    "exec": ("", "v1", "PodExecOptions"),
    "attach": ("", "v1", "PodAttachOptions"),
    "portforward": ("", "v1", "PodPortForwardOptions"),
}

# Models of kinds that are not resources of their own but travel through subresources.
_SUBRESOURCE_MODELS: dict[tuple[str, str], str] = {
    ("autoscaling/v1", "Scale"): "autoscaling.Scale",
    ("policy/v1", "Eviction"): "policy_v1.Eviction",
    ("v1", "Binding"): "core_v1.Binding",
}


def subresource_model(api_version: str, kind: str) -> type | None:
    """The model of a kind that only travels through a subresource (Scale, Eviction, Binding)."""
    ref = _SUBRESOURCE_MODELS.get((api_version, kind))
    return _load_model(ref) if ref else None


@functools.cache
def _load_model(ref: str) -> type:
    module, _, name = ref.partition(".")
    return getattr(importlib.import_module(f"api.models.{module}"), name)  # type: ignore[no-any-return]

_BY_GVR = {(rt.group, rt.version, rt.plural): rt for rt in _RESOURCES}
# The first version listed of a resource is its storage (and preferred) version; later versions of
# the same resource are served by conversion and share its store.
_BY_KEY: dict[str, ResourceType] = {}
for _r in _RESOURCES:
    _BY_KEY.setdefault(_r.key, _r)
_STORED = tuple(_BY_KEY.values())
_BY_KIND = {(rt.api_version, rt.kind): rt for rt in _RESOURCES}


def all_resources() -> list[ResourceType]:
    """Every resource once, in its storage version (what stores, caches and controllers iterate)."""
    return list(_STORED)


def is_converted(rt: ResourceType) -> bool:
    """True for a version served by conversion from the stored one (autoscaling/v1 HPAs)."""
    return _BY_KEY[rt.key] is not rt


def lookup(group: str, version: str, plural: str) -> ResourceType | None:
    """The resource behind a URL: `/apis/<group>/<version>/.../<plural>`."""
    return _BY_GVR.get((group, version, plural))


def by_key(key: str) -> ResourceType | None:
    """"pods" or "deployments.apps" -> the resource type."""
    return _BY_KEY.get(key)


def by_kind(api_version: str, kind: str) -> ResourceType | None:
    """The resource an object belongs to, from its own `apiVersion` and `kind`."""
    return _BY_KIND.get((api_version, kind))


def _names(rt: ResourceType) -> set[str]:
    return {rt.plural, rt.singular, rt.kind.lower(), *rt.short_names}


def resolve(name: str) -> list[ResourceType]:
    """What kubectl means by `kubectl get <name>`; matches in registry order.

    Accepts the plural (`deployments`), singular (`deployment`), short name (`deploy`), kind in
    any case (`Deployment`), each optionally qualified by group (`deployments.apps`,
    `deploy.apps`) or by version and group (`deployments.v1.apps`).
    """
    wanted = name.strip().lower()
    found = [rt for rt in _STORED if wanted in _names(rt)]
    if found or "." not in wanted:
        return found
    head, qualifier = wanted.split(".", 1)
    return [
        rt
        for rt in _RESOURCES
        if rt.group and head in _names(rt) and qualifier in (rt.group, f"{rt.version}.{rt.group}")
        and (rt in _STORED or qualifier != rt.group)
    ]


def by_category(category: str) -> list[ResourceType]:
    """`kubectl get all` expands the "all" category to these, in registry order."""
    return [rt for rt in _STORED if category in rt.categories]


def groups() -> list[tuple[str, list[str]]]:
    """(group, versions) for discovery, core ("") first, then in registry order."""
    seen: dict[str, list[str]] = {}
    for rt in _RESOURCES:
        versions = seen.setdefault(rt.group, [])
        if rt.version not in versions:
            versions.append(rt.version)
    return list(seen.items())


def resources_in(group: str, version: str) -> list[ResourceType]:
    """Everything `/api/v1` or `/apis/<group>/<version>` lists."""
    return [rt for rt in _RESOURCES if rt.group == group and rt.version == version]


def subresource(rt: ResourceType, name: str) -> Subresource | None:
    """Discovery facts for `<rt.plural>/<name>`, or None if `rt` has no such subresource."""
    if name not in rt.subresources:
        return None
    group, version, kind = _SUBRESOURCE_KIND.get(name, (rt.group, rt.version, rt.kind))
    return Subresource(name=name, group=group, version=version, kind=kind, verbs=_SUBRESOURCE_VERBS[name])
