"""Defaulting: fill in what the user left out, the way Kubernetes 1.32 does.

`apply_defaults(resource, obj)` is called by the REST layer on every create and update, after
the body is parsed and (for creates) after `metadata.uid` is set — Jobs need the uid to build
their selector. It mutates `obj` in place and never overwrites a value that is already there,
so running it twice changes nothing. Resources without defaults are simply left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api.limitrange import item_defaults
from apiserver.registry.defaults.core import (
    carry_over_service_allocations,
    default_endpoints,
    default_namespace,
    default_node,
    default_secret,
    default_service,
)
from apiserver.registry.defaults.newkinds import (
    default_api_service,
    default_endpoint_slice,
    default_network_policy,
    default_persistent_volume,
    default_persistent_volume_claim,
    default_priority_class,
    default_storage_class,
)
from apiserver.registry.defaults.pod import (
    default_pod,
    default_pod_spec,
    default_pod_template,
    default_service_account,
    image_tag,
)
from apiserver.registry.defaults.quantities import canonicalize
from apiserver.registry.defaults.workloads import (
    default_cron_job,
    default_daemon_set,
    default_deployment,
    default_horizontal_pod_autoscaler,
    default_job,
    default_replica_set,
    default_replication_controller,
    default_stateful_set,
)

__all__ = [
    "apply_defaults",
    "carry_over_service_allocations",
    "default_pod_spec",
    "default_pod_template",
    "default_service_account",
    "image_tag",
]

Defaulter = Callable[[dict[str, Any]], None]

def default_limit_range(obj: dict[str, Any]) -> None:
    for item in (obj.get("spec") or {}).get("limits") or []:
        item_defaults(item)


DEFAULTERS: dict[str, Defaulter] = {
    "limitranges": default_limit_range,
    "pods": default_pod,
    "services": default_service,
    "namespaces": default_namespace,
    "secrets": default_secret,
    "nodes": default_node,
    "endpoints": default_endpoints,
    "replicationcontrollers": default_replication_controller,
    "replicasets.apps": default_replica_set,
    "deployments.apps": default_deployment,
    "daemonsets.apps": default_daemon_set,
    "statefulsets.apps": default_stateful_set,
    "jobs.batch": default_job,
    "cronjobs.batch": default_cron_job,
    "horizontalpodautoscalers.autoscaling": default_horizontal_pod_autoscaler,
    "persistentvolumes": default_persistent_volume,
    "persistentvolumeclaims": default_persistent_volume_claim,
    "storageclasses.storage.k8s.io": default_storage_class,
    "priorityclasses.scheduling.k8s.io": default_priority_class,
    "networkpolicies.networking.k8s.io": default_network_policy,
    "endpointslices.discovery.k8s.io": default_endpoint_slice,
    "apiservices.apiregistration.k8s.io": default_api_service,
}


def apply_defaults(resource: str, obj: dict[str, Any]) -> None:
    """Fill in Kubernetes' defaults for `resource` (e.g. "deployments.apps") in place, and put its
    quantities in canonical form (quantities.py)."""
    defaulter = DEFAULTERS.get(resource)
    if defaulter is not None:
        defaulter(obj)
    canonicalize(resource, obj)
