"""The RBAC policy every cluster starts with: Kubernetes' bootstrap ClusterRoles and bindings.

Created when the RBAC authorizer is on and they are missing (a role an administrator changed is
left alone), labelled `kubernetes.io/bootstrapping: rbac-defaults` as kube-apiserver labels them:

- `cluster-admin`, everything, bound to the group `system:masters`;
- `system:discovery` and `system:public-info-viewer` (the discovery and health paths) and
  `system:basic-user` (asking "who am I?" and "can I?"), bound to every authenticated user —
  the public info also to `system:unauthenticated`;
- the user-facing roles `admin`, `edit` and `view`, aggregated from `system:aggregate-to-*`
  (rbac.py joins them); their rules here cover the kinds mini-k8s serves;
- the control-plane components' roles, bound to their users (bootstrap_components.py), one
  `system:controller:<name>` role per controller, bound to its ServiceAccount
  (bootstrap_controllers.py), and the Roles and RoleBindings inside kube-system
  (bootstrap_namespaced.py): each component can run with least privilege.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from api import registry
from apiserver.auth import bootstrap_components, bootstrap_controllers, bootstrap_namespaced
from apiserver.auth.bootstrap_objects import cluster_role as _cluster_role
from apiserver.auth.bootstrap_objects import labels, rule

if TYPE_CHECKING:
    from apiserver.server import APIServer

Obj = dict[str, Any]
READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
DISCOVERY = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
             "/version", "/version/"]  # fmt: skip
PUBLIC_INFO = ["/healthz", "/livez", "/readyz", "/version", "/version/"]


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> Obj:
    return rule(verbs, groups, resources)


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


def cluster_roles() -> list[Obj]:
    return [
        _cluster_role("cluster-admin", [_rule(["*"], ["*"], ["*"]), {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        _cluster_role("system:discovery", [{"nonResourceURLs": DISCOVERY, "verbs": ["get"]}]),
        _cluster_role("system:public-info-viewer", [{"nonResourceURLs": PUBLIC_INFO, "verbs": ["get"]}]),
        _cluster_role(
            "system:basic-user",
            [
                _rule(["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], ["create"]),
                _rule(["authentication.k8s.io"], ["selfsubjectreviews"], ["create"]),
            ],
        ),
        _cluster_role("system:aggregate-to-view", VIEW_RULES, "admin", "edit", "view"),
        _cluster_role("system:aggregate-to-edit", EDIT_RULES, "admin", "edit"),
        _cluster_role("system:aggregate-to-admin", ADMIN_RULES, "admin"),
        _cluster_role("view", VIEW_RULES, aggregated_from="view"),
        _cluster_role("edit", VIEW_RULES + EDIT_RULES, "admin", aggregated_from="edit"),
        _cluster_role("admin", VIEW_RULES + EDIT_RULES + ADMIN_RULES, aggregated_from="admin"),
        *bootstrap_components.cluster_roles(),
        *bootstrap_controllers.cluster_roles(),
    ]


def cluster_role_bindings() -> list[Obj]:
    def bind(name: str, *groups: str) -> Obj:
        subjects = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in groups]
        return {"metadata": {"name": name, "labels": labels(),
                             "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": subjects}  # fmt: skip

    return [
        bind("cluster-admin", "system:masters"),
        bind("system:discovery", "system:authenticated"),
        bind("system:basic-user", "system:authenticated"),
        bind("system:public-info-viewer", "system:authenticated", "system:unauthenticated"),
        *bootstrap_components.cluster_role_bindings(),
        *bootstrap_controllers.cluster_role_bindings(),
    ]


def roles() -> list[Obj]:
    """The namespaced Roles (all in kube-system)."""
    return bootstrap_namespaced.roles()


def role_bindings() -> list[Obj]:
    return bootstrap_namespaced.role_bindings()


async def ensure_bootstrap_policy(server: APIServer) -> None:
    for key, objects in (("clusterroles.rbac.authorization.k8s.io", cluster_roles()),
                         ("clusterrolebindings.rbac.authorization.k8s.io", cluster_role_bindings()),
                         ("roles.rbac.authorization.k8s.io", roles()),
                         ("rolebindings.rbac.authorization.k8s.io", role_bindings())):  # fmt: skip
        rt = registry.by_key(key)
        assert rt is not None
        for obj in objects:
            await server.ensure(rt, obj["metadata"].get("namespace"), obj)
