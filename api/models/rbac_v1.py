"""rbac.authorization.k8s.io/v1: who may do what.

A Role (namespaced) or ClusterRole lists rules - verbs on resources in API groups. A
RoleBinding or ClusterRoleBinding grants one role (`roleRef`, immutable) to `subjects`
(users, groups, service accounts). mini-k8s stores and serves these; it does not enforce them.
"""

from __future__ import annotations

from api.models.base import K8sModel
from api.models.meta import K8sList, LabelSelector, ObjectMeta


class PolicyRule(K8sModel):
    """One permission: these verbs on these resources (or non-resource URLs) in these API groups."""

    # The verbs allowed: get, list, watch, create, update, patch, delete, or * for all.
    verbs: list[str] | None = None
    api_groups: list[str] | None = None  # "" is the core group
    resources: list[str] | None = None  # "pods", "pods/log", "*"
    # Limits the rule to objects with these names.
    resource_names: list[str] | None = None
    # URL paths that are not API resources, allowed for ClusterRoles only, e.g.
    non_resource_urls: list[str] | None = None  # wire: nonResourceURLs ("/healthz")


class AggregationRule(K8sModel):
    """Builds a ClusterRole's rules from other ClusterRoles."""

    # The ClusterRoles whose rules are combined, by label.
    cluster_role_selectors: list[LabelSelector] | None = None


class Subject(K8sModel):
    """Who a binding grants its role to."""

    kind: str | None = None  # User, Group, ServiceAccount
    # "" for ServiceAccounts, rbac.authorization.k8s.io for users and groups.
    api_group: str | None = None
    # The name of the user, group or ServiceAccount.
    name: str | None = None
    # The ServiceAccount's namespace.
    namespace: str | None = None


class RoleRef(K8sModel):
    """The Role or ClusterRole a binding grants; it cannot be changed."""

    # The group of the role: rbac.authorization.k8s.io.
    api_group: str | None = None
    kind: str | None = None  # Role or ClusterRole
    # The role's name.
    name: str | None = None


class Role(K8sModel):
    """A Role grants permissions within one namespace."""

    api_version: str | None = "rbac.authorization.k8s.io/v1"
    kind: str | None = "Role"
    metadata: ObjectMeta | None = None
    # The permissions.
    rules: list[PolicyRule] | None = None


class ClusterRole(K8sModel):
    """A ClusterRole grants permissions across the cluster, or in a namespace through a RoleBinding."""

    api_version: str | None = "rbac.authorization.k8s.io/v1"
    kind: str | None = "ClusterRole"
    metadata: ObjectMeta | None = None
    # The permissions.
    rules: list[PolicyRule] | None = None
    aggregation_rule: AggregationRule | None = None  # rules = union of the selected roles


class RoleBinding(K8sModel):
    """A RoleBinding grants a Role's or ClusterRole's permissions to subjects, within its namespace."""

    api_version: str | None = "rbac.authorization.k8s.io/v1"
    kind: str | None = "RoleBinding"
    metadata: ObjectMeta | None = None
    # Who gets the permissions.
    subjects: list[Subject] | None = None
    # The role granted; cannot be changed.
    role_ref: RoleRef | None = None


class ClusterRoleBinding(K8sModel):
    """A ClusterRoleBinding grants a ClusterRole's permissions to subjects across the cluster."""

    api_version: str | None = "rbac.authorization.k8s.io/v1"
    kind: str | None = "ClusterRoleBinding"
    metadata: ObjectMeta | None = None
    # Who gets the permissions.
    subjects: list[Subject] | None = None
    # The ClusterRole granted; cannot be changed.
    role_ref: RoleRef | None = None


class RoleList(K8sList[Role]):
    api_version: str | None = "rbac.authorization.k8s.io/v1"
    kind: str | None = "RoleList"


class ClusterRoleList(K8sList[ClusterRole]):
    api_version: str | None = "rbac.authorization.k8s.io/v1"
    kind: str | None = "ClusterRoleList"


class RoleBindingList(K8sList[RoleBinding]):
    api_version: str | None = "rbac.authorization.k8s.io/v1"
    kind: str | None = "RoleBindingList"


class ClusterRoleBindingList(K8sList[ClusterRoleBinding]):
    api_version: str | None = "rbac.authorization.k8s.io/v1"
    kind: str | None = "ClusterRoleBindingList"
