"""api.registry: URL routing, kind lookup, kubectl-style names and discovery facts."""

from __future__ import annotations

from api import registry
from api.models.apps_v1 import Deployment, DeploymentList
from api.models.core_v1 import Pod

BRIEF_KEYS = {
    "pods", "nodes", "namespaces", "services", "endpoints", "events", "configmaps", "secrets",
    "replicationcontrollers", "serviceaccounts", "resourcequotas", "limitranges", "deployments.apps",
    "replicasets.apps", "daemonsets.apps", "statefulsets.apps", "jobs.batch", "cronjobs.batch",
    "horizontalpodautoscalers.autoscaling", "leases.coordination.k8s.io",
    "roles.rbac.authorization.k8s.io", "clusterroles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io",
    "persistentvolumes", "persistentvolumeclaims", "controllerrevisions.apps", "ingresses.networking.k8s.io",
    "ingressclasses.networking.k8s.io", "networkpolicies.networking.k8s.io", "poddisruptionbudgets.policy",
    "storageclasses.storage.k8s.io", "priorityclasses.scheduling.k8s.io", "endpointslices.discovery.k8s.io",
    "apiservices.apiregistration.k8s.io",
}


def _keys(types: list[registry.ResourceType]) -> list[str]:
    return [rt.key for rt in types]


def test_registry_holds_exactly_the_resources_of_the_design() -> None:
    assert {rt.key for rt in registry.all_resources()} == BRIEF_KEYS


def test_only_nodes_namespaces_and_cluster_rbac_kinds_are_cluster_scoped() -> None:
    cluster_scoped = {rt.key for rt in registry.all_resources() if not rt.namespaced}
    assert cluster_scoped == {"nodes", "namespaces", "clusterroles.rbac.authorization.k8s.io",
                              "clusterrolebindings.rbac.authorization.k8s.io", "persistentvolumes",
                              "storageclasses.storage.k8s.io", "priorityclasses.scheduling.k8s.io",
                              "ingressclasses.networking.k8s.io", "apiservices.apiregistration.k8s.io"}


def test_resolve_accepts_short_names_singulars_plurals_and_kinds() -> None:
    assert _keys(registry.resolve("po")) == ["pods"]
    assert _keys(registry.resolve("pod")) == ["pods"]
    assert _keys(registry.resolve("PODS")) == ["pods"]
    assert _keys(registry.resolve("deploy")) == ["deployments.apps"]
    assert _keys(registry.resolve("Deployment")) == ["deployments.apps"]
    assert _keys(registry.resolve("hpa")) == ["horizontalpodautoscalers.autoscaling"]
    assert _keys(registry.resolve("ep")) == ["endpoints"]
    assert registry.resolve("nosuchthing") == []


def test_resolve_accepts_group_and_version_qualified_names() -> None:
    assert _keys(registry.resolve("deployments.apps")) == ["deployments.apps"]
    assert _keys(registry.resolve("deploy.apps")) == ["deployments.apps"]
    assert _keys(registry.resolve("deployments.v1.apps")) == ["deployments.apps"]
    assert _keys(registry.resolve("leases.coordination.k8s.io")) == ["leases.coordination.k8s.io"]
    assert registry.resolve("deployments.batch") == []


def test_lookup_by_url_parts_by_key_and_by_kind_agree() -> None:
    rt = registry.lookup("apps", "v1", "deployments")
    assert rt is not None
    assert registry.by_key("deployments.apps") is rt
    assert registry.by_kind("apps/v1", "Deployment") is rt
    assert (rt.model, rt.list_model, rt.list_kind) == (Deployment, DeploymentList, "DeploymentList")
    assert (rt.api_version, rt.key) == ("apps/v1", "deployments.apps")
    pods = registry.lookup("", "v1", "pods")
    assert pods is not None and pods.model is Pod and pods.api_version == "v1" and pods.key == "pods"
    assert registry.by_kind("v1", "Deployment") is None
    assert registry.lookup("apps", "v2", "deployments") is None


def test_short_names_are_the_kubernetes_ones() -> None:
    short = {rt.key: rt.short_names for rt in registry.all_resources()}
    assert short["pods"] == ("po",)
    assert short["nodes"] == ("no",)
    assert short["namespaces"] == ("ns",)
    assert short["services"] == ("svc",)
    assert short["resourcequotas"] == ("quota",)
    assert short["limitranges"] == ("limits",)
    assert short["statefulsets.apps"] == ("sts",)
    assert short["cronjobs.batch"] == ("cj",)
    assert short["jobs.batch"] == ()
    assert short["secrets"] == ()


def test_the_all_category_covers_the_workloads_and_services_only() -> None:
    assert set(_keys(registry.by_category("all"))) == {
        "pods", "services", "replicationcontrollers", "deployments.apps", "replicasets.apps",
        "daemonsets.apps", "statefulsets.apps", "jobs.batch", "cronjobs.batch",
        "horizontalpodautoscalers.autoscaling",
    }


def test_discovery_verbs_match_kubernetes() -> None:
    full = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
    by_key = {rt.key: rt for rt in registry.all_resources()}
    assert by_key["pods"].verbs == full
    assert by_key["services"].verbs == full
    assert by_key["namespaces"].verbs == ("create", "delete", "get", "list", "patch", "update", "watch")


def test_subresources_report_their_own_kind_and_verbs() -> None:
    pods = registry.by_key("pods")
    deployments = registry.by_key("deployments.apps")
    namespaces = registry.by_key("namespaces")
    assert pods is not None and deployments is not None and namespaces is not None
    eviction = registry.subresource(pods, "eviction")
    assert eviction is not None
    assert (eviction.group, eviction.version, eviction.kind) == ("policy", "v1", "Eviction")
    scale = registry.subresource(deployments, "scale")
    assert scale is not None and (scale.group, scale.version, scale.kind, scale.verbs) == (
        "autoscaling", "v1", "Scale", ("get", "patch", "update"))
    status = registry.subresource(pods, "status")
    assert status is not None and (status.kind, status.verbs) == ("Pod", ("get", "patch", "update"))
    finalize = registry.subresource(namespaces, "finalize")
    assert finalize is not None and finalize.verbs == ("update",)
    assert registry.subresource(pods, "scale") is None


def test_groups_lists_core_first_with_its_versions() -> None:
    groups = registry.groups()
    assert groups[0] == ("", ["v1"])
    assert ("apps", ["v1"]) in groups
    assert ("autoscaling", ["v2", "v1"]) in groups  # v2 preferred; v1 served by conversion
    assert len({g for g, _ in groups}) == len(groups)
