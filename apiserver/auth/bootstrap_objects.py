"""Building blocks of the bootstrap RBAC policy: rules, roles and bindings as kube-apiserver writes them.

Every bootstrap object carries the label `kubernetes.io/bootstrapping: rbac-defaults` and the
annotation `rbac.authorization.kubernetes.io/autoupdate: "true"` (Kubernetes' reconciler would
bring it back up to date at start-up; mini-k8s only creates what is missing).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
RBAC_GROUP = "rbac.authorization.k8s.io"
AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"
BOOTSTRAP_LABEL = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}

READ = ["get", "list", "watch"]
LEGACY, APPS, BATCH, POLICY, AUTOSCALING = "", "apps", "batch", "policy", "autoscaling"
DISCOVERY, COORDINATION, STORAGE, EVENTS = "discovery.k8s.io", "coordination.k8s.io", "storage.k8s.io", "events.k8s.io"
AUTHENTICATION, AUTHORIZATION = "authentication.k8s.io", "authorization.k8s.io"


def rule(verbs: list[str], groups: list[str], resources: list[str], names: list[str] | None = None) -> Obj:
    out: Obj = {"apiGroups": groups, "resources": resources, "verbs": verbs}
    if names:
        out["resourceNames"] = names
    return out


def urls(verbs: list[str], paths: list[str]) -> Obj:
    return {"nonResourceURLs": paths, "verbs": verbs}


def events_rule() -> Obj:
    """What every component that records events needs (Kubernetes' eventsRule)."""
    return rule(["create", "update", "patch"], [LEGACY, EVENTS], ["events"])


def labels(*aggregate_to: str) -> dict[str, str]:
    return {**BOOTSTRAP_LABEL, **{f"{AGGREGATE}{a}": "true" for a in aggregate_to}}


def _meta(name: str, namespace: str | None, extra_labels: dict[str, str]) -> Obj:
    meta: Obj = {"name": name, "labels": extra_labels, "annotations": dict(AUTOUPDATE)}
    if namespace:
        meta["namespace"] = namespace
    return meta


def cluster_role(name: str, rules: list[Obj], *aggregate_to: str, aggregated_from: str = "") -> Obj:
    role: Obj = {"metadata": _meta(name, None, labels(*aggregate_to)), "rules": rules}
    if aggregated_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {f"{AGGREGATE}{aggregated_from}": "true"}}]}
    return role


def role(namespace: str, name: str, rules: list[Obj]) -> Obj:
    return {"metadata": _meta(name, namespace, labels()), "rules": rules}


def user(name: str) -> Obj:
    return {"apiGroup": RBAC_GROUP, "kind": "User", "name": name}


def group(name: str) -> Obj:
    return {"apiGroup": RBAC_GROUP, "kind": "Group", "name": name}


def service_account(namespace: str, name: str) -> Obj:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def cluster_role_binding(name: str, subjects: list[Obj], role_name: str | None = None) -> Obj:
    """A ClusterRoleBinding to the ClusterRole `role_name` (by default: the binding's own name)."""
    return {"metadata": _meta(name, None, labels()),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role_name or name},
            "subjects": subjects}  # fmt: skip


def role_binding(namespace: str, name: str, subjects: list[Obj], role_name: str | None = None) -> Obj:
    """A RoleBinding to the Role `role_name` (by default: the binding's own name) of its namespace."""
    return {"metadata": _meta(name, namespace, labels()),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": role_name or name},
            "subjects": subjects}  # fmt: skip
