"""How etcd's gRPC failures become our StorageError hierarchy.

etcd reports everything through gRPC status codes plus a human message; the message is the only
way to tell some cases apart (both "compacted" and "future revision" are OUT_OF_RANGE). The
strings below are etcd's own (`etcdserver: mvcc: ...`, `etcdserver: request is too large`).

Writes need one more distinction. When a write fails because the member could not be reached at
all (connection refused) or etcd refused it before proposing it (no leader, too many requests),
nothing was written: the error is Unavailable (503) and the write may be retried on another
member. When the request was sent and then the answer was lost (the connection dropped, the
deadline passed, etcd's own "request timed out"), the write may have been committed: the error
is OutcomeUnknown (504 Timeout), and it must not be retried blindly (a retried create would
report AlreadyExists for our own object).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import grpc

from apiserver.storage.interface import OutcomeUnknown, StorageError, TooLarge, Unavailable

# Codes that mean "the server is not there (or not answering) right now": retry later.
_UNAVAILABLE_CODES = frozenset({
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,  # the channel was closed under the call
})

# Details of UNAVAILABLE errors that prove the request was never proposed to etcd's log: gRPC's
# own "could not connect", and etcd's refusals before proposing.
_NOT_SENT_DETAILS = (
    "failed to connect",
    "connection refused",
    "etcdserver: no leader",
    "etcdserver: not capable",
    "etcdserver: too many requests",
    "etcdserver: server stopped",
)

COMPACTED_MESSAGE = "required revision has been compacted"
FUTURE_REVISION_MESSAGE = "required revision is a future revision"


def is_compacted(err: grpc.aio.AioRpcError) -> bool:
    return err.code() == grpc.StatusCode.OUT_OF_RANGE and COMPACTED_MESSAGE in (err.details() or "")


def is_future_revision(err: grpc.aio.AioRpcError) -> bool:
    return err.code() == grpc.StatusCode.OUT_OF_RANGE and FUTURE_REVISION_MESSAGE in (err.details() or "")


@contextlib.contextmanager
def channel_closed_is_unavailable(what: str) -> Iterator[None]:
    """Turn "our own channel was closed under this call" into Unavailable.

    `close()` closes the gRPC channel, and gRPC then ends calls still in flight by raising
    asyncio.CancelledError in the caller, as if *its task* had been cancelled; new calls get a
    UsageError. Neither is a cancellation of the caller, so we report them as "store went away".
    A real cancellation of the calling task (`task.cancelling()`) passes through untouched.
    """
    try:
        yield
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        raise Unavailable(f"{what}: the connection to etcd was closed") from None
    except grpc.aio.UsageError as err:
        raise Unavailable(f"{what}: the connection to etcd is closed ({err})") from None


def member_trouble(err: grpc.aio.AioRpcError) -> bool:
    """The member we asked cannot serve right now (another member may): switch members."""
    return err.code() in _UNAVAILABLE_CODES and err.code() != grpc.StatusCode.CANCELLED


def not_sent(err: grpc.aio.AioRpcError) -> bool:
    """The request certainly changed nothing: it never reached etcd's log."""
    if err.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    details = (err.details() or "").lower()
    return any(d in details for d in _NOT_SENT_DETAILS)


def translate(err: grpc.aio.AioRpcError, what: str, *, write: bool = False) -> StorageError:
    """Map a gRPC error to a StorageError (callers handle Compacted themselves: it needs a lookup).

    `what` names the operation for the message, e.g. `put "/registry/pods/default/x"`; `write`
    says it was a write, whose outcome is unknown unless the error proves it was not sent.
    """
    code = err.code()
    details = err.details() or code.name
    if write and code in _UNAVAILABLE_CODES and code != grpc.StatusCode.CANCELLED and not not_sent(err):
        # Go's wording for an expired deadline, so the 504 reads as kube-apiserver's does.
        cause = "context deadline exceeded" if code == grpc.StatusCode.DEADLINE_EXCEEDED else details
        return OutcomeUnknown(f"{cause} (during {what})")
    if code in _UNAVAILABLE_CODES:
        return Unavailable(f"etcd unavailable during {what}: {details}")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED or "request is too large" in details:
        return TooLarge(f"etcd refused {what}: {details}")
    # etcd reports "no leader" / "leader changed" / "timed out" as UNAVAILABLE already; anything
    # else is a bug or a misconfiguration worth surfacing as is.
    return StorageError(f"etcd error during {what}: {code.name}: {details}")
