"""Validation of PriorityClass, PodDisruptionBudget, ControllerRevision and EndpointSlice.

- PriorityClass: user classes may not go above 1000000000 (HighestUserDefinablePriority);
  names starting `system-` are reserved for the built-in classes; `value` and
  `preemptionPolicy` are fixed once created.
- PodDisruptionBudget: `minAvailable` or `maxUnavailable`, not both; each a non-negative number
  or a percentage up to 100%.
- ControllerRevision: `revision` is not negative, `data` never changes.
- EndpointSlice: `addressType` (IPv4, IPv6, FQDN) is required and fixed; at most 1000
  endpoints, each with 1 to 100 addresses; at most 100 ports.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from api.errors import FieldError, field_forbidden, immutable, invalid_value, not_supported, required, too_many

Obj = dict[str, Any]
Errors = list[FieldError]

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


def validate_priority_class(obj: Obj) -> Errors:
    errs: Errors = []
    name = (obj.get("metadata") or {}).get("name") or ""
    value = obj.get("value")
    if name.startswith("system-"):
        if SYSTEM_PRIORITY_CLASSES.get(name) != value:
            errs.append(field_forbidden(
                "metadata.name",
                "priority class names with 'system-' prefix are reserved for system use only. error: "
                f"name {name} is not a known system priority class",
            ))
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(field_forbidden(
            "value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
        ))
    policy = obj.get("preemptionPolicy")
    if policy not in PREEMPTION_POLICIES:
        errs.append(not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return errs


def validate_priority_class_update(new: Obj, old: Obj) -> Errors:
    errs: Errors = []
    if new.get("value") != old.get("value"):
        errs.append(field_forbidden("value", "may not be changed in an update."))
    if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
        errs.append(immutable("preemptionPolicy", new.get("preemptionPolicy")))
    return errs


def _int_or_percent(value: Any, path: str) -> Errors:
    if value is None:
        return []
    if isinstance(value, int):
        return [] if value >= 0 else [invalid_value(path, value, "must be greater than or equal to 0")]
    text = str(value)
    if not text.endswith("%") or not text[:-1].isdigit():
        return [invalid_value(path, value, "a valid percent string must be a numeric string followed by an "
                              "ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
    if int(text[:-1]) > 100:
        return [invalid_value(path, value, "must not be greater than 100%")]
    return []


def validate_pdb(obj: Obj) -> Errors:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    errs: Errors = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(invalid_value("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
    errs += _int_or_percent(spec.get("minAvailable"), "spec.minAvailable")
    errs += _int_or_percent(spec.get("maxUnavailable"), "spec.maxUnavailable")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, EVICTION_POLICIES))
    return errs


def validate_controller_revision(obj: Obj) -> Errors:
    revision = obj.get("revision")
    if isinstance(revision, int) and revision < 0:
        return [invalid_value("revision", revision, "must be greater than or equal to 0")]
    return []


def validate_controller_revision_update(new: Obj, old: Obj) -> Errors:
    return [] if new.get("data") == old.get("data") else [field_forbidden("data", "field is immutable")]


def _address(kind: str, address: Any, path: str) -> Errors:
    try:
        ip = ipaddress.ip_address(str(address))
    except ValueError:
        if kind == "FQDN":
            return []
        return [invalid_value(path, address, "must be a valid IP address")]
    if kind == "FQDN" or (kind == "IPv4") != (ip.version == 4):
        return [invalid_value(path, address, f"must be an {kind} address")]
    return []


def validate_endpoint_slice(obj: Obj) -> Errors:
    errs: Errors = []
    kind = obj.get("addressType")
    if not kind:
        errs.append(required("addressType", ""))
    elif kind not in ADDRESS_TYPES:
        errs.append(not_supported("addressType", kind, ADDRESS_TYPES))
    endpoints = obj.get("endpoints") or []
    if len(endpoints) > 1000:
        errs.append(too_many("endpoints", len(endpoints), 1000))
    for i, endpoint in enumerate(endpoints[:1000]):
        addresses = endpoint.get("addresses") or []
        if not addresses:
            errs.append(required(f"endpoints[{i}].addresses", "must contain at least 1 address"))
        elif len(addresses) > 100:
            errs.append(too_many(f"endpoints[{i}].addresses", len(addresses), 100))
        for j, address in enumerate(addresses[:100]):
            errs += _address(str(kind), address, f"endpoints[{i}].addresses[{j}]")
    ports = obj.get("ports") or []
    if len(ports) > 100:
        errs.append(too_many("ports", len(ports), 100))
    for i, port in enumerate(ports[:100]):
        number = port.get("port")
        if number is not None and not 0 < number < 65536:
            errs.append(invalid_value(f"ports[{i}].port", number, "must be between 1 and 65535, inclusive"))
    return errs


def validate_endpoint_slice_update(new: Obj, old: Obj) -> Errors:
    value = new.get("addressType")
    return [] if value == old.get("addressType") else [immutable("addressType", value)]
