"""The RBAC authorizer: may this user do this? Asked of Roles and bindings, through an index.

A binding gives its subjects (users, groups, ServiceAccounts) the rules of the role it refers to:
a RoleBinding in its namespace, a ClusterRoleBinding everywhere. Looking through every binding
for every request would make each request cost as much as the cluster has bindings, so the
authorizer keeps an index, rebuilt only when one of the four RBAC kinds changed (it compares
the revisions of their watch caches): subject → [(namespace or None for cluster-wide, rules)].
A request then looks up its user's name and groups and tests only their rules.

Decisions are remembered on the index (`decided`), so they are forgotten with it when an RBAC
object changes. The object's name is part of what is remembered only for users with a rule that
names objects (`resourceNames`): for everyone else a get of one pod decides for a get of any pod
in that namespace, and the cache stays as small as the set of distinct requests.

An aggregated ClusterRole (`aggregationRule`) has the rules of every ClusterRole its selectors
match, joined here when the index is built — what the clusterrole-aggregation controller
writes into the object in Kubernetes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from api import labels
from apiserver.auth.rbac_rules import Rule, rule_allows
from apiserver.auth.requestinfo import RequestAttributes
from apiserver.auth.user import UserInfo

Obj = dict[str, Any]
KINDS = ("clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io",
         "roles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io")  # fmt: skip


@dataclass
class Grant:
    namespace: str | None  # None: every namespace and the cluster scope
    rules: list[Rule]
    via: str  # "ClusterRoleBinding/x" or "RoleBinding/ns/x", for rules reviews and debugging


DECISIONS_KEPT = 4096  # remembered decisions (and users) per index; past that they are forgotten and start over


@dataclass
class Index:
    revisions: tuple[int, ...] = ()
    by_subject: dict[tuple[str, str], list[Grant]] = field(default_factory=lambda: defaultdict(list))
    decided: dict[tuple[Any, ...], bool] = field(default_factory=dict)  # see allows
    # (user, groups) → does any of their rules name objects (resourceNames)?
    names_matter: dict[tuple[str, tuple[str, ...]], bool] = field(default_factory=dict)


def _subject_keys(subject: Obj, binding_namespace: str | None) -> tuple[str, str] | None:
    kind, name = subject.get("kind"), subject.get("name") or ""
    if kind == "User":
        return ("user", name)
    if kind == "Group":
        return ("group", name)
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_namespace or ""
        return ("user", f"system:serviceaccount:{ns}:{name}")
    return None


def cluster_role_rules(roles: dict[str, Obj], name: str) -> list[Rule]:
    role = roles.get(name)
    if role is None:
        return []
    aggregation = role.get("aggregationRule")
    if not aggregation:
        return list(role.get("rules") or [])
    rules: list[Rule] = []
    for selector in aggregation.get("clusterRoleSelectors") or []:
        match = labels.from_label_selector(selector)
        for other in sorted(roles):
            if other != name and match.matches(roles[other]["metadata"].get("labels") or {}):
                rules += [r for r in roles[other].get("rules") or [] if r not in rules]
    return rules


def build_index(objects: dict[str, list[Obj]], revisions: tuple[int, ...]) -> Index:
    index = Index(revisions)
    cluster_roles = {r["metadata"]["name"]: r for r in objects[KINDS[0]]}
    roles = {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in objects[KINDS[2]]}
    for binding in objects[KINDS[1]]:
        ref = binding.get("roleRef") or {}
        grant = Grant(None, cluster_role_rules(cluster_roles, ref.get("name") or ""),
                      f"ClusterRoleBinding/{binding['metadata']['name']}")  # fmt: skip
        for subject in binding.get("subjects") or []:
            if key := _subject_keys(subject, None):
                index.by_subject[key].append(grant)
    for binding in objects[KINDS[3]]:
        ns = binding["metadata"]["namespace"]
        ref = binding.get("roleRef") or {}
        if ref.get("kind") == "ClusterRole":
            rules = cluster_role_rules(cluster_roles, ref.get("name") or "")
        else:
            rules = list((roles.get((ns, ref.get("name") or "")) or {}).get("rules") or [])
        grant = Grant(ns, rules, f"RoleBinding/{ns}/{binding['metadata']['name']}")
        for subject in binding.get("subjects") or []:
            if key := _subject_keys(subject, ns):
                index.by_subject[key].append(grant)
    return index


def grants_for(index: Index, user: UserInfo) -> list[Grant]:
    found = list(index.by_subject.get(("user", user.name), []))
    for group in user.groups:
        found += index.by_subject.get(("group", group), [])
    return found


def allows(index: Index, user: UserInfo, attrs: RequestAttributes) -> bool:
    """Does a rule bound to the user allow the request? Remembered on the index (module docstring)."""
    who = (user.name, user.groups)
    names = index.names_matter.get(who)
    if names is None:
        if len(index.names_matter) >= DECISIONS_KEPT:
            index.names_matter.clear()
        names = index.names_matter[who] = any(r.get("resourceNames") for g in grants_for(index, user) for r in g.rules)
    if attrs.resource_request:
        what: tuple[Any, ...] = (attrs.verb, attrs.api_group, attrs.resource, attrs.subresource, attrs.namespace,
                                 attrs.name if names else None)  # fmt: skip
    else:
        what = (attrs.verb, attrs.path)
    key = (who, what)
    decided = index.decided.get(key)
    if decided is None:
        if len(index.decided) >= DECISIONS_KEPT:
            index.decided.clear()
        decided = index.decided[key] = _allows(index, user, attrs)
    return decided


def _allows(index: Index, user: UserInfo, attrs: RequestAttributes) -> bool:
    for grant in grants_for(index, user):
        if grant.namespace is not None and (not attrs.resource_request or grant.namespace != attrs.namespace):
            continue  # a RoleBinding grants only inside its namespace, never cluster-scoped or paths
        if any(rule_allows(rule, attrs) for rule in grant.rules):
            return True
    return False


def rules_in(index: Index, user: UserInfo, namespace: str | None) -> list[Rule]:
    """Every rule that applies to the user in `namespace` (None: cluster-wide grants only) — for
    SelfSubjectRulesReview and the escalation check."""
    rules: list[Rule] = []
    for grant in grants_for(index, user):
        if grant.namespace in (None, namespace):
            rules += [r for r in grant.rules if r not in rules]
    return rules
