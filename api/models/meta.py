"""meta.k8s.io/v1: the parts every object shares - ObjectMeta, ListMeta, selectors, Status.

Every Kubernetes object is `apiVersion` + `kind` + `metadata` (+ `spec` + `status`). The metadata
is where the machinery lives: `resourceVersion` for optimistic concurrency and watch resumption,
`generation` for "the spec changed", `ownerReferences` for garbage collection, `finalizers` and
`deletionTimestamp` for two-phase deletion. Controllers read and write these fields; the API
server sets most of them.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import Field

from api.models.base import FreeDict, Int64, K8sModel, Time, from_dict, to_dict

__all__ = [
    "BaseCondition",
    "Condition",
    "DeleteOptions",
    "K8sList",
    "K8sModel",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
    "Preconditions",
    "Status",
    "StatusCause",
    "StatusDetails",
    "from_dict",
    "to_dict",
]


class OwnerReference(K8sModel):
    """"This object belongs to that one": what the garbage collector follows."""

    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None
    controller: bool | None = None  # at most one owner is *the* controller
    block_owner_deletion: bool | None = None  # foreground deletion waits for this dependent


class ManagedFieldsEntry(K8sModel):
    """Server-side-apply bookkeeping; kept verbatim (fieldsV1 is a free-form tree)."""

    manager: str | None = None
    operation: str | None = None
    api_version: str | None = None
    time: Time | None = None
    fields_type: str | None = None
    fields_v1: FreeDict | None = None
    subresource: str | None = None


class ObjectMeta(K8sModel):
    name: str | None = None
    generate_name: str | None = None  # prefix; the server appends 5 random characters
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None  # opaque string: storage revision of the last write
    generation: Int64 | None = None  # bumped by the server when the spec changes
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None  # set = "being deleted, waiting for finalizers"
    deletion_grace_period_seconds: Int64 | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[ManagedFieldsEntry] | None = None


class ListMeta(K8sModel):
    self_link: str | None = None
    resource_version: str | None = None  # the revision the list was read at: watch from here
    continue_: str | None = None  # wire name "continue" (a Python keyword); next page token
    remaining_item_count: Int64 | None = None


T = TypeVar("T")


class K8sList(K8sModel, Generic[T]):
    """`<Kind>List`: the envelope of every list response. `items` is never null on the wire."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ListMeta | None = None
    items: list[T] = Field(default_factory=list)


class LabelSelectorRequirement(K8sModel):
    key: str | None = None
    operator: str | None = None  # In, NotIn, Exists, DoesNotExist
    values: list[str] | None = None


class LabelSelector(K8sModel):
    """Set-based selector: every matchLabels pair AND every matchExpressions requirement."""

    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class BaseCondition(K8sModel):
    """The fields every `<Kind>Condition` shares; per-kind types add `lastUpdateTime`,
    `lastProbeTime` or `lastHeartbeatTime`."""

    type: str | None = None
    status: str | None = None  # "True", "False", "Unknown" - strings, not booleans
    last_transition_time: Time | None = None
    reason: str | None = None  # CamelCase, machine-readable: MinimumReplicasAvailable
    message: str | None = None  # for humans


class Condition(BaseCondition):
    """metav1.Condition, used by newer kinds (Service status): also records the generation seen."""

    observed_generation: Int64 | None = None


# --- Status: the body of every error (and of some successful deletes) --------------------------


class StatusCause(K8sModel):
    reason: str | None = None  # e.g. FieldValueRequired
    message: str | None = None
    field: str | None = None  # e.g. spec.containers[0].image


class StatusDetails(K8sModel):
    name: str | None = None
    group: str | None = None
    kind: str | None = None
    uid: str | None = None
    causes: list[StatusCause] | None = None
    retry_after_seconds: int | None = None


class Status(K8sModel):
    api_version: str | None = "v1"
    kind: str | None = "Status"
    metadata: ListMeta | None = None
    status: str | None = None  # "Success" or "Failure"
    message: str | None = None
    reason: str | None = None  # NotFound, AlreadyExists, Conflict, Invalid, ...
    details: StatusDetails | None = None
    code: int | None = None  # the HTTP status code


class Preconditions(K8sModel):
    uid: str | None = None
    resource_version: str | None = None


class DeleteOptions(K8sModel):
    api_version: str | None = None
    kind: str | None = None
    grace_period_seconds: Int64 | None = None
    preconditions: Preconditions | None = None
    orphan_dependents: bool | None = None  # deprecated; use propagationPolicy
    propagation_policy: str | None = None  # Orphan, Background, Foreground
    dry_run: list[str] | None = None


