"""ResourceStore: one resource type's objects in storage, as Kubernetes' generic registry keeps them.

This is the layer between HTTP semantics (handlers/) and the key-value store (storage/):
- where an object lives: `/registry/<plural>/<namespace>/<name>` (cluster-scoped kinds drop the
  namespace), exactly the layout Kubernetes uses in etcd;
- what `resourceVersion` means: it is never stored inside the value. It is the storage revision of
  the object's last write and is stamped onto the object every time it is read, so it can never
  disagree with the store;
- optimistic concurrency: `guaranteed_update` reads, lets the caller compute the new object, and
  writes only if nobody wrote in between — retrying on a lost race unless the client pinned a
  resourceVersion, in which case the loser gets 409 Conflict. Its first read comes from the watch
  cache when it can (Kubernetes does the same): the write is a compare-and-swap on the revision
  read, so a stale cache costs one retry from storage, never a lost update;
- dry runs (`?dryRun=All`): every write takes `dry_run`, which does all the reading and checking of
  the real write (exists? which revision? preconditions?) against storage and then skips the
  write itself, so no revision moves and no watch event is sent.
Storage errors are translated into Kubernetes `Status` errors here, once.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from api import errors, wirejson
from api.registry import ResourceType
from apiserver import storage
from apiserver.codec import dumps
from apiserver.flowcontrol_yield import pause

Mutator = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None] | dict[str, Any] | None]
Filter = Callable[[dict[str, Any]], bool]
_MAX_BATCH = 10_000  # objects read from storage per round while filling one page

_CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a "
    "new list without the continue parameter."
)


@dataclass
class ListPage:
    items: list[dict[str, Any]]
    resource_version: int
    continue_token: str | None
    remaining: int | None


def storage_errors(rt: ResourceType, name: str = "") -> _StorageErrorMapper:
    return _StorageErrorMapper(rt, name)


class _StorageErrorMapper:
    """`with storage_errors(rt, name):` turns storage exceptions into Status errors."""

    def __init__(self, rt: ResourceType, name: str) -> None:
        self.rt, self.name = rt, name

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> None:
        if exc is None or not isinstance(exc, storage.StorageError):
            return
        raise as_status(self.rt, self.name, exc) from None


def as_status(rt: ResourceType, name: str, exc: storage.StorageError) -> errors.StatusError:
    """The Status error a storage exception means to the client (`storage_errors` raises it)."""
    if isinstance(exc, storage.NotFound):
        return errors.not_found(rt.key, name)
    if isinstance(exc, storage.KeyExists):
        return errors.already_exists(rt.key, name)
    if isinstance(exc, storage.Conflict):
        return errors.conflict(rt.key, name)
    if isinstance(exc, storage.Compacted):
        return errors.expired(f"too old resource version: {exc.requested} ({exc.compacted})")
    if isinstance(exc, storage.TooLarge):
        return errors.too_large(storage.MAX_VALUE_BYTES)
    if isinstance(exc, storage.OutcomeUnknown):
        # kube-apiserver's answer when a request ran out of time: 504 Timeout (maybe committed).
        return errors.timeout(f"request did not complete within requested timeout - {exc}")
    if isinstance(exc, storage.Unavailable):
        return errors.service_unavailable(f"storage is unavailable: {exc}")
    return errors.internal(str(exc))


def encode_continue(revision: int, last_key: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": last_key}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _same_object(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal apart from metadata.resourceVersion (which is never stored)."""
    if a.keys() != b.keys():
        return False
    for k, v in a.items():
        if k == "metadata" and isinstance(v, dict) and isinstance(b[k], dict):
            other = b[k]
            if {x for x in v if x != "resourceVersion"} != {x for x in other if x != "resourceVersion"}:
                return False
            if any(v[x] != other[x] for x in v if x != "resourceVersion"):
                return False
        elif v != b[k]:
            return False
    return True


