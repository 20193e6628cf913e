"""How etcd's gRPC failures become our StorageError hierarchy.

etcd reports everything through gRPC status codes plus a human message; the message is the only
way to tell some cases apart (both "compacted" and "future revision" are OUT_OF_RANGE). The
strings below are etcd's own (`etcdserver: mvcc: ...`, `etcdserver: request is too large`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import grpc

from apiserver.storage.interface import StorageError, TooLarge, Unavailable

# Codes that mean "the server is not there (or not answering) right now": retry later.
_UNAVAILABLE_CODES = frozenset({
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,  # the channel was closed under the call
})

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


def translate(err: grpc.aio.AioRpcError, what: str) -> StorageError:
    """Map a gRPC error to a StorageError (callers handle Compacted themselves: it needs a lookup).

    `what` names the operation for the message, e.g. `put "/registry/pods/default/x"`.
    """
    code = err.code()
    details = err.details() or code.name
    if code in _UNAVAILABLE_CODES:
        return Unavailable(f"etcd unavailable during {what}: {details}")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED or "request is too large" in details:
        return TooLarge(f"etcd refused {what}: {details}")
    # etcd reports "no leader" / "leader changed" / "timed out" as UNAVAILABLE already; anything
    # else is a bug or a misconfiguration worth surfacing as is.
    return StorageError(f"etcd error during {what}: {code.name}: {details}")
