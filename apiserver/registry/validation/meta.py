"""ObjectMeta validation: the checks every kind shares (name, namespace, labels, annotations).

Every validation function in this package has the same shape as Kubernetes':
`validate_x(value, path) -> list[FieldError]`. `path` is the field path as Kubernetes prints it
(`spec.containers[0].image`); a function never stops at the first problem, so one 422 reply
lists everything that is wrong — the user fixes the manifest once, not once per error.
"""

from __future__ import annotations

from typing import Any

from api.errors import FieldError, forbidden, immutable, invalid_value, required, too_long
from api.labels import validate_label_key, validate_label_value
from apiserver.registry.validation.names import NameValidator, is_dns1123_label

Obj = dict[str, Any]
Errors = list[FieldError]

# Kubernetes caps the total size of all annotations of one object (keys + values).
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024


def _messages(result: object) -> list[str]:
    # api.labels returns its findings as a list of messages; tolerate a single string or None.
    if not result:
        return []
    if isinstance(result, str):
        return [result]
    return [str(m) for m in result]  # type: ignore[attr-defined]


def validate_labels(labels: object, path: str) -> Errors:
    """Label keys are qualified names ("app", "example.com/tier"), values short label-ish strings.

    Kubernetes reports both on the map's own path (`metadata.labels`), not per key.
    """
    errs: Errors = []
    if not isinstance(labels, dict):
        return errs
    for key, value in labels.items():
        for msg in _messages(validate_label_key(str(key))):
            errs.append(invalid_value(path, key, msg))
        if not isinstance(value, str):
            errs.append(invalid_value(path, value, "must be a string"))
            continue
        for msg in _messages(validate_label_value(value)):
            errs.append(invalid_value(path, value, msg))
    return errs


def validate_annotations(annotations: object, path: str) -> Errors:
    errs: Errors = []
    if not isinstance(annotations, dict):
        return errs
    total = 0
    for key, value in annotations.items():
        # Annotation keys follow the label key grammar, case-insensitively.
        for msg in _messages(validate_label_key(str(key).lower())):
            errs.append(invalid_value(path, key, msg))
        total += len(str(key)) + len(str(value))
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def validate_owner_references(refs: object, path: str) -> Errors:
    errs: Errors = []
    if not isinstance(refs, list):
        return errs
    controllers = 0
    for ref in refs:
        if not isinstance(ref, dict):
            continue
        api_version = ref.get("apiVersion") or ""
        if not api_version.rsplit("/", 1)[-1]:
            errs.append(invalid_value(f"{path}.apiVersion", api_version, "version must not be empty"))
        if not ref.get("kind"):
            errs.append(invalid_value(f"{path}.kind", ref.get("kind") or "", "kind must not be empty"))
        if not ref.get("name"):
            errs.append(invalid_value(f"{path}.name", ref.get("name") or "", "name must not be empty"))
        if not ref.get("uid"):
            errs.append(invalid_value(f"{path}.uid", ref.get("uid") or "", "uid must not be empty"))
        if ref.get("controller") is True:
            controllers += 1
    if controllers > 1:
        # Exactly one owner may manage an object; two controllers would fight over it.
        errs.append(invalid_value(path, refs, "Only one reference can have Controller set to true"))
    return errs


def validate_finalizers(finalizers: object, path: str) -> Errors:
    errs: Errors = []
    if not isinstance(finalizers, list):
        return errs
    for name in finalizers:
        for msg in _messages(validate_label_key(str(name))):
            errs.append(invalid_value(path, name, msg))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid_value(path, finalizers,
                                  "finalizer orphan and foregroundDeletion cannot be both set"))
    return errs


def validate_object_meta(meta: object, *, namespaced: bool, name_fn: NameValidator,
                         path: str = "metadata") -> Errors:
    """ValidateObjectMeta: name (or generateName), namespace, labels, annotations, owners."""
    if not isinstance(meta, dict):
        return [required(path, "")]
    errs: Errors = []
    generate_name = meta.get("generateName") or ""
    name = meta.get("name") or ""
    if generate_name:
        for msg in name_fn(generate_name, True):
            errs.append(invalid_value(f"{path}.generateName", generate_name, msg))
    if not name:
        errs.append(required(f"{path}.name", "name or generateName is required"))
    else:
        for msg in name_fn(name, False):
            errs.append(invalid_value(f"{path}.name", name, msg))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(required(f"{path}.namespace", ""))
        else:
            for msg in is_dns1123_label(namespace):
                errs.append(invalid_value(f"{path}.namespace", namespace, msg))
    elif namespace:
        errs.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(invalid_value(f"{path}.generation", generation, "must be greater than or equal to 0"))
    errs += validate_labels(meta.get("labels"), f"{path}.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    errs += validate_owner_references(meta.get("ownerReferences"), f"{path}.ownerReferences")
    errs += validate_finalizers(meta.get("finalizers"), f"{path}.finalizers")
    return errs


def validate_immutable(new: object, old: object, path: str) -> Errors:
    """The one-line rule behind every "field is immutable" error."""
    if new != old:
        return [immutable(path, new)]
    return []


def validate_object_meta_update(new: object, old: object, path: str = "metadata") -> Errors:
    """Identity never changes: name, namespace, uid and creation time stay as they were."""
    new_meta = new if isinstance(new, dict) else {}
    old_meta = old if isinstance(old, dict) else {}
    errs: Errors = []
    for key in ("name", "namespace", "uid", "creationTimestamp"):
        if old_meta.get(key) and new_meta.get(key) != old_meta.get(key):
            errs += validate_immutable(new_meta.get(key) or "", old_meta.get(key), f"{path}.{key}")
    errs += validate_labels(new_meta.get("labels"), f"{path}.labels")
    errs += validate_annotations(new_meta.get("annotations"), f"{path}.annotations")
    errs += validate_owner_references(new_meta.get("ownerReferences"), f"{path}.ownerReferences")
    errs += validate_finalizers(new_meta.get("finalizers"), f"{path}.finalizers")
    return errs