def decode_continue(token: str) -> tuple[int, str]:
    try:
        d = json.loads(base64.urlsafe_b64decode(token.encode() + b"=" * (-len(token) % 4)))
        rv, start = int(d["rv"]), str(d["start"])
    except (ValueError, KeyError, TypeError):
        raise errors.bad_request("continue key is not valid: the token could not be decoded") from None
    if not 0 < rv < 2**63:
        raise errors.bad_request("continue key is not valid: bad resource version")
    return rv, start


CachedReader = Callable[[str], tuple[bytes, int] | None]  # key -> (stored bytes, revision) or None


class ResourceStore:
    def __init__(self, rt: ResourceType, store: storage.Storage, cached: CachedReader | None = None) -> None:
        self.rt = rt
        self.storage = store
        self.cached = cached
        self.root = f"/registry/{rt.plural}/"
        # The newest revision this server wrote through this store (create, update, delete): what
        # a reader of the watch cache waits for to see its own server's writes (APIServer.cache_has_own_writes).
        self.written = 0

    # -- keys ---------------------------------------------------------------------------------
    def key(self, namespace: str | None, name: str) -> str:
        if self.rt.namespaced:
            return f"{self.root}{namespace}/{name}"
        return f"{self.root}{name}"

    def prefix(self, namespace: str | None) -> str:
        if self.rt.namespaced and namespace:
            return f"{self.root}{namespace}/"
        return self.root

    # -- encoding -----------------------------------------------------------------------------
    @staticmethod
    def encode(obj: dict[str, Any]) -> bytes:
        md = obj.get("metadata") or {}
        if "resourceVersion" in md:
            obj = {**obj, "metadata": {k: v for k, v in md.items() if k != "resourceVersion"}}
        return dumps(obj)

    @staticmethod
    def decode(value: bytes, revision: int) -> dict[str, Any]:
        obj = wirejson.loads(value)
        obj.setdefault("metadata", {})["resourceVersion"] = str(revision)
        return obj

    # -- reads --------------------------------------------------------------------------------
    async def get_kv(self, namespace: str | None, name: str) -> storage.KeyValue:
        with storage_errors(self.rt, name):
            return await self.storage.get(self.key(namespace, name))

    async def get(self, namespace: str | None, name: str) -> dict[str, Any]:
        kv = await self.get_kv(namespace, name)
        return self.decode(kv.value, kv.revision)

    async def list(
        self,
        namespace: str | None,
        *,
        keep: Filter | None = None,
        limit: int = 0,
        continue_token: str | None = None,
        revision: int = 0,
    ) -> ListPage:
        """A consistent page of objects; with `limit`, pages are read at the first page's revision.

        `revision` (0 = now) reads the state as of that revision (`resourceVersionMatch=Exact`).
        """
        after: str | None = None
        if revision:
            current = await self.storage.current_revision()
            if revision > current:
                raise errors.too_large_resource_version(revision, current)
        if continue_token:
            revision, after = decode_continue(continue_token)
        items: list[dict[str, Any]] = []
        prefix = self.prefix(namespace)
        while True:
            want = (limit - len(items)) if limit else 0
            # With a filter a page may come back short; read a little extra to need fewer rounds.
            batch = min(max(want * 2, 64) if keep else want, _MAX_BATCH) if limit else 0
            try:
                with storage_errors(self.rt):
                    res = await self.storage.list(prefix, limit=batch, continue_key=after, revision=revision)
            except errors.StatusError as exc:
                if continue_token and exc.code == 410:
                    raise errors.expired(_CONTINUE_TOO_OLD) from None
                if continue_token and exc.code == 500:  # e.g. a forged token from the future
                    raise errors.bad_request(f"continue key is not valid: {exc.message}") from None
                raise
            revision = res.revision
            for i, kv in enumerate(res.items):
                await pause(i)  # decoding thousands of objects must not hold the event loop
                obj = self.decode(kv.value, kv.revision)
                after = kv.key
                if keep is None or keep(obj):
                    items.append(obj)
                    if limit and len(items) == limit:
                        more = res.continue_key is not None or kv.key != res.items[-1].key
                        token = encode_continue(revision, kv.key) if more else None
                        remaining = (
                            (res.remaining + (len(res.items) - res.items.index(kv) - 1))
                            if (more and keep is None)
                            else None
                        )
                        return ListPage(items, revision, token, remaining)
            if res.continue_key is None or not limit:
                return ListPage(items, revision, None, None)
            after = res.continue_key

    # -- writes -------------------------------------------------------------------------------
    async def create(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        md = obj["metadata"]
        if dry_run:  # the answer a create would give, without a resourceVersion: nothing was stored
            try:
                await self.get_kv(md.get("namespace"), md["name"])
            except errors.StatusError as exc:
                if exc.code == 404:
                    md.pop("resourceVersion", None)
                    return obj
                raise
            raise errors.already_exists(self.rt.key, md["name"])
        with storage_errors(self.rt, md["name"]):
            rev = await self.storage.create(self.key(md.get("namespace"), md["name"]), self.encode(obj))
        self.written = max(self.written, rev)
        obj["metadata"]["resourceVersion"] = str(rev)  # the caller hands over the object it built
        return obj

    async def guaranteed_update(
        self,
        namespace: str | None,
        name: str,
        mutate: Mutator,
        *,
        precondition_rv: str | None = None,
        attempts: int = 16,
        dry_run: bool = False,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Read-modify-write until it sticks. Returns (old, new); `mutate` returning None = no change.

        `precondition_rv` is the resourceVersion the client based its change on: if the stored
        object is at another revision the client loses with 409, as Kubernetes does. A dry run
        reads storage (never the cache), computes `new` and returns it at the revision it read.
        """
        use_cache = self.cached is not None and not dry_run
        for _ in range(attempts):
            value, revision, from_cache = await self._current(namespace, name, precondition_rv, use_cache)
            use_cache = False  # any retry reads storage
            if precondition_rv and precondition_rv != str(revision):
                raise errors.conflict(self.rt.key, name)
            old = self.decode(value, revision)
            try:
                result = mutate(self.decode(value, revision))  # a private copy to change
                new = await result if isinstance(result, Awaitable) else result
            except errors.StatusError as exc:
                if exc.reason == "Conflict" and from_cache:
                    continue  # judged against a cached copy that may be stale: ask storage
                raise
            if new is None or _same_object(new, old):
                if from_cache:
                    continue  # "no change" must be true of the stored object, not of a cached copy
                return old, old
            if dry_run:
                new.setdefault("metadata", {})["resourceVersion"] = str(revision)
                return old, new
            try:
                with storage_errors(self.rt, name):
                    rev = await self.storage.update(self.key(namespace, name), self.encode(new), revision)
            except errors.StatusError as exc:
                if exc.reason == "Conflict" and not precondition_rv:
                    continue  # somebody wrote in between: re-read and re-apply the change
                raise
            self.written = max(self.written, rev)
            new.setdefault("metadata", {})["resourceVersion"] = str(rev)
            return old, new
        raise errors.conflict(self.rt.key, name, "too many concurrent writers; please retry")

    async def _current(
        self, namespace: str | None, name: str, precondition_rv: str | None, use_cache: bool
    ) -> tuple[bytes, int, bool]:
        """(stored bytes, revision, whether they came from the watch cache). The cache is used only
        when it agrees with a pinned resourceVersion; a client may have seen a newer one."""
        if use_cache and self.cached is not None:
            hit = self.cached(self.key(namespace, name))
            if hit is not None and (not precondition_rv or precondition_rv == str(hit[1])):
                return hit[0], hit[1], True
        kv = await self.get_kv(namespace, name)
        return kv.value, kv.revision, False

    async def delete(
        self, namespace: str | None, name: str, expected_rv: int | None = None, *, dry_run: bool = False
    ) -> int:
        if dry_run:  # the checks of a real delete (exists, at the expected revision), no write
            kv = await self.get_kv(namespace, name)
            if expected_rv is not None and kv.revision != expected_rv:
                raise errors.conflict(self.rt.key, name)
            return kv.revision
        with storage_errors(self.rt, name):
            rev = await self.storage.delete(self.key(namespace, name), expected_rv)
        self.written = max(self.written, rev)
        return rev
