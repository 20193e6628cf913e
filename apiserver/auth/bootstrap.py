"""The RBAC policy every cluster starts with: Kubernetes' bootstrap ClusterRoles and bindings.

Created when the RBAC authorizer is on and they are missing (a role an administrator changed is
left alone), labelled `kubernetes.io/bootstrapping: rbac-defaults` as kube-apiserver labels them:

- `cluster-admin`, everything, bound to the group `system:masters`;
- `system:discovery` and `system:public-info-viewer` (the discovery and health paths) and
  `system:basic-user` (asking "who am I?" and "can I?"), bound to every authenticated user —
  the public info also to `system:unauthenticated`;
- the user-facing roles `admin`, `edit` and `view`, aggregated from `system:aggregate-to-*`
  (rbac.py joins them); their rules here cover the kinds mini-k8s serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from api import registry

if TYPE_CHECKING:
    from apiserver.server import APIServer

Obj = dict[str, Any]
READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
DISCOVERY = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
             "/version", "/version/"]  # fmt: skip
PUBLIC_INFO = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> Obj:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


VIEW_RULES = [
    _rule([""], ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
                 "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                 "services/status"], READ),
    _rule([""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
                 "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"], READ),
    _rule([""], ["namespaces"], READ),
    _rule(["discovery.k8s.io"], ["endpointslices"], READ),
    _rule(["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                     "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
                     "statefulsets/scale", "statefulsets/status"], READ),
    _rule(["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"], READ),
    _rule(["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], READ),
    _rule(["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"], READ),
    _rule(["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"], READ),
]  # fmt: skip
EDIT_RULES = [
    _rule([""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"],
          ["get", "list", "watch"]),
    _rule([""], ["serviceaccounts"], ["impersonate"]),
    _rule([""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"], WRITE),
    _rule([""], ["pods/eviction"], ["create"]),
    _rule([""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
                 "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"], WRITE),
    _rule([""], ["serviceaccounts/token"], ["create"]),
    _rule(["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
                     "replicasets/scale", "statefulsets", "statefulsets/scale"], WRITE),
    _rule(["autoscaling"], ["horizontalpodautoscalers"], WRITE),
    _rule(["batch"], ["cronjobs", "jobs"], WRITE),
    _rule(["networking.k8s.io"], ["ingresses", "networkpolicies"], WRITE),
    _rule(["policy"], ["poddisruptionbudgets"], WRITE),
    _rule(["coordination.k8s.io"], ["leases"], ALL_VERBS),
]  # fmt: skip
ADMIN_RULES = [
    _rule(["authorization.k8s.io"], ["localsubjectaccessreviews"], ["create"]),
    _rule(["rbac.authorization.k8s.io"], ["rolebindings", "roles"], ALL_VERBS),
]


def _labels(*extra: str) -> dict[str, str]:
    return {"kubernetes.io/bootstrapping": "rbac-defaults", **{f"{AGGREGATE}{e}": "true" for e in extra}}


def _cluster_role(name: str, rules: list[Obj], *aggregate_to: str, aggregated_from: str = "") -> Obj:
    role: Obj = {"metadata": {"name": name, "labels": _labels(*aggregate_to),
                              "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
                 "rules": rules}  # fmt: skip
    if aggregated_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {f"{AGGREGATE}{aggregated_from}": "true"}}]}
    return role


def cluster_roles() -> list[Obj]:
    return [
        _cluster_role("cluster-admin", [_rule(["*"], ["*"], ["*"]), {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        _cluster_role("system:discovery", [{"nonResourceURLs": DISCOVERY, "verbs": ["get"]}]),
        _cluster_role("system:public-info-viewer", [{"nonResourceURLs": PUBLIC_INFO, "verbs": ["get"]}]),
        _cluster_role("system:basic-user", [
            _rule(["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], ["create"]),
            _rule(["authentication.k8s.io"], ["selfsubjectreviews"], ["create"]),
        ]),
        _cluster_role("system:aggregate-to-view", VIEW_RULES, "admin", "edit", "view"),
        _cluster_role("system:aggregate-to-edit", EDIT_RULES, "admin", "edit"),
        _cluster_role("system:aggregate-to-admin", ADMIN_RULES, "admin"),
        _cluster_role("view", VIEW_RULES, aggregated_from="view"),
        _cluster_role("edit", VIEW_RULES + EDIT_RULES, "admin", aggregated_from="edit"),
        _cluster_role("admin", VIEW_RULES + EDIT_RULES + ADMIN_RULES, aggregated_from="admin"),
    ]


def cluster_role_bindings() -> list[Obj]:
    def bind(name: str, *groups: str) -> Obj:
        subjects = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in groups]
        return {"metadata": {"name": name, "labels": _labels(),
                             "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": subjects}  # fmt: skip

    return [
        bind("cluster-admin", "system:masters"),
        bind("system:discovery", "system:authenticated"),
        bind("system:basic-user", "system:authenticated"),
        bind("system:public-info-viewer", "system:authenticated", "system:unauthenticated"),
    ]


async def ensure_bootstrap_policy(server: APIServer) -> None:
    roles = registry.by_key("clusterroles.rbac.authorization.k8s.io")
    bindings = registry.by_key("clusterrolebindings.rbac.authorization.k8s.io")
    assert roles is not None and bindings is not None
    for role in cluster_roles():
        await server.ensure(roles, None, role)
    for binding in cluster_role_bindings():
        await server.ensure(bindings, None, binding)
