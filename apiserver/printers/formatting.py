"""Formatting shared by several kinds: label maps, label selectors and container lists.

Two shapes of selector exist in Kubernetes and both appear in `kubectl get -o wide`:
- a plain map `{"app": "nginx"}` (Service, ReplicationController, nodeSelector), printed by
  labels.FormatLabels as `app=nginx`, keys sorted, `<none>` when empty;
- a metav1.LabelSelector `{"matchLabels": {...}, "matchExpressions": [...]}` (Deployment,
  ReplicaSet, Job...), first turned into requirements and then printed as
  `app=nginx,env in (dev,qa),!legacy`: requirements sorted by key, the values of `in`/`notin`
  sorted, `Exists` as the bare key and `DoesNotExist` as `!key`.
A LabelSelector that cannot be turned into a selector (unknown operator, `In` without values, a
malformed key) prints as `<error>` (metav1.FormatLabelSelector) or `<invalid>` (the Deployment
printer, which formats it itself).
"""

from __future__ import annotations

import re
from typing import Any

from apiserver.printers.columns import NONE

_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_RE = re.compile(rf"^{_NAME}$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class InvalidSelector(ValueError):
    """The LabelSelector cannot be converted into a selector."""


def format_labels(labels: dict[str, Any] | None) -> str:
    """labels.FormatLabels: `k1=v1,k2=v2` sorted by key, `<none>` when empty."""
    if not labels:
        return NONE
    return ",".join(f"{key}={labels[key]}" for key in sorted(labels))


def _check_key(key: str) -> None:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix)):
        raise InvalidSelector(f"invalid label key {key!r}")
    if not name or len(name) > 63 or not _NAME_RE.match(name):
        raise InvalidSelector(f"invalid label key {key!r}")


def _check_value(value: str) -> None:
    if value and (len(value) > 63 or not _NAME_RE.match(value)):
        raise InvalidSelector(f"invalid label value {value!r}")


def _requirement(key: str, operator: str, values: list[str]) -> str:
    """One requirement as labels.Requirement.String() writes it, after NewRequirement's checks."""
    _check_key(key)
    if operator in ("In", "NotIn"):
        if not values:
            raise InvalidSelector(f"{key}: values must be non-empty for {operator}")
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            raise InvalidSelector(f"{key}: values must be empty for {operator}")
    for value in values:
        _check_value(value)
    if operator == "Equals":
        return f"{key}={values[0]}"
    if operator == "Exists":
        return key
    if operator == "DoesNotExist":
        return f"!{key}"
    word = "in" if operator == "In" else "notin"
    return f"{key} {word} ({','.join(sorted(values))})"


def label_selector_string(selector: dict[str, Any] | None) -> str:
    """metav1.LabelSelectorAsSelector(...).String().

    A missing selector selects nothing and an empty one selects everything; both print as "".
    Raises InvalidSelector for a selector Kubernetes would refuse to convert."""
    if not selector:
        return ""
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    parts: list[tuple[str, str]] = []
    for key, value in match_labels.items():
        parts.append((key, _requirement(key, "Equals", [str(value)])))
    for expression in expressions:
        key = str(expression.get("key", ""))
        operator = expression.get("operator", "")
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise InvalidSelector(f"{operator!r} is not a valid label selector operator")
        values = [str(v) for v in expression.get("values") or []]
        parts.append((key, _requirement(key, operator, values)))
    # Selector.Add keeps requirements sorted by key.
    parts.sort(key=lambda part: part[0])
    return ",".join(text for _, text in parts)


def format_label_selector(selector: dict[str, Any] | None) -> str:
    """metav1.FormatLabelSelector: the selector string, `<none>` if empty, `<error>` if invalid."""
    try:
        text = label_selector_string(selector)
    except InvalidSelector:
        return "<error>"
    return text or NONE


def layout_container_cells(containers: list[dict[str, Any]]) -> tuple[str, str]:
    """The CONTAINERS and IMAGES cells: names and images, each joined with commas."""
    names = ",".join(str(c.get("name", "")) for c in containers)
    images = ",".join(str(c.get("image", "")) for c in containers)
    return names, images


def list_with_more(entries: list[str], total: int, limit: int = 3) -> str:
    """`a,b,c + 2 more...`: the first `limit` entries and how many were left out."""
    text = ",".join(entries[:limit])
    if total > limit:
        return f"{text} + {total - limit} more..."
    return text
