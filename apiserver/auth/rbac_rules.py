"""When does one RBAC PolicyRule allow a request? Kubernetes' rules, as pure functions.

- verbs: the request's verb, or `*`;
- a resource request: apiGroups has its group or `*`; resources has `*`, the resource
  (`pods`), the resource with its subresource (`pods/log`), or `*/log`; resourceNames, when
  given, must name the object (so a list, which names none, is not allowed by it);
- a non-resource request (`/healthz`): nonResourceURLs has the path, `*`, or a prefix ending in
  `*` (`/apis/*`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from apiserver.auth.requestinfo import RequestAttributes

Rule = dict[str, Any]


def _has(values: Iterable[str] | None, wanted: str) -> bool:
    values = list(values or [])
    return "*" in values or wanted in values


def resource_matches(rule: Rule, attrs: RequestAttributes) -> bool:
    for resource in rule.get("resources") or []:
        if resource == "*" or resource == attrs.resource_with_subresource:
            return True
        if attrs.subresource and resource == f"*/{attrs.subresource}":
            return True
    return False


def rule_allows(rule: Rule, attrs: RequestAttributes) -> bool:
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        return any(
            url == "*" or url == attrs.path or (url.endswith("*") and attrs.path.startswith(url[:-1]))
            for url in rule.get("nonResourceURLs") or []
        )
    if not _has(rule.get("apiGroups"), attrs.api_group) or not resource_matches(rule, attrs):
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def rule_covers(owner: Rule, wanted: Rule) -> bool:
    """Does `owner` allow everything `wanted` allows? (the escalation check's question, per rule,
    split into single verbs/resources/groups/names as Kubernetes' Covers does)."""
    def sub(field: str, allowed: list[str], requested: list[str]) -> bool:
        return "*" in allowed or all(r in allowed for r in requested) or (
            field == "resources" and all(_resource_covered(allowed, r) for r in requested))

    for field in ("verbs", "apiGroups", "resources", "nonResourceURLs"):
        requested = list(wanted.get(field) or [])
        if requested and not sub(field, list(owner.get(field) or []), requested):
            if field == "nonResourceURLs" and all(
                any(o.endswith("*") and r.startswith(o[:-1]) for o in owner.get(field) or []) for r in requested
            ):
                continue
            return False
    owner_names, wanted_names = list(owner.get("resourceNames") or []), list(wanted.get("resourceNames") or [])
    if owner_names and (not wanted_names or not set(wanted_names) <= set(owner_names)):
        return False
    return True


def _resource_covered(allowed: list[str], requested: str) -> bool:
    base, _, sub = requested.partition("/")
    return requested in allowed or (bool(sub) and f"*/{sub}" in allowed)
