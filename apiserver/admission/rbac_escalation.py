"""RBAC escalation prevention: nobody grants a permission they do not hold.

Creating or changing a Role or ClusterRole is refused unless every rule in it is already allowed
to the user (in that namespace, or cluster-wide for a ClusterRole), or the user may `escalate`
on roles. Creating or changing a binding is refused unless the user holds every rule of the
role it refers to, or may `bind` that role. Otherwise anyone allowed to create RoleBindings
could bind themselves to `cluster-admin`. The refusal is Kubernetes': a 403 naming the user,
their groups, and the rules they do not hold.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from api import errors, registry
from api.policyrule import breakdown
from apiserver.admission import Attributes
from apiserver.auth import rbac
from apiserver.auth.context import current_user
from apiserver.auth.rbac_rules import Rule, rule_covers
from apiserver.auth.requestinfo import RequestAttributes
from apiserver.auth.user import MASTERS, UserInfo

if TYPE_CHECKING:
    from apiserver.server import APIServer

GROUP = "rbac.authorization.k8s.io"
ROLE_KINDS = {f"roles.{GROUP}": "roles", f"clusterroles.{GROUP}": "clusterroles"}
BINDING_KINDS = {f"rolebindings.{GROUP}", f"clusterrolebindings.{GROUP}"}


def _go_list(values: list[str]) -> str:
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def describe_rule(rule: Rule) -> str:
    """A rule as Kubernetes prints the ones not held: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`."""
    parts = []
    for key, label in (("apiGroups", "APIGroups"), ("resources", "Resources"), ("resourceNames", "ResourceNames"),
                       ("nonResourceURLs", "NonResourceURLs"), ("verbs", "Verbs")):  # fmt: skip
        if rule.get(key):
            parts.append(f"{label}:{_go_list(list(rule[key]))}")
    return "{" + ", ".join(parts) + "}"


class RBACEscalation:
    name = "RBACEscalation"

    def __init__(self, server: APIServer) -> None:
        self.server = server

    def _held(self, user: UserInfo, namespace: str | None) -> list[Rule]:
        authorizer = self.server.authorizer
        return rbac.rules_in(authorizer.index(), user, namespace) if authorizer is not None else []

    def _may(self, user: UserInfo, verb: str, resource: str, namespace: str | None, name: str) -> bool:
        authorizer = self.server.authorizer
        if authorizer is None:
            return True
        attrs = RequestAttributes(verb, "", True, GROUP, "v1", resource, "", namespace or "", name)
        return authorizer.allowed(user, attrs)

    def _refuse_unheld(self, user: UserInfo, attrs: Attributes, wanted: list[Rule]) -> None:
        held = self._held(user, attrs.namespace)
        missing = [piece for rule in wanted for piece in breakdown(rule)
                   if not any(rule_covers(h, piece) for h in held)]  # fmt: skip
        if missing:
            groups = _go_list(list(user.groups)).replace(" ", ",") if user.groups else "[]"
            reason = (f'user "{user.name}" (groups={groups}) is attempting to grant RBAC permissions not currently '
                      "held:\n" + "\n".join(describe_rule(r) for r in missing))  # fmt: skip
            raise errors.forbidden_error(attrs.rt.key, attrs.name, reason)

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation not in ("CREATE", "UPDATE") or attrs.obj is None:
            return
        key = attrs.rt.key
        if key not in ROLE_KINDS and key not in BINDING_KINDS:
            return
        user = current_user()
        if MASTERS in user.groups:
            return
        if key in ROLE_KINDS:
            if self._may(user, "escalate", ROLE_KINDS[key], attrs.namespace, attrs.name):
                return
            rules = list(attrs.obj.get("rules") or [])
            if attrs.obj.get("aggregationRule"):  # it grants what the roles it aggregates grant
                roles = {r["metadata"]["name"]: r for r in self._cluster_roles()}
                roles[attrs.name] = attrs.obj
                rules = rbac.cluster_role_rules(roles, attrs.name)
            self._refuse_unheld(user, attrs, rules)
            return
        ref = attrs.obj.get("roleRef") or {}
        role_resource = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
        role_ns = None if role_resource == "clusterroles" else attrs.namespace
        if self._may(user, "bind", role_resource, role_ns, ref.get("name") or ""):
            return
        self._refuse_unheld(user, attrs, self._role_rules(role_resource, role_ns, ref.get("name") or ""))

    def _cluster_roles(self) -> list[dict[str, Any]]:
        rt = registry.by_key(f"clusterroles.{GROUP}")
        assert rt is not None
        return list(self.server.cache(rt).objects.values())

    def _role_rules(self, resource: str, namespace: str | None, name: str) -> list[Rule]:
        if resource == "clusterroles":
            return rbac.cluster_role_rules({r["metadata"]["name"]: r for r in self._cluster_roles()}, name)
        rt = registry.by_key(f"roles.{GROUP}")
        assert rt is not None
        role = self.server.cache(rt).peek(self.server.store(rt).key(namespace, name))
        return list((role or {}).get("rules") or [])
