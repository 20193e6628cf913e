"""Validation of Ingress, IngressClass and NetworkPolicy (networking.k8s.io/v1).

Ingress: something must be routed (`defaultBackend` or `rules`); every path has a `pathType`
(Exact, Prefix, ImplementationSpecific), Exact and Prefix paths are absolute, and a backend is
either a service (name plus port number or name) or a resource. IngressClass: `controller` is
required and fixed. NetworkPolicy: `policyTypes` are Ingress/Egress, port protocols
TCP/UDP/SCTP, and `endPort` needs a numeric `port` not larger than it.
"""

from __future__ import annotations

from typing import Any

from api.errors import FieldError, field_forbidden, immutable, invalid_value, not_supported, required

Obj = dict[str, Any]
Errors = list[FieldError]

PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
POLICY_TYPES = ("Egress", "Ingress")
PROTOCOLS = ("SCTP", "TCP", "UDP")


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _backend(backend: Any, path: str) -> Errors:
    if not isinstance(backend, dict) or not (backend.get("service") or backend.get("resource")):
        return [invalid_value(path, backend or "", "resource or service must be specified")]
    if backend.get("service") and backend.get("resource"):
        return [invalid_value(path, "", "cannot set both resource and service backends")]
    service = backend.get("service")
    if not service:
        return []
    errs: Errors = []
    if not service.get("name"):
        errs.append(required(f"{path}.service.name", ""))
    port = service.get("port") or {}
    if port.get("name") and port.get("number"):
        errs.append(invalid_value(f"{path}.service.port", port, "cannot set both port name & port number"))
    elif not port.get("name") and not port.get("number"):
        errs.append(required(f"{path}.service.port", "port name or number is required"))
    elif port.get("number") is not None and not 0 < int(port["number"]) < 65536:
        errs.append(invalid_value(f"{path}.service.port.number", port["number"],
                                  "must be between 1 and 65535, inclusive"))
    return errs


def validate_ingress(obj: Obj) -> Errors:
    spec = _spec(obj)
    errs: Errors = []
    rules = spec.get("rules") or []
    if spec.get("defaultBackend"):
        errs += _backend(spec["defaultBackend"], "spec.defaultBackend")
    elif not rules:
        errs.append(invalid_value("spec.rules", rules, "either `defaultBackend` or `rules` must be specified"))
    for i, rule in enumerate(rules):
        host = rule.get("host") or ""
        if host and ("*" in host[1:] or ":" in host):
            errs.append(invalid_value(f"spec.rules[{i}].host", host, "must be a DNS-1123 subdomain or a wildcard"))
        http = rule.get("http")
        if http is None:
            continue
        paths = http.get("paths") or []
        if not paths:
            errs.append(required(f"spec.rules[{i}].http.paths", ""))
        for j, item in enumerate(paths):
            here = f"spec.rules[{i}].http.paths[{j}]"
            path_type = item.get("pathType")
            if not path_type:
                errs.append(required(f"{here}.pathType", "pathType must be specified"))
            elif path_type not in PATH_TYPES:
                errs.append(not_supported(f"{here}.pathType", path_type, PATH_TYPES))
            value = item.get("path") or ""
            if path_type in ("Exact", "Prefix") and not value.startswith("/"):
                errs.append(invalid_value(f"{here}.path", value, "must be an absolute path"))
            errs += _backend(item.get("backend"), f"{here}.backend")
    for i, tls in enumerate(spec.get("tls") or []):
        for j, host in enumerate(tls.get("hosts") or []):
            if "*" in host[1:]:
                errs.append(invalid_value(f"spec.tls[{i}].hosts[{j}]", host, "must be a DNS-1123 subdomain"))
    return errs


def validate_ingress_class(obj: Obj) -> Errors:
    controller = _spec(obj).get("controller")
    if not controller:
        return [required("spec.controller", "")]
    if len(controller) > 250:
        return [invalid_value("spec.controller", controller, "must be no more than 250 characters")]
    return []


def validate_ingress_class_update(new: Obj, old: Obj) -> Errors:
    value = _spec(new).get("controller")
    return [] if value == _spec(old).get("controller") else [immutable("spec.controller", value)]


def _ports(ports: Any, path: str) -> Errors:
    errs: Errors = []
    for i, port in enumerate(ports or []):
        here = f"{path}[{i}]"
        protocol = port.get("protocol")
        if protocol not in PROTOCOLS:
            errs.append(not_supported(f"{here}.protocol", protocol, PROTOCOLS))
        number, end = port.get("port"), port.get("endPort")
        if isinstance(number, int) and not 0 < number < 65536:
            errs.append(invalid_value(f"{here}.port", number, "must be between 1 and 65535, inclusive"))
        if end is not None:
            if not isinstance(number, int):
                why = "is non-numeric" if number is not None else "is not specified"
                errs.append(field_forbidden(f"{here}.endPort", f"may not be specified when `port` {why}"))
            elif end < number:
                errs.append(invalid_value(f"{here}.endPort", end, "must be greater than or equal to `port`"))
    return errs


def validate_network_policy(obj: Obj) -> Errors:
    spec = _spec(obj)
    errs: Errors = []
    types = spec.get("policyTypes") or []
    for i, kind in enumerate(types):
        if kind not in POLICY_TYPES:
            errs.append(not_supported(f"spec.policyTypes[{i}]", kind, POLICY_TYPES))
    if len(types) > 2:
        errs.append(invalid_value("spec.policyTypes", types, "may not specify more than two policyTypes"))
    for i, rule in enumerate(spec.get("ingress") or []):
        errs += _ports(rule.get("ports"), f"spec.ingress[{i}].ports")
    for i, rule in enumerate(spec.get("egress") or []):
        errs += _ports(rule.get("ports"), f"spec.egress[{i}].ports")
    return errs
