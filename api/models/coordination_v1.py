"""coordination.k8s.io/v1 Lease: a tiny object used as a lock with a timeout.

Two users: leader election (the holder renews `renewTime`; a candidate takes over when
`renewTime + leaseDurationSeconds` has passed) and node heartbeats (each kubelet renews the
Lease named after its node in `kube-node-lease`, far cheaper than rewriting Node.status).
"""

from __future__ import annotations

from api.models.base import K8sModel, MicroTime
from api.models.meta import K8sList, ObjectMeta


class LeaseSpec(K8sModel):
    """Who holds a Lease and until when."""

    # The current holder.
    holder_identity: str | None = None
    # Seconds the lease lasts after renewTime; a candidate may take it over after that.
    lease_duration_seconds: int | None = None
    # When the current holder acquired the lease.
    acquire_time: MicroTime | None = None
    # When the holder last renewed the lease.
    renew_time: MicroTime | None = None
    lease_transitions: int | None = None  # how many times the holder changed
    # How a new holder is chosen in coordinated leader election.
    strategy: str | None = None
    # The holder a coordinated election would like to hand the lease to.
    preferred_holder: str | None = None


class Lease(K8sModel):
    """A Lease is a lock with a timeout: leader election and node heartbeats are built on it."""

    api_version: str | None = "coordination.k8s.io/v1"
    kind: str | None = "Lease"
    metadata: ObjectMeta | None = None
    spec: LeaseSpec | None = None


class LeaseList(K8sList[Lease]):
    api_version: str | None = "coordination.k8s.io/v1"
    kind: str | None = "LeaseList"
