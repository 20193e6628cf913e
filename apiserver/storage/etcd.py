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
backoff at one second) and operations work again as soon as etcd is back.

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

from collections.abc import AsyncIterator

import grpc
from aetcd.rpc import KVStub, WatchStub, kv_pb2, rpc_pb2

from apiserver.storage import _etcd_errors as errors
from apiserver.storage._etcd_channel import open_channel
from apiserver.storage._etcd_watch import watch_stream
from apiserver.storage.interface import (
    MAX_VALUE_BYTES,
    Compacted,
    Conflict,
    KeyExists,
    KeyValue,
    ListResult,
    NotFound,
    Storage,
    StorageError,
    TooLarge,
    Unavailable,
    WatchEvent,
)

_Compare = rpc_pb2.Compare


def _range_end(prefix: bytes) -> bytes:
    """The first key after every key that starts with `prefix` (etcd's "prefix" range end)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return b"\x00"  # the empty prefix, or all 0xff: "every key from here on"
    return stripped[:-1] + bytes([stripped[-1] + 1])


class EtcdStorage(Storage):
    """`Storage` on an etcd v3 server. Create it with `await EtcdStorage.connect(url)`."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        endpoint: str,
        *,
        timeout: float = 5.0,
        prefix: str = "",
        watch_keepalive: float = 2.0,
    ) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self.watch_keepalive = watch_keepalive
        self._channel = channel
        self._kv = KVStub(channel)
        self._watch = WatchStub(channel)
        self._prefix = prefix
        self._prefix_bytes = prefix.encode()
        self._compacted_floor = 0  # a revision we know is compacted (readable) — a search hint

    @classmethod
    async def connect(
        cls,
        endpoints: list[str] | str,
        *,
        timeout: float = 5.0,
        prefix: str = "",
        watch_keepalive: float = 2.0,
    ) -> EtcdStorage:
        """Connect to the first reachable endpoint (a URL, a list, or a comma-separated string)."""
        if isinstance(endpoints, str):
            endpoints = endpoints.split(",")
        endpoints = [e.strip() for e in endpoints if e.strip()]
        if not endpoints:
            raise ValueError("no etcd endpoint given")
        failures: list[str] = []
        for endpoint in endpoints:
            channel = open_channel(endpoint)
            storage = cls(channel, endpoint, timeout=timeout, prefix=prefix, watch_keepalive=watch_keepalive)
            try:
                await storage.ping()
            except Unavailable as exc:
                failures.append(f"{endpoint}: {exc}")
                await channel.close()
                continue
            except BaseException:
                await channel.close()
                raise
            return storage
        raise Unavailable("no etcd endpoint reachable: " + "; ".join(failures))

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
            with errors.channel_closed_is_unavailable(what):
                return await self._kv.Range(request, timeout=self.timeout)
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
            with errors.channel_closed_is_unavailable(what):
                return await self._kv.Txn(request, timeout=self.timeout)
        except grpc.aio.AioRpcError as err:
            raise errors.translate(err, what) from err

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
                with errors.channel_closed_is_unavailable(what):
                    request = rpc_pb2.DeleteRangeRequest(key=raw)
                    resp = await self._kv.DeleteRange(request, timeout=self.timeout)
            except grpc.aio.AioRpcError as err:
                raise errors.translate(err, what) from err
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

    async def watch(self, prefix: str, start_revision: int) -> AsyncIterator[WatchEvent]:
        start = self._key(prefix)
        async for event in watch_stream(
            self._watch,
            key=start,
            range_end=_range_end(start),
            start_revision=start_revision,
            decode_key=self._decode_key,
            timeout=self.timeout,
            keepalive=self.watch_keepalive,
        ):
            yield event

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
            with errors.channel_closed_is_unavailable("compaction probe"):
                await self._kv.Range(request, timeout=self.timeout)
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
            with errors.channel_closed_is_unavailable(f"compact {revision}"):
                await self._kv.Compact(rpc_pb2.CompactionRequest(revision=revision), timeout=self.timeout)
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

    async def close(self) -> None:
        await self._channel.close()
