"""Field selectors: filter a list by a few fields of the object itself.

Labels are for grouping you choose; field selectors answer fixed questions the system
asks all the time: "the pods bound to node-1" (`spec.nodeName=node-1`, what every kubelet
watches), "the events about this object" (`involvedObject.uid=...`, what `kubectl
describe` sends), "pods that are not finished" (`status.phase!=Succeeded`).

Deliberately small, as in Kubernetes:
- only `=` / `==` (same thing) and `!=`, joined by `,` meaning AND;
- only a short, fixed list of fields per resource (`SUPPORTED_FIELDS`); anything else is
  a 400 with `field label not supported: <field>`. The API server can index these
  fields; it could not index arbitrary JSON paths;
- every field compares as a *string*. A missing field is `""`, booleans are
  `"true"`/`"false"` (so `spec.unschedulable=false` matches a node that never set it),
  counters like `status.replicas` are decimal strings.

Values may contain `,` `=` or `\\` only escaped with a backslash (`\\,` `\\=` `\\\\`);
`str()` escapes them again, so `parse(str(s)) == s`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


class FieldSelectorError(ValueError):
    """A malformed selector or an unsupported field label (400 BadRequest on the wire)."""


# ---------------------------------------------------------------- which fields exist

DEFAULT_FIELDS: frozenset[str] = frozenset({"metadata.name", "metadata.namespace"})

_EVENT_FIELDS = {
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
    "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
    "reason", "reportingComponent", "source", "type",
}  # fmt: skip

# Per resource key. Cluster-scoped kinds with their own list have no metadata.namespace,
# as in Kubernetes; resources not listed get DEFAULT_FIELDS.
SUPPORTED_FIELDS: dict[str, frozenset[str]] = {
    "pods": DEFAULT_FIELDS | {
        "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName",
    },
    "events": DEFAULT_FIELDS | _EVENT_FIELDS,
    "nodes": frozenset({"metadata.name", "spec.unschedulable"}),
    "namespaces": frozenset({"metadata.name", "status.phase"}),
    "secrets": DEFAULT_FIELDS | {"type"},
    "services": DEFAULT_FIELDS | {"spec.clusterIP", "spec.type"},
    "replicationcontrollers": DEFAULT_FIELDS | {"status.replicas"},
    "replicasets.apps": DEFAULT_FIELDS | {"status.replicas"},
    "jobs.batch": DEFAULT_FIELDS | {"status.successful"},
}  # fmt: skip


def supported_fields(resource_key: str) -> frozenset[str]:
    return SUPPORTED_FIELDS.get(resource_key, DEFAULT_FIELDS)


# Fields whose Go type is bool or int: an absent value still has a string form.
_FALSE_WHEN_MISSING = {"spec.unschedulable", "spec.hostNetwork"}
_ZERO_WHEN_MISSING = {"status.replicas", "status.successful"}


def _lookup(obj: Mapping[str, Any], path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(part)
    return cur


def field_value(obj: Mapping[str, Any], label: str) -> str:
    """The string a field selector compares for `label` on a wire-form object."""
    if label == "status.podIP":  # the first of status.podIPs, like Kubernetes
        ips = _lookup(obj, "status.podIPs") or []
        value = ips[0].get("ip") if ips and isinstance(ips[0], Mapping) else _lookup(obj, "status.podIP")
    elif label == "source":  # events: source.component, else the newer reportingController
        value = _lookup(obj, "source.component") or obj.get("reportingController")
    elif label == "reportingComponent":
        value = obj.get("reportingController")
    else:
        value = _lookup(obj, label)
    if value is None:
        value = False if label in _FALSE_WHEN_MISSING else 0 if label in _ZERO_WHEN_MISSING else ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


# ---------------------------------------------------------------- escaping


def escape_value(value: str) -> str:
    """`\\` -> `\\\\`, then `,` -> `\\,` and `=` -> `\\=`."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_value(value: str) -> str:
    out: list[str] = []
    chars = iter(value)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, None)
            if nxt is None:
                raise FieldSelectorError("invalid field selector: invalid escape sequence: \\")
            if nxt not in "\\,=":
                raise FieldSelectorError(f"invalid field selector: invalid escape sequence: \\{nxt}")
            out.append(nxt)
        elif ch in ",=":
            raise FieldSelectorError(f"invalid field selector: unescaped character in value: {ch}")
        else:
            out.append(ch)
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not escaped."""
    terms, start, escaped = [], 0, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """(field, operator, raw value) at the first operator; `!=` and `==` before `=`."""
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


# ---------------------------------------------------------------- the selector


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    operator: str  # "=" or "!="; `==` is read as "="
    value: str

    def matches(self, actual: str) -> bool:
        return (actual == self.value) == (self.operator == "=")

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """An immutable AND of field requirements. The empty selector selects everything."""

    requirements: tuple[FieldRequirement, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", tuple(sorted(self.requirements, key=str)))

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, get: Callable[[str], str | None]) -> bool:
        """True when every requirement holds; `get(field)` returns None for missing (= "")."""
        return all(r.matches(get(r.field) or "") for r in self.requirements)

    def matches_object(self, obj: Mapping[str, Any], supported: Iterable[str] | None = None) -> bool:
        """Match a wire-form object. With `supported`, first reject unknown field labels."""
        if supported is not None:
            self.check_supported(supported)
        return self.matches(lambda label: field_value(obj, label))

    def check_supported(self, supported: Iterable[str]) -> None:
        """Raise `field label not supported: <field>` for the first field not in `supported`."""
        allowed = set(supported)
        for r in self.requirements:
            if r.field not in allowed:
                raise FieldSelectorError(f"field label not supported: {r.field}")

    def requires_exact_match(self, field: str) -> str | None:
        """The value `field` must equal (`field=v`), else None; lets callers use an index."""
        for r in self.requirements:
            if r.field == field and r.operator == "=":
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def check_supported(resource_key: str, selector: FieldSelector) -> None:
    """Raise `field label not supported: <field>` unless `resource_key` has every field."""
    selector.check_supported(supported_fields(resource_key))


def parse(text: str) -> FieldSelector:
    """Parse `spec.nodeName=node-1,status.phase!=Failed`. Empty terms are skipped;
    whitespace is *not* trimmed (Kubernetes does not trim either)."""
    reqs: list[FieldRequirement] = []
    for term in _split_terms(text):
        if not term:
            continue
        split = _split_term(term)
        if split is None:
            raise FieldSelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, raw = split
        reqs.append(FieldRequirement(field, "!=" if op == "!=" else "=", unescape_value(raw)))
    return FieldSelector(tuple(reqs))


def from_set(fields: Mapping[str, str]) -> FieldSelector:
    """`{"spec.nodeName": "n1"}` -> `spec.nodeName=n1`."""
    return FieldSelector(tuple(FieldRequirement(k, "=", v) for k, v in fields.items()))
