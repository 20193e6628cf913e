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

    # The owner's apiVersion.
    api_version: str | None = None
    # The owner's kind.
    kind: str | None = None
    # The owner's name.
    name: str | None = None
    # The owner's uid; a new object with the same name is not the owner.
    uid: str | None = None
    controller: bool | None = None  # at most one owner is *the* controller
    block_owner_deletion: bool | None = None  # foreground deletion waits for this dependent


class ManagedFieldsEntry(K8sModel):
    """Server-side-apply bookkeeping; kept verbatim (fieldsV1 is a free-form tree)."""

    # The name of the writer, e.g. kubectl-client-side-apply.
    manager: str | None = None
    # Apply or Update.
    operation: str | None = None
    api_version: str | None = None
    # When the manager last wrote.
    time: Time | None = None
    # The format of fieldsV1: FieldsV1.
    fields_type: str | None = None
    # The fields this manager owns, as a tree.
    fields_v1: FreeDict | None = None
    # The subresource written through, e.g. status.
    subresource: str | None = None


class ObjectMeta(K8sModel):
    """Metadata every stored object carries: its identity (name, namespace, uid), its labels and annotations, and the
    fields the API server and controllers keep (resourceVersion, generation, ownerReferences, finalizers,
    deletionTimestamp)."""

    # The object's name, unique among objects of its kind in its namespace. Cannot be changed.
    name: str | None = None
    generate_name: str | None = None  # prefix; the server appends 5 random characters
    # The namespace the object lives in; empty for cluster-scoped kinds. Cannot be changed.
    namespace: str | None = None
    # Deprecated and not set.
    self_link: str | None = None
    # A unique id the server assigns at creation; a re-created object with the same name gets a new one.
    uid: str | None = None
    resource_version: str | None = None  # opaque string: storage revision of the last write
    generation: Int64 | None = None  # bumped by the server when the spec changes
    # When the server created the object. Set by the server, read-only.
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None  # set = "being deleted, waiting for finalizers"
    # The grace period of the pending deletion, in seconds.
    deletion_grace_period_seconds: Int64 | None = None
    # Key/value pairs to select and group objects by (`kubectl get -l app=web`); selectors match them.
    labels: dict[str, str] | None = None
    # Key/value pairs for tools and people; not used for selection.
    annotations: dict[str, str] | None = None
    # The objects this one belongs to. The garbage collector deletes this object when all its owners are gone.
    owner_references: list[OwnerReference] | None = None
    # Names of parties that must clean up before the object is deleted. A delete only sets deletionTimestamp until
    # this list is empty.
    finalizers: list[str] | None = None
    # Which manager wrote which fields (server-side apply bookkeeping).
    managed_fields: list[ManagedFieldsEntry] | None = None


class ListMeta(K8sModel):
    """Metadata of a list response."""

    # Deprecated and not set.
    self_link: str | None = None
    resource_version: str | None = None  # the revision the list was read at: watch from here
    continue_: str | None = None  # wire name "continue" (a Python keyword); next page token
    # How many more items the list has after this page, when the server knows it.
    remaining_item_count: Int64 | None = None


T = TypeVar("T")


class K8sList(K8sModel, Generic[T]):
    """`<Kind>List`: the envelope of every list response. `items` is never null on the wire."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ListMeta | None = None
    items: list[T] = Field(default_factory=list)


class LabelSelectorRequirement(K8sModel):
    """One rule of a set-based selector: a label key, an operator and values."""

    # The label key the rule is about.
    key: str | None = None
    operator: str | None = None  # In, NotIn, Exists, DoesNotExist
    # The values for In and NotIn; empty for Exists and DoesNotExist.
    values: list[str] | None = None


class LabelSelector(K8sModel):
    """Set-based selector: every matchLabels pair AND every matchExpressions requirement."""

    # Labels an object must have, with exactly these values.
    match_labels: dict[str, str] | None = None
    # Set-based rules an object's labels must satisfy.
    match_expressions: list[LabelSelectorRequirement] | None = None


class BaseCondition(K8sModel):
    """The fields every `<Kind>Condition` shares; per-kind types add `lastUpdateTime`,
    `lastProbeTime` or `lastHeartbeatTime`."""

    # The kind of condition, e.g. Ready or Available.
    type: str | None = None
    status: str | None = None  # "True", "False", "Unknown" - strings, not booleans
    # When the status last changed.
    last_transition_time: Time | None = None
    reason: str | None = None  # CamelCase, machine-readable: MinimumReplicasAvailable
    message: str | None = None  # for humans


class Condition(BaseCondition):
    """metav1.Condition, used by newer kinds (Service status): also records the generation seen."""

    # The object's generation when this condition was set.
    observed_generation: Int64 | None = None


# --- Status: the body of every error (and of some successful deletes) --------------------------


class StatusCause(K8sModel):
    reason: str | None = None  # e.g. FieldValueRequired
    # The problem, for people.
    message: str | None = None
    field: str | None = None  # e.g. spec.containers[0].image


class StatusDetails(K8sModel):
    """The object an error concerns and its causes."""

    # The name of the object concerned.
    name: str | None = None
    # The API group of the object concerned.
    group: str | None = None
    kind: str | None = None
    # The uid of the object concerned.
    uid: str | None = None
    # The individual problems, e.g. one per invalid field.
    causes: list[StatusCause] | None = None
    # How long the client should wait before trying again.
    retry_after_seconds: int | None = None


class Status(K8sModel):
    """The result of an operation that returns no object: every error, and some deletes."""

    api_version: str | None = "v1"
    kind: str | None = "Status"
    metadata: ListMeta | None = None
    status: str | None = None  # "Success" or "Failure"
    # What happened, for people.
    message: str | None = None
    reason: str | None = None  # NotFound, AlreadyExists, Conflict, Invalid, ...
    # More about the error: the object it concerns and, for Invalid, the causes per field.
    details: StatusDetails | None = None
    code: int | None = None  # the HTTP status code


class Preconditions(K8sModel):
    """Conditions the object must meet for an operation to go ahead."""

    # The uid the object must have.
    uid: str | None = None
    # The resourceVersion the object must have.
    resource_version: str | None = None


class DeleteOptions(K8sModel):
    """Options of a delete: how long the object may take to terminate, and what happens to its dependents."""

    api_version: str | None = None
    kind: str | None = None
    # Seconds the object may take to terminate; 0 deletes at once.
    grace_period_seconds: Int64 | None = None
    # The delete only happens if the object still has this uid and resourceVersion.
    preconditions: Preconditions | None = None
    orphan_dependents: bool | None = None  # deprecated; use propagationPolicy
    propagation_policy: str | None = None  # Orphan, Background, Foreground
    # "All" checks the delete without doing it.
    dry_run: list[str] | None = None


