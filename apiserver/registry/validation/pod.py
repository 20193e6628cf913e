"""PodSpec and Pod validation, including what a Pod update may change.

A PodSpec is validated the same way wherever it appears — in a Pod (`spec`) or in a workload's
template (`spec.template.spec`) — so the functions here take the path prefix as an argument.

Pod updates: once created, a Pod is (almost) immutable. The kubelet has already started its
containers from that spec, so changing ports, volumes or commands would make the stored spec lie
about what is running. Kubernetes allows only a few fields to change (new images, a shorter
deadline, extra tolerations); everything else must go through a new Pod — which is exactly
why Deployments replace pods instead of editing them.
"""

from __future__ import annotations

import copy
from typing import Any

from api.errors import FieldError, duplicate, forbidden, invalid_value, not_supported, required
from apiserver.registry.validation.container import validate_containers
from apiserver.registry.validation.meta import (
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
)
from apiserver.registry.validation.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    name_is_dns_subdomain,
)

Obj = dict[str, Any]
Errors = list[FieldError]

SUPPORTED_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
SUPPORTED_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
SUPPORTED_TOLERATION_OPERATORS = ["Equal", "Exists"]
SUPPORTED_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
MAX_INT32 = 2147483647

# The volume sources Kubernetes knows; exactly one of them must be set per volume.
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
    "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
    "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
    "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
    "image",
)

POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)


def validate_volumes(volumes: object, path: str) -> tuple[Errors, set[str]]:
    """Returns the errors and the set of declared volume names (for the mounts to check)."""
    errs: Errors = []
    names: set[str] = set()
    if not isinstance(volumes, list):
        return errs, names
    for i, vol in enumerate(volumes):
        p = f"{path}[{i}]"
        if not isinstance(vol, dict):
            errs.append(invalid_value(p, vol, "must be an object"))
            continue
        sources = [s for s in VOLUME_SOURCES if vol.get(s) is not None]
        if not sources:
            errs.append(required(p, "must specify a volume type"))
        for extra in sources[1:]:
            errs.append(forbidden(f"{p}.{extra}", "may not specify more than 1 volume type"))
        name = vol.get("name") or ""
        if not name:
            errs.append(required(f"{p}.name", ""))
        else:
            errs += [invalid_value(f"{p}.name", name, m) for m in is_dns1123_label(name)]
        if name in names:
            errs.append(duplicate(f"{p}.name", name))
        names.add(name)
    return errs, names


