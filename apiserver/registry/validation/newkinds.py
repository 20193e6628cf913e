"""The validators of the storage, networking, policy, scheduling and discovery kinds, by resource.

One table so the package's entry points (`validate_create`, `validate_update`) need one line
each for all of them: resource key -> (whole-object rules, update-only rules or None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api.errors import FieldError
from apiserver.registry.validation import networking, policy, storage

Obj = dict[str, Any]
Errors = list[FieldError]
Create = Callable[[Obj], Errors]
Update = Callable[[Obj, Obj], Errors]

NEW_CLUSTER_SCOPED = (
    "persistentvolumes",
    "storageclasses.storage.k8s.io",
    "priorityclasses.scheduling.k8s.io",
    "ingressclasses.networking.k8s.io",
)

NEW_KINDS: dict[str, tuple[Create, Update | None]] = {
    "persistentvolumes": (storage.validate_persistent_volume, storage.validate_persistent_volume_update),
    "persistentvolumeclaims": (storage.validate_persistent_volume_claim,
                               storage.validate_persistent_volume_claim_update),
    "storageclasses.storage.k8s.io": (storage.validate_storage_class, storage.validate_storage_class_update),
    "ingresses.networking.k8s.io": (networking.validate_ingress, None),
    "ingressclasses.networking.k8s.io": (networking.validate_ingress_class,
                                         networking.validate_ingress_class_update),
    "networkpolicies.networking.k8s.io": (networking.validate_network_policy, None),
    "priorityclasses.scheduling.k8s.io": (policy.validate_priority_class, policy.validate_priority_class_update),
    "poddisruptionbudgets.policy": (policy.validate_pdb, None),
    "controllerrevisions.apps": (policy.validate_controller_revision, policy.validate_controller_revision_update),
    "endpointslices.discovery.k8s.io": (policy.validate_endpoint_slice, policy.validate_endpoint_slice_update),
}
