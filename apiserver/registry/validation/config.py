"""Validation of the smaller kinds: ConfigMap, Secret, Namespace, HPA, Lease, ResourceQuota.

ConfigMap and Secret keys become file names when mounted as a volume, hence the key grammar
(`[-._a-zA-Z0-9]+`, no "..") and the 1 MiB cap on the total size (an object must fit in one
etcd value). Secret `data` travels base64-encoded; the limit applies to the decoded bytes.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from api.errors import FieldError, invalid_value, required, too_long
from api.quantity import QuantityError, parse_quantity
from apiserver.registry.validation.names import is_config_map_key

Obj = dict[str, Any]
Errors = list[FieldError]

MAX_SECRET_SIZE = 1024 * 1024  # Kubernetes' MaxSecretSize, also used for ConfigMaps
STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}


def _decoded_len(value: object) -> int:
    try:
        return len(base64.b64decode(str(value), validate=True))
    except (binascii.Error, ValueError):
        return len(str(value))


def validate_config_map(obj: Obj) -> Errors:
    errs: Errors = []
    total = 0
    data = obj.get("data") or {}
    binary = obj.get("binaryData") or {}
    for key, value in data.items() if isinstance(data, dict) else []:
        msgs = is_config_map_key(key)
        if msgs:
            errs.append(invalid_value(f"data[{key}]", key, ";".join(msgs)))
        if key in binary:
            errs.append(invalid_value(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(str(value))
    for key, value in binary.items() if isinstance(binary, dict) else []:
        msgs = is_config_map_key(key)
        if msgs:
            errs.append(invalid_value(f"binaryData[{key}]", key, ";".join(msgs)))
        total += _decoded_len(value)
    if total > MAX_SECRET_SIZE:
        errs.append(too_long("", obj, MAX_SECRET_SIZE))
    return errs


def validate_secret(obj: Obj) -> Errors:
    errs: Errors = []
    total = 0
    data = obj.get("data") or {}
    for key, value in data.items() if isinstance(data, dict) else []:
        msgs = is_config_map_key(key)
        if msgs:
            errs.append(invalid_value(f"data[{key}]", key, ";".join(msgs)))
        total += _decoded_len(value)
    string_data = obj.get("stringData") or {}
    for key, value in string_data.items() if isinstance(string_data, dict) else []:
        msgs = is_config_map_key(key)
        if msgs:
            errs.append(invalid_value(f"stringData[{key}]", key, ";".join(msgs)))
        total += len(str(value))
    if total > MAX_SECRET_SIZE:
        errs.append(too_long("data", "", MAX_SECRET_SIZE))
    secret_type = obj.get("type")
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if secret_type == "kubernetes.io/service-account-token":
        key = "kubernetes.io/service-account.name"
        if not annotations.get(key):
            errs.append(required(f"metadata.annotations[{key}]", ""))
    elif secret_type == "kubernetes.io/dockerconfigjson":
        if ".dockerconfigjson" not in data:
            errs.append(required("data[.dockerconfigjson]", ""))
    elif secret_type == "kubernetes.io/tls":
        for key in ("tls.crt", "tls.key"):
            if key not in data:
                errs.append(required(f"data[{key}]", ""))
    return errs


def validate_namespace(obj: Obj) -> Errors:
    errs: Errors = []
    for name in (obj.get("spec") or {}).get("finalizers") or []:
        if "/" not in name and name not in STANDARD_FINALIZERS:
            errs.append(invalid_value("spec.finalizers", name,
                                      "name is neither a standard finalizer name nor is it fully qualified"))
    return errs


def validate_hpa(obj: Obj) -> Errors:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [required("spec", "")]
    errs: Errors = []
    ref = spec.get("scaleTargetRef") or {}
    if not ref.get("kind"):
        errs.append(required("spec.scaleTargetRef.kind", ""))
    if not ref.get("name"):
        errs.append(required("spec.scaleTargetRef.name", ""))
    min_replicas = spec.get("minReplicas")
    max_replicas = spec.get("maxReplicas")
    if isinstance(min_replicas, int) and min_replicas < 1:
        errs.append(invalid_value("spec.minReplicas", min_replicas, "must be greater than or equal to 1"))
    if not isinstance(max_replicas, int) or max_replicas < 1:
        errs.append(invalid_value("spec.maxReplicas", max_replicas, "must be greater than 0"))
    elif isinstance(min_replicas, int) and max_replicas < min_replicas:
        errs.append(invalid_value("spec.maxReplicas", max_replicas,
                                  "must be greater than or equal to `minReplicas`"))
    return errs


def validate_lease(obj: Obj) -> Errors:
    """A Lease's duration must be positive and its transition count not negative."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    errs: Errors = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(invalid_value("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.append(invalid_value("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    return errs


def validate_resource_quota(obj: Obj) -> Errors:
    """Every hard limit of a ResourceQuota is a quantity >= 0 (`spec.hard[cpu]`)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    hard = spec.get("hard") if isinstance(spec.get("hard"), dict) else {}
    errs: Errors = []
    for name, value in hard.items():
        try:
            q = parse_quantity(value)
        except (QuantityError, TypeError):
            continue  # the decoder refuses malformed quantities before validation
        if q.nanos < 0:
            errs.append(invalid_value(f"spec.hard[{name}]", str(q), "must be greater than or equal to 0"))
    return errs