def validate_tolerations(tolerations: object, path: str) -> Errors:
    errs: Errors = []
    if not isinstance(tolerations, list):
        return errs
    for i, t in enumerate(tolerations):
        p = f"{path}[{i}]"
        if not isinstance(t, dict):
            continue
        key = t.get("key") or ""
        operator = t.get("operator") or ""
        effect = t.get("effect") or ""
        value = t.get("value") or ""
        if key:
            errs += validate_labels({key: ""}, f"{p}.key")
        # An empty key with Exists tolerates every taint; with Equal it would match nothing.
        if not key and operator != "Exists":
            errs.append(invalid_value(f"{p}.operator", operator,
                                      'operator must be Exists when `key` is empty, which means '
                                      '"match all values and all keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(invalid_value(f"{p}.effect", effect,
                                      "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("", "Equal"):
            errs += validate_labels({"k": value}, f"{p}.operator")
        elif operator == "Exists":
            if value:
                errs.append(invalid_value(f"{p}.operator", t,
                                          "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{p}.operator", operator, SUPPORTED_TOLERATION_OPERATORS))
        if effect and effect not in SUPPORTED_TAINT_EFFECTS:
            errs.append(not_supported(f"{p}.effect", effect, SUPPORTED_TAINT_EFFECTS))
    return errs


def validate_restart_policy(policy: object, path: str) -> Errors:
    if not policy:
        return [required(path, "")]
    if policy not in SUPPORTED_RESTART_POLICIES:
        return [not_supported(path, policy, SUPPORTED_RESTART_POLICIES)]
    return []


def validate_pod_spec(spec: object, path: str) -> Errors:
    """ValidatePodSpec: volumes first (mounts refer to them), then containers, then the rest."""
    if not isinstance(spec, dict):
        return [required(path, "")]
    errs, volume_names = validate_volumes(spec.get("volumes"), f"{path}.volumes")
    seen: set[str] = set()
    errs += validate_containers(spec.get("containers"), f"{path}.containers", volume_names, seen,
                                need_one=True)
    errs += validate_containers(spec.get("initContainers"), f"{path}.initContainers", volume_names, seen,
                                need_one=False)
    errs += validate_restart_policy(spec.get("restartPolicy"), f"{path}.restartPolicy")
    dns_policy = spec.get("dnsPolicy") or ""
    if not dns_policy:
        errs.append(required(f"{path}.dnsPolicy", ""))
    elif dns_policy not in SUPPORTED_DNS_POLICIES:
        errs.append(not_supported(f"{path}.dnsPolicy", dns_policy, SUPPORTED_DNS_POLICIES))
    errs += validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    for key, check in (("serviceAccountName", is_dns1123_subdomain), ("nodeName", is_dns1123_subdomain),
                       ("hostname", is_dns1123_label), ("subdomain", is_dns1123_label)):
        value = spec.get(key)
        if value:
            errs += [invalid_value(f"{path}.{key}", value, m) for m in check(str(value))]
    errs += validate_tolerations(spec.get("tolerations"), f"{path}.tolerations")
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not isinstance(deadline, int) or not 1 <= deadline <= MAX_INT32):
        errs.append(invalid_value(f"{path}.activeDeadlineSeconds", deadline,
                                  f"must be between 1 and {MAX_INT32}, inclusive"))
    return errs


def validate_pod_template(template: object, path: str) -> Errors:
    """A PodTemplateSpec: labels/annotations of the template, then its PodSpec."""
    if not isinstance(template, dict):
        return [required(path, "")]
    meta = template.get("metadata") or {}
    errs = validate_labels(meta.get("labels"), f"{path}.labels")
    errs += validate_pod_spec(template.get("spec"), f"{path}.spec")
    return errs


def validate_pod(pod: Obj) -> Errors:
    errs = validate_object_meta(pod.get("metadata"), namespaced=True, name_fn=name_is_dns_subdomain)
    errs += validate_pod_spec(pod.get("spec"), "spec")
    return errs


def _munge_mutable_fields(new_spec: Obj, old_spec: Obj) -> Obj:
    """old_spec with every *allowed* change from new_spec applied: if that differs from
    new_spec, the update touched something it may not."""
    munged = copy.deepcopy(old_spec)
    for key in ("containers", "initContainers"):
        for mc, nc in zip(munged.get(key) or [], new_spec.get(key) or [], strict=False):
            if isinstance(mc, dict) and isinstance(nc, dict):
                mc["image"] = nc.get("image")
    for key in ("activeDeadlineSeconds", "tolerations"):
        if key in new_spec:
            munged[key] = copy.deepcopy(new_spec[key])
        else:
            munged.pop(key, None)
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(old_grace, int) and old_grace < 0 and new_spec.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = 1
    return munged


def validate_pod_update(new: Obj, old: Obj) -> Errors:
    errs = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    new_spec = new.get("spec") if isinstance(new.get("spec"), dict) else {}
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    errs += validate_pod_spec(new_spec, "spec")
    for key in ("containers", "initContainers"):
        if len(new_spec.get(key) or []) != len(old_spec.get(key) or []):
            errs.append(forbidden(f"spec.{key}", "pod updates may not add or remove containers"))
            return errs
    old_deadline = old_spec.get("activeDeadlineSeconds")
    new_deadline = new_spec.get("activeDeadlineSeconds")
    if old_deadline is not None:
        # A deadline may only get shorter: the pod must not outlive what was promised.
        if new_deadline is None:
            errs.append(invalid_value("spec.activeDeadlineSeconds", None,
                                      "must not update from a positive integer to nil value"))
        elif isinstance(new_deadline, int) and new_deadline > old_deadline:
            errs.append(invalid_value("spec.activeDeadlineSeconds", new_deadline,
                                      f"must be less than or equal to previous value of {old_deadline}"))
    errs += _validate_only_added_tolerations(new_spec.get("tolerations"), old_spec.get("tolerations"))
    if _munge_mutable_fields(new_spec, old_spec) != new_spec:
        errs.append(forbidden("spec", POD_UPDATE_FORBIDDEN))
    return errs


def _validate_only_added_tolerations(new: object, old: object) -> Errors:
    new_list = new if isinstance(new, list) else []
    old_list = old if isinstance(old, list) else []

    def identity(t: Obj) -> tuple[object, ...]:
        return (t.get("key"), t.get("operator") or "Equal", t.get("value") or "", t.get("effect") or "")

    remaining = [identity(t) for t in new_list if isinstance(t, dict)]
    for t in old_list:
        if isinstance(t, dict) and identity(t) not in remaining:
            return [forbidden("spec.tolerations", "existing toleration can not be modified except its "
                              "tolerationSeconds")]
    return []
