"""Validation: is this object acceptable? Kubernetes' rules, Kubernetes' field paths and words.

`validate_create(resource, obj)` and `validate_update(resource, new, old)` return a list of
`api.errors.FieldError`; an empty list means valid. The REST layer turns a non-empty list into
a 422 Invalid Status (`api.errors.invalid(kind, group, name, errors)`), which kubectl prints as
`The Deployment "web" is invalid: spec.template.metadata.labels: Invalid value: …`.

Order of operations in the REST layer, as in Kubernetes: decode → default (defaults package) →
validate → admission/allocation → store. Validation therefore sees defaulted objects, and may
insist on fields (`imagePullPolicy`, `restartPolicy`) that defaulting always fills in.

The modules, one concept each: names (name grammars), meta (ObjectMeta), container and pod
(the PodSpec), workloads (RC and apps/v1), batch (Job, CronJob), service, config (ConfigMap,
Secret, Namespace, HPA).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api.errors import FieldError
from apiserver.registry.validation.apiregistration import validate_api_service
from apiserver.registry.validation.batch import (
    validate_cron_job_spec,
    validate_job_spec,
    validate_job_update,
)
from apiserver.registry.validation.config import (
    validate_config_map,
    validate_hpa,
    validate_lease,
    validate_namespace,
    validate_resource_quota,
    validate_secret,
)
from apiserver.registry.validation.meta import validate_object_meta, validate_object_meta_update
from apiserver.registry.validation.names import (
    NameValidator,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    name_is_path_segment,
)
from apiserver.registry.validation.newkinds import NEW_CLUSTER_SCOPED, NEW_KINDS
from apiserver.registry.validation.pod import validate_pod, validate_pod_template, validate_pod_update
from apiserver.registry.validation.service import validate_service, validate_service_update
from apiserver.registry.validation.workloads import (
    validate_apps_update,
    validate_daemon_set_spec,
    validate_deployment_spec,
    validate_rc_spec,
    validate_replica_set_spec,
    validate_stateful_set_spec,
)

__all__ = ["validate_create", "validate_update", "name_validator", "CLUSTER_SCOPED"]

Obj = dict[str, Any]
Errors = list[FieldError]

CLUSTER_SCOPED = {
    "nodes", "namespaces", "clusterroles.rbac.authorization.k8s.io",
    "clusterrolebindings.rbac.authorization.k8s.io",
    "apiservices.apiregistration.k8s.io",
    *NEW_CLUSTER_SCOPED,
}

# Which grammar each resource's names follow; everything else is a DNS-1123 subdomain.
_NAME_VALIDATORS: dict[str, NameValidator] = {
    "namespaces": name_is_dns_label,
    "services": name_is_dns1035_label,
    "roles.rbac.authorization.k8s.io": name_is_path_segment,
    "clusterroles.rbac.authorization.k8s.io": name_is_path_segment,
    "rolebindings.rbac.authorization.k8s.io": name_is_path_segment,
    "clusterrolebindings.rbac.authorization.k8s.io": name_is_path_segment,
    "apiservices.apiregistration.k8s.io": name_is_path_segment,
}


def name_validator(resource: str) -> NameValidator:
    """The name rule of `resource`, e.g. for checking a name in a URL before reading a body."""
    return _NAME_VALIDATORS.get(resource, name_is_dns_subdomain)


def _meta(resource: str, obj: Obj) -> Errors:
    return validate_object_meta(obj.get("metadata"), namespaced=resource not in CLUSTER_SCOPED,
                                name_fn=name_validator(resource))


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _pod_template(obj: Obj) -> Errors:
    return validate_pod_template(obj.get("template"), "template")


# resource -> validator of the whole object (metadata included).
_CREATE: dict[str, Callable[[Obj], Errors]] = {
    "pods": validate_pod,
    "services": validate_service,
    "replicationcontrollers": lambda o: _meta("replicationcontrollers", o) + validate_rc_spec(_spec(o)),
    "replicasets.apps": lambda o: _meta("replicasets.apps", o) + validate_replica_set_spec(_spec(o)),
    "deployments.apps": lambda o: _meta("deployments.apps", o) + validate_deployment_spec(_spec(o)),
    "daemonsets.apps": lambda o: _meta("daemonsets.apps", o) + validate_daemon_set_spec(_spec(o)),
    "statefulsets.apps": lambda o: _meta("statefulsets.apps", o) + validate_stateful_set_spec(_spec(o)),
    "jobs.batch": lambda o: _meta("jobs.batch", o) + validate_job_spec(o.get("spec"), "spec"),
    "cronjobs.batch": lambda o: _meta("cronjobs.batch", o)
    + validate_cron_job_spec(o.get("spec"), (o.get("metadata") or {}).get("name") or ""),
    "configmaps": lambda o: _meta("configmaps", o) + validate_config_map(o),
    "secrets": lambda o: _meta("secrets", o) + validate_secret(o),
    "namespaces": lambda o: _meta("namespaces", o) + validate_namespace(o),
    "horizontalpodautoscalers.autoscaling": lambda o: _meta("horizontalpodautoscalers.autoscaling", o)
    + validate_hpa(o),
    "podtemplates": lambda o: _meta("podtemplates", o) + _pod_template(o),
    "leases.coordination.k8s.io": lambda o: _meta("leases.coordination.k8s.io", o) + validate_lease(o),
    "resourcequotas": lambda o: _meta("resourcequotas", o) + validate_resource_quota(o),
    "apiservices.apiregistration.k8s.io": validate_api_service,  # its name rule needs the spec
}


def validate_create(resource: str, obj: Obj) -> Errors:
    """All problems with a new object of `resource` ("pods", "deployments.apps", …)."""
    validator = _CREATE.get(resource)
    if resource in NEW_KINDS:
        return _meta(resource, obj) + NEW_KINDS[resource][0](obj)
    if validator is not None:
        return validator(obj)
    # Kinds without spec rules of their own (nodes, events, leases, RBAC …): metadata only.
    return _meta(resource, obj)


def validate_update(resource: str, new: Obj, old: Obj) -> Errors:
    """All problems with replacing `old` by `new`: the new object must be valid on its own,
    and fields that are fixed after creation must not have changed."""
    if resource == "pods":
        return validate_pod_update(new, old)
    errs = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    # The create checks again, minus metadata (covered above; the name cannot change anyway).
    errs += [e for e in validate_create(resource, new) if not e.field.startswith("metadata.")]
    if resource in ("deployments.apps", "replicasets.apps", "daemonsets.apps", "statefulsets.apps"):
        errs += validate_apps_update(_spec(new), _spec(old), resource)
    elif resource == "jobs.batch":
        errs += validate_job_update(_spec(new), _spec(old))
    elif resource == "services":
        errs += validate_service_update(new, old)
    elif resource in NEW_KINDS and NEW_KINDS[resource][1] is not None:
        errs += NEW_KINDS[resource][1](new, old)  # type: ignore[misc]
    return errs

