"""The etcd v3 backend: the same store Kubernetes itself runs on.

Every operation maps onto one etcd request, exactly as the real kube-apiserver does it:

- create  = Txn  if create_revision(key) == 0  then Put           (absent → write)
- update  = Txn  if mod_revision(key) == rv    then Put  else Get (CAS; the Get tells NotFound
                                                                     from Conflict in one trip)
- delete  = Txn  if mod_revision(key) == rv    then Delete else Get (or a plain DeleteRange)
- get / list = Range, with `limit` and `revision` for consistent paging: every page is read at
  the revision of the first one, and the next page starts right after the last key returned
  (key + "\\0", the smallest key greater than it);
- watch   = a Watch stream with prev_kv, see `_etcd_watch.py`.

We talk to etcd through aetcd's generated gRPC stubs (`aetcd.rpc`) rather than its high-level
client: its `get_prefix` can neither page nor read at a revision, and its watcher can hang on a
dead server. Each unary call carries a deadline (`timeout`), so while etcd is down every operation
fails fast with Unavailable; gRPC reconnects the channel by itself (`_etcd_channel.py` caps its
backoff at one second) and operations work again as soon as etcd is back. With several members
(`--etcd-servers a,b,c`) a failing member is left for the next one (`_etcd_members.py`): reads
retry there at once, writes when they provably were not sent; a write whose answer was lost is
OutcomeUnknown (504), never reported as failed. Every call carries etcd's "require leader"
metadata, so a member cut off from its cluster answers "no leader" at once instead of hanging.

The compacted revision: etcd does not publish it. We find it by asking: a read at revision r
fails with "compacted" exactly when r < compacted, so a binary search between the last
compaction we know of and the current revision finds it in a few cheap, count-only reads. It
also notices compactions done by someone else (etcd's own auto-compaction, another API server).

Revisions are etcd's own: a brand-new etcd is already at revision 1 (not 0), so the first write
gets revision 2 — as in a real cluster, where the first object's resourceVersion is 2.

`prefix` namespaces every key (e.g. one etcd shared by several clusters or tests): it is
prepended on the way in and stripped on the way out, so callers never see it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc
from aetcd.rpc import MaintenanceStub, kv_pb2, rpc_pb2

from apiserver.storage import _etcd_errors as errors
from apiserver.storage._etcd_members import Member, Members
from apiserver.storage._etcd_watch import REQUIRE_LEADER, watch_stream
from apiserver.storage.interface import (
    MAX_VALUE_BYTES,
    Compacted,
    Conflict,
    KeyExists,
    KeyValue,
    ListResult,
    NotFound,
    ProgressRequests,
    Storage,
    StorageError,
    TooLarge,
    Unavailable,
    WatchEvent,
)

log = logging.getLogger("apiserver.storage")
_Compare = rpc_pb2.Compare
_ROUND_PAUSE = 0.1  # seconds to wait after every member failed a request once, before the next round


def _range_end(prefix: bytes) -> bytes:
    """The first key after every key that starts with `prefix` (etcd's "prefix" range end)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return b"\x00"  # the empty prefix, or all 0xff: "every key from here on"
    return stripped[:-1] + bytes([stripped[-1] + 1])


class EtcdStorage(Storage):
    """`Storage` on an etcd v3 cluster. Create it with `await EtcdStorage.connect(urls)`."""

    def __init__(
        self,
        members: Members,
        *,
        timeout: float = 5.0,
        prefix: str = "",
        watch_keepalive: float = 2.0,
    ) -> None:
        self.timeout = timeout
        self.watch_keepalive = watch_keepalive
        self._members = members
        self._prefix = prefix
        self._prefix_bytes = prefix.encode()
        self._compacted_floor = 0  # a revision we know is compacted (readable) — a search hint

    @property
    def endpoint(self) -> str:
        """The member in use now."""
        return self._members.current.endpoint

    @classmethod
    async def connect(
        cls,
        endpoints: list[str] | str,
        *,
        timeout: float = 5.0,
        prefix: str = "",
        watch_keepalive: float = 2.0,
    ) -> EtcdStorage:
        """Connect to a cluster (URLs as a list or comma-separated) through its first reachable member."""
        if isinstance(endpoints, str):
            endpoints = endpoints.split(",")
        endpoints = [e.strip() for e in endpoints if e.strip()]
        members = Members(endpoints)
        storage = cls(members, timeout=timeout, prefix=prefix, watch_keepalive=watch_keepalive)
        failures: list[str] = []
        try:
            for member in list(members.members):
                members.use(member)
                try:
                    await storage._ping_one(member)
                except Unavailable as exc:
                    failures.append(f"{member.endpoint}: {exc}")
                    continue
                storage.supports_progress = await storage._progress_is_reliable(member)
                return storage
        except BaseException:
            await members.close()
            raise
        await members.close()
        raise Unavailable("no etcd endpoint reachable: " + "; ".join(failures))

    async def _progress_is_reliable(self, member: Member) -> bool:
        """Are this etcd's progress notifications ordered after the events they vouch for?
        Fixed in 3.4.31, 3.5.13 and 3.6 (the versions Kubernetes requires before it serves
        consistent LISTs from its watch cache)."""
        try:
            status = await MaintenanceStub(member.channel).Status(rpc_pb2.StatusRequest(), timeout=self.timeout)
        except grpc.aio.AioRpcError as err:
            log.warning("etcd at %s did not say its version (%s): consistent LISTs read etcd", member.endpoint,
                        err.details())  # fmt: skip
            return False
        return progress_is_reliable(status.version)

    async def _unary(self, rpc: str, request: Any, what: str, *, write: bool = False) -> Any:
        """One KV call on the member in use, moving to the next member when this one fails.

        Reads are retried on the next member at once (within the same deadline); writes only
        when the error proves they were never proposed (`_etcd_errors.not_sent`). The last
        gRPC error is raised for the caller to translate.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        member = self._members.current
        attempts = 0
        while True:
            remaining = deadline - loop.time()
            try:
                with errors.channel_closed_is_unavailable(what):
                    return await getattr(member.kv, rpc)(
                        request, timeout=max(remaining, 0.01), metadata=REQUIRE_LEADER
                    )
            except grpc.aio.AioRpcError as err:
                if not errors.member_trouble(err):
                    raise
                member = self._members.failed(member)
                attempts += 1
                retry = not write or errors.not_sent(err)
                if not retry or err.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise
                if attempts % len(self._members) == 0:
                    # Every member failed once: give the cluster a moment (an election, a restart).
                    await asyncio.sleep(min(_ROUND_PAUSE, max(deadline - loop.time(), 0)))
                if loop.time() >= deadline:
                    raise

    # --- keys -------------------------------------------------------------------------------

    def _key(self, key: str) -> bytes:
        return self._prefix_bytes + key.encode()

    def _decode_key(self, raw: bytes) -> str:
        return raw[len(self._prefix_bytes):].decode()

    def _kv_of(self, kv: kv_pb2.KeyValue) -> KeyValue:
        return KeyValue(self._decode_key(kv.key), kv.value, kv.mod_revision, kv.create_revision)

    # --- reads ------------------------------------------------------------------------------

    async def _range(self, request: rpc_pb2.RangeRequest, what: str) -> rpc_pb2.RangeResponse:
        try:
            return await self._unary("Range", request, what)  # type: ignore[no-any-return]
        except grpc.aio.AioRpcError as err:
            if errors.is_compacted(err):
                raise Compacted(request.revision, await self.compacted_revision()) from err
            if errors.is_future_revision(err):
                raise StorageError(f"{what}: revision {request.revision} is newer than the store") from err
            raise errors.translate(err, what) from err

    async def get(self, key: str) -> KeyValue:
        resp = await self._range(rpc_pb2.RangeRequest(key=self._key(key)), f"get {key!r}")
        if not resp.kvs:
            raise NotFound(key)
        return self._kv_of(resp.kvs[0])

    async def list(
        self,
        prefix: str,
        *,
        limit: int = 0,
        continue_key: str | None = None,
        revision: int = 0,
    ) -> ListResult:
        start = self._key(prefix)
        end = _range_end(start)
        if continue_key is not None:
            # "\0" appended gives the smallest key strictly greater than continue_key.
            start = max(start, self._key(continue_key) + b"\x00")
        request = rpc_pb2.RangeRequest(key=start, range_end=end, limit=max(limit, 0), revision=revision)
        resp = await self._range(request, f"list {prefix!r}")
        items = [self._kv_of(kv) for kv in resp.kvs]
        more = bool(resp.more) and bool(items)
        return ListResult(
            items=items,
            # Reading "now" happened at the header's revision; an explicit revision is echoed back.
            revision=revision if revision > 0 else resp.header.revision,
            continue_key=items[-1].key if more else None,
            remaining=max(resp.count - len(items), 0) if more else 0,
        )

    # --- writes -----------------------------------------------------------------------------

    @staticmethod
    def _check_size(key: str, value: bytes) -> None:
        if len(value) > MAX_VALUE_BYTES:
            raise TooLarge(f"value for {key!r} is {len(value)} bytes; the limit is {MAX_VALUE_BYTES}")

    async def _txn(self, request: rpc_pb2.TxnRequest, what: str) -> rpc_pb2.TxnResponse:
        try:
            return await self._unary("Txn", request, what, write=True)  # type: ignore[no-any-return]
        except grpc.aio.AioRpcError as err:
            raise errors.translate(err, what, write=True) from err

    def _cas_failure(self, key: str, resp: rpc_pb2.TxnResponse, expected: int) -> StorageError:
        """The compare failed; the failure branch read the key: gone → NotFound, else Conflict."""
        found = resp.responses[0].response_range.kvs
        if not found:
            return NotFound(key)
        return Conflict(f"{key!r} is at revision {found[0].mod_revision}, expected {expected}")

    async def create(self, key: str, value: bytes) -> int:
        self._check_size(key, value)
        raw = self._key(key)
        resp = await self._txn(
            rpc_pb2.TxnRequest(
                compare=[_Compare(key=raw, target=_Compare.CREATE, result=_Compare.EQUAL, create_revision=0)],
                success=[rpc_pb2.RequestOp(request_put=rpc_pb2.PutRequest(key=raw, value=value))],
            ),
            f"create {key!r}",
        )
        if not resp.succeeded:
            raise KeyExists(key)
        return int(resp.header.revision)

    def _exists_at(self, raw: bytes, expected: int) -> list[rpc_pb2.Compare]:
        # mod_revision == 0 also matches an absent key, so "exists" is checked separately
        # (version > 0) for callers that pass expected_revision 0.
        return [
            _Compare(key=raw, target=_Compare.MOD, result=_Compare.EQUAL, mod_revision=expected),
            _Compare(key=raw, target=_Compare.VERSION, result=_Compare.GREATER, version=0),
        ]

    async def update(self, key: str, value: bytes, expected_revision: int) -> int:
        self._check_size(key, value)
        raw = self._key(key)
        resp = await self._txn(
            rpc_pb2.TxnRequest(
                compare=self._exists_at(raw, expected_revision),
                success=[rpc_pb2.RequestOp(request_put=rpc_pb2.PutRequest(key=raw, value=value))],
                failure=[rpc_pb2.RequestOp(request_range=rpc_pb2.RangeRequest(key=raw, keys_only=True))],
            ),
            f"update {key!r}",
        )
        if not resp.succeeded:
            raise self._cas_failure(key, resp, expected_revision)
        return int(resp.header.revision)

    async def delete(self, key: str, expected_revision: int | None = None) -> int:
        raw = self._key(key)
        what = f"delete {key!r}"
        if expected_revision is None:
            try:
                request = rpc_pb2.DeleteRangeRequest(key=raw)
                resp = await self._unary("DeleteRange", request, what, write=True)
            except grpc.aio.AioRpcError as err:
                raise errors.translate(err, what, write=True) from err
            if resp.deleted == 0:
                raise NotFound(key)
            return int(resp.header.revision)
        txn = await self._txn(
            rpc_pb2.TxnRequest(
                compare=self._exists_at(raw, expected_revision),
                success=[rpc_pb2.RequestOp(request_delete_range=rpc_pb2.DeleteRangeRequest(key=raw))],
                failure=[rpc_pb2.RequestOp(request_range=rpc_pb2.RangeRequest(key=raw, keys_only=True))],
            ),
            what,
        )
        if not txn.succeeded:
            raise self._cas_failure(key, txn, expected_revision)
        return int(txn.header.revision)

    # --- watch ------------------------------------------------------------------------------

    async def watch(
        self, prefix: str, start_revision: int, progress: ProgressRequests | None = None
    ) -> AsyncIterator[WatchEvent]:
        """Watch through the member in use; when the stream fails, the next watch uses another one.

        The caller (the watch cache) re-watches from its last revision + 1, so moving to another
        member loses nothing: every member has the same history.
        """
        start = self._key(prefix)
        member = self._members.current
        try:
            async for event in watch_stream(
                member.watch,
                key=start,
                range_end=_range_end(start),
                start_revision=start_revision,
                decode_key=self._decode_key,
                timeout=self.timeout,
                keepalive=self.watch_keepalive,
                # an etcd whose progress may run ahead of its events gives none: a watch cache
                # that believed one would skip the events still to come as "already seen"
                progress=progress if self.supports_progress else None,
            ):
                yield event
        except Unavailable:
            self._members.failed(member)
            raise

    # --- revisions and compaction -------------------------------------------------------------

    async def current_revision(self) -> int:
        # A count-only read of one (probably absent) key: the answer's header carries the revision.
        resp = await self._range(
            rpc_pb2.RangeRequest(key=self._prefix_bytes or b"/", count_only=True), "current revision"
        )
        return int(resp.header.revision)

    async def _readable(self, revision: int) -> bool:
        request = rpc_pb2.RangeRequest(key=b"/", count_only=True, revision=revision)
        try:
            await self._unary("Range", request, "compaction probe")
        except grpc.aio.AioRpcError as err:
            if errors.is_compacted(err):
                return False
            raise errors.translate(err, "compaction probe") from err
        return True

    async def compacted_revision(self) -> int:
        """etcd's compacted revision (0 if never compacted), found by binary search (see above)."""
        current = await self.current_revision()
        low = max(self._compacted_floor, 1)  # the answer is >= low (or 0 when low is readable)
        if current == 0 or await self._readable(low):
            return self._compacted_floor
        high = current  # the current revision is always readable
        while high - low > 1:  # invariant: low is compacted, high is readable
            mid = (low + high) // 2
            if await self._readable(mid):
                high = mid
            else:
                low = mid
        self._compacted_floor = high
        return high

    async def compact(self, revision: int) -> None:
        if revision <= self._compacted_floor:
            return
        try:
            # Compaction is idempotent ("already compacted" is handled below): safe to retry.
            await self._unary("Compact", rpc_pb2.CompactionRequest(revision=revision), f"compact {revision}")
        except grpc.aio.AioRpcError as err:
            if errors.is_compacted(err):
                return  # someone already compacted past this point: nothing left to forget
            if errors.is_future_revision(err):
                raise StorageError(f"cannot compact at {revision}: newer than the store") from err
            raise errors.translate(err, f"compact {revision}") from err
        self._compacted_floor = revision

    # --- lifecycle ----------------------------------------------------------------------------

    async def ping(self) -> None:
        await self.current_revision()

    async def _ping_one(self, member: Member) -> None:
        """A count-only read on `member` alone, no failover (used to pick the first member)."""
        request = rpc_pb2.RangeRequest(key=self._prefix_bytes or b"/", count_only=True)
        try:
            with errors.channel_closed_is_unavailable("ping"):
                await member.kv.Range(request, timeout=self.timeout, metadata=REQUIRE_LEADER)
        except grpc.aio.AioRpcError as err:
            raise errors.translate(err, f"ping {member.endpoint}") from err

    async def close(self) -> None:
        await self._members.close()


def progress_is_reliable(version: str) -> bool:
    """True from etcd 3.4.31, 3.5.13 and 3.6.0 on ("3.4.23" → False)."""
    try:
        major, minor, patch = (int(p) for p in version.split("-")[0].split(".")[:3])
    except ValueError:
        return False
    minimum = {(3, 4): 31, (3, 5): 13}.get((major, minor))
    if minimum is not None:
        return patch >= minimum
    return (major, minor) >= (3, 6)
