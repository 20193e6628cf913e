"""One etcd watch stream, turned into an async iterator of WatchEvents that never hangs.

Why not aetcd's `watch()`: aetcd multiplexes every watch over one shared stream and delivers
events through callbacks; when etcd dies without closing the socket (a frozen process, a lost
network) its iterator waits forever. We open one bidirectional `Watch` stream per watch with
aetcd's generated stubs instead, and keep it honest with a heartbeat:

- every `keepalive` seconds we send a `WatchProgressRequest`; etcd answers on the same stream
  with an empty response carrying its current revision (watch_id -1);
- the same request is sent at once when the watcher asks for progress (ProgressRequests), and
  each such empty response is yielded as a PROGRESS event;
- so a live stream always produces *something* within `keepalive` seconds; if nothing arrives
  within `keepalive + timeout` the server is presumed dead and the iterator ends with
  Unavailable. A killed etcd closes the socket and is noticed at once.

Event mapping (etcd has only PUT and DELETE):
- PUT with create_revision == mod_revision is the key's first version → ADDED, else MODIFIED;
- DELETE → DELETED; its value is the last value before deletion, which etcd sends as `prev_kv`
  because we ask for it (`prev_kv=True`).

Compaction: if the start revision is older than etcd's compacted revision, etcd first confirms
the watch (`created`) and then cancels it with `compact_revision` set; we raise Compacted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import grpc
from aetcd.rpc import WatchStub, kv_pb2, rpc_pb2

from apiserver.storage._etcd_errors import channel_closed_is_unavailable, translate
from apiserver.storage.interface import Compacted, ProgressRequests, StorageError, Unavailable, WatchEvent

_PUT = kv_pb2.Event.PUT

# etcd's "hasleader" metadata (what Go's clientv3.WithRequireLeader sends): a member that loses
# its leader cancels our watch, and refuses unary calls with "no leader", instead of serving
# stale data or hanging until the leader is back. We then move to another member.
REQUIRE_LEADER = (("hasleader", "true"),)


async def watch_stream(
    stub: WatchStub,
    *,
    key: bytes,
    range_end: bytes,
    start_revision: int,
    decode_key: Callable[[bytes], str],
    timeout: float,
    keepalive: float,
    progress: ProgressRequests | None = None,
) -> AsyncIterator[WatchEvent]:
    """Yield every change in [key, range_end) from `start_revision` (0 = from now on), and a
    PROGRESS event for each progress notification etcd sends (asked for by `progress` or by the
    heartbeat)."""
    what = f"watch {decode_key(key)!r}"
    with channel_closed_is_unavailable(what):
        call = stub.Watch(metadata=REQUIRE_LEADER)
    heartbeat: asyncio.Task[None] | None = None
    try:
        create = rpc_pb2.WatchCreateRequest(
            key=key, range_end=range_end, start_revision=max(start_revision, 0), prev_kv=True
        )
        try:
            with channel_closed_is_unavailable(what):
                await asyncio.wait_for(call.write(rpc_pb2.WatchRequest(create_request=create)), timeout)
            first = await _read(call, timeout, what)
        except grpc.aio.AioRpcError as err:
            raise translate(err, what) from err
        except TimeoutError:
            raise Unavailable(f"{what}: etcd did not take the watch request in {timeout}s") from None
        if not first.created:
            raise StorageError(f"{what}: etcd did not confirm the watch: {first}")
        _check_canceled(first, start_revision, what)
        heartbeat = asyncio.create_task(_heartbeat(call, keepalive, progress))

        while True:
            try:
                resp = await _read(call, keepalive + timeout, what)
            except grpc.aio.AioRpcError as err:
                raise translate(err, what) from err
            _check_canceled(resp, start_revision, what)
            if not resp.events and not resp.created:
                # a progress notification: every change up to this revision has been sent (only a
                # watcher that takes progress hears of it; to others it was only a heartbeat)
                if progress is not None and resp.header.revision:
                    yield WatchEvent("PROGRESS", "", None, resp.header.revision)
                continue
            for ev in resp.events:
                yield _to_event(ev, decode_key)
    finally:
        if heartbeat is not None:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await heartbeat
        call.cancel()


async def _read(call: grpc.aio.StreamStreamCall, within: float, what: str) -> rpc_pb2.WatchResponse:
    """The next response, or Unavailable when the stream ends or stays silent for too long."""
    try:
        # asyncio.timeout, not wait_for: no task per message, so a busy loop still reads the
        # stream at one turn per message (the watch cache must keep up with etcd under load)
        with channel_closed_is_unavailable(what):
            async with asyncio.timeout(within):
                resp = await call.read()
    except TimeoutError:
        raise Unavailable(f"{what}: no answer from etcd for {within:.1f}s") from None
    if resp is grpc.aio.EOF:
        raise Unavailable(f"{what}: etcd closed the watch stream")
    return resp


def _check_canceled(resp: rpc_pb2.WatchResponse, start_revision: int, what: str) -> None:
    if resp.compact_revision:
        raise Compacted(start_revision, resp.compact_revision)
    if resp.canceled:
        raise Unavailable(f"{what}: etcd canceled the watch: {resp.cancel_reason or 'no reason given'}")


async def _heartbeat(call: grpc.aio.StreamStreamCall, every: float, progress: ProgressRequests | None) -> None:
    """Ask for a progress notification every `every` seconds (proves the stream is alive), and
    at once whenever the watcher asks (`progress`)."""
    request = rpc_pb2.WatchRequest(progress_request=rpc_pb2.WatchProgressRequest())
    while True:
        if progress is None:
            await asyncio.sleep(every)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(progress.wanted.wait(), every)
            progress.take()
        try:
            await call.write(request)
        except Exception:
            return  # the reader notices the dead stream (error or silence) and reports it


def _to_event(ev: kv_pb2.Event, decode_key: Callable[[bytes], str]) -> WatchEvent:
    kv = ev.kv
    prev = ev.prev_kv.value if ev.HasField("prev_kv") else None
    if ev.type == _PUT:
        kind = "ADDED" if kv.create_revision == kv.mod_revision else "MODIFIED"
        return WatchEvent(kind, decode_key(kv.key), kv.value, kv.mod_revision, prev)
    return WatchEvent("DELETED", decode_key(kv.key), prev, kv.mod_revision, prev)
