"""Validation of APIService, with kube-aggregator's rules and wording.

The name must be `<version>.<group>` (so one object per group/version); the group is a DNS
subdomain (empty only for the legacy `v1`), the version a DNS-1035 label; the two priorities
are bounded; a Local APIService (no `service`) may carry no TLS settings; a Service reference
needs a namespace, a name and a valid port, and cannot both skip verification and give a CA.
"""

from __future__ import annotations

from typing import Any

from api.errors import FieldError, invalid_value, not_supported, required
from apiserver.registry.validation.meta import validate_object_meta
from apiserver.registry.validation.names import (
    inclusive_range_error,
    is_dns1035_label,
    is_dns1123_subdomain,
    name_is_path_segment,
)

Obj = dict[str, Any]
Errors = list[FieldError]
CONDITION_STATUSES = ("True", "False", "Unknown")


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def validate_api_service(obj: Obj) -> Errors:
    spec = _spec(obj)
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    wanted = f"{version}.{group}"

    def name_rule(name: str, prefix: bool) -> list[str]:
        problems = name_is_path_segment(name, prefix)
        if problems:
            return problems
        return [] if name == wanted else [f'must be `spec.version+"."+spec.group`: "{wanted}"']

    errs = validate_object_meta(obj.get("metadata"), namespaced=False, name_fn=name_rule)
    if not group and version != "v1":
        errs.append(required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
    if group:
        errs += [invalid_value("spec.group", group, m) for m in is_dns1123_subdomain(group)]
    errs += [invalid_value("spec.version", version, m) for m in is_dns1035_label(version)]
    gpm, vp = spec.get("groupPriorityMinimum") or 0, spec.get("versionPriority") or 0
    if not isinstance(gpm, int) or not 0 < gpm <= 20000:
        errs.append(invalid_value("spec.groupPriorityMinimum", gpm, "must be positive and less than 20000"))
    if not isinstance(vp, int) or not 0 < vp <= 1000:
        errs.append(invalid_value("spec.versionPriority", vp, "must be positive and less than 1000"))
    ca, insecure, service = spec.get("caBundle") or "", bool(spec.get("insecureSkipTLSVerify")), spec.get("service")
    if not isinstance(service, dict):
        if ca:
            errs.append(invalid_value("spec.caBundle", f"{len(ca)} bytes", "local APIServices may not have a caBundle"))
        if insecure:
            errs.append(invalid_value("spec.insecureSkipTLSVerify", True,
                                      "local APIServices may not have insecureSkipTLSVerify"))  # fmt: skip
        return errs + _validate_status(obj)
    if not service.get("namespace"):
        errs.append(required("spec.service.namespace"))
    if not service.get("name"):
        errs.append(required("spec.service.name"))
    port = service.get("port")
    if not isinstance(port, int) or not 0 < port < 65536:
        errs.append(invalid_value("spec.service.port", port, f"port is not valid: {inclusive_range_error(1, 65535)}"))
    if insecure and ca:
        errs.append(invalid_value("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
    return errs + _validate_status(obj)


def _validate_status(obj: Obj) -> Errors:
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    errs: Errors = []
    for i, cond in enumerate((status or {}).get("conditions") or []):
        value = cond.get("status") if isinstance(cond, dict) else None
        if value not in CONDITION_STATUSES:
            errs.append(not_supported(f"status.conditions[{i}].status", value, CONDITION_STATUSES))
    return errs
