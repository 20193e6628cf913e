"""The watch cache: one storage watch per resource, fanned out to every client watch.

Why: a watch is a long-lived HTTP stream. If each `kubectl get -w`, each informer and each kubelet
opened its own storage watch, a hundred watchers would cost a hundred etcd streams and a hundred
decodes of every event. Kubernetes' answer (the "cacher") is to watch storage once per resource,
keep the current objects and a bounded ring of recent events in memory, and serve every client
from there. We do the same:

    storage.watch("/registry/pods/") ──▶ WatchCache ──▶ ring of the last N events
                                            │ current objects (for "watch from now")
                                            ├──▶ subscriber (kubectl get -w)
                                            ├──▶ subscriber (scheduler's informer)
                                            └──▶ subscriber (…)

A client watch names where to start with `resourceVersion`:
- unset: synthetic ADDED events for every current object, then live changes;
- N: every change after N — replayed from the ring if N is still in it, else 410 Gone
  ("too old resource version"), and the client re-lists (that is the informer's contract).
Each event is decoded and serialised once, however many watchers receive it. A watcher that cannot
keep up is cut off rather than allowed to grow memory without bound; it resumes from its last
resourceVersion like any other client.

It serves LISTs too (handlers/read.py): `resourceVersion=0` at once, and a consistent one (no
resourceVersion) after `wait_fresh` has seen the cache reach the store's current revision — the
storage watch answers progress requests, as etcd does. Each object's JSON is encoded once and
shared by those LISTs and by the ADDED events new watches start with.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from api import errors
from api.registry import ResourceType
from apiserver import storage
from apiserver.codec import dumps
from apiserver.genericstore import ResourceStore

log = logging.getLogger("apiserver.watchcache")

Predicate = Callable[[dict[str, Any]], bool]
SUBSCRIBER_QUEUE = 10_000
EXPECTED_MAX = 4096  # writes announced with `expect` whose events have not come yet (more: forget them)
BUSY_SECONDS = 1.0  # wait_fresh without progress: a prefix changed this recently is worth waiting for
FELL_BEHIND = "watcher fell too far behind"


@dataclass(slots=True)
class CacheEvent:
    type: str  # ADDED | MODIFIED | DELETED
    object: dict[str, Any]
    revision: int
    prev: dict[str, Any] | None = None
    _json: bytes | None = None

    def object_json(self) -> bytes:
        if self._json is None:
            self._json = dumps(self.object)
        return self._json


class WatchClosed(Exception):
    """A subscriber's stream ended: cache reset, overflow or server shutdown."""


@dataclass(eq=False)
class Subscriber:
    namespace: str | None
    predicate: Predicate | None
    limit: int = SUBSCRIBER_QUEUE  # events this watcher may fall behind (--watch-buffer-events)
    queue: asyncio.Queue[CacheEvent | None] = field(default_factory=asyncio.Queue)
    closed_reason: str | None = None
    backlog: int = 0  # the synthetic ADDED events a watch starts with: they do not count
    on_overflow: Callable[[], None] | None = None  # what to do when the watcher is dropped

    def offer(self, ev: CacheEvent, *, initial: bool = False) -> None:
        """Route one event to this watcher, translating selector transitions as Kubernetes does."""
        if self.closed_reason:
            return
        out = self._translate(ev)
        if out is None:
            return
        if initial:
            self.backlog += 1
        elif self.queue.qsize() >= self.limit + self.backlog:
            # It does not read what it is sent: drop it, as kube-apiserver's cacher does, rather
            # than keep every event for it. It re-watches from its last resourceVersion.
            self.close(FELL_BEHIND)
            if self.on_overflow is not None:
                self.on_overflow()
            return
        self.queue.put_nowait(out)

    def _translate(self, ev: CacheEvent) -> CacheEvent | None:
        obj = ev.object
        if self.namespace is not None and (obj.get("metadata") or {}).get("namespace") != self.namespace:
            return None
        if self.predicate is None:
            return ev
        now = self.predicate(obj) if ev.type != "DELETED" else False
        before = ev.prev is not None and self.predicate(ev.prev)
        if ev.type == "DELETED":
            return ev if before else None
        if now and before:
            return ev
        if now:  # started matching: to this watcher the object just appeared
            return CacheEvent("ADDED", obj, ev.revision, ev.prev, ev._json)
        if before:  # stopped matching: to this watcher the object is gone
            return CacheEvent("DELETED", obj, ev.revision, ev.prev, ev._json)
        return None

    @property
    def dropped(self) -> bool:
        """Closed for not reading: what is still queued for it will never be delivered."""
        return self.closed_reason == FELL_BEHIND

    def close(self, reason: str) -> None:
        if not self.closed_reason:
            self.closed_reason = reason
            self.queue.put_nowait(None)


class WatchCache:
    def __init__(self, rt: ResourceType, store: storage.Storage, prefix: str, capacity: int) -> None:
        self.rt = rt
        self.storage = store
        self.prefix = prefix
        self.ring: deque[CacheEvent] = deque(maxlen=max(capacity, 1))
        self.objects: dict[str, dict[str, Any]] = {}  # storage key → current object
        self.raw: dict[str, tuple[bytes, int]] = {}  # storage key → (stored bytes, revision)
        # storage key → the synthetic ADDED event a new watch starts with, shared by every watcher
        # so each object is serialised once however many watches start (200 `get -w` at once)
        self.added: dict[str, CacheEvent] = {}
        self.expected: dict[str, tuple[bytes, dict[str, Any]]] = {}  # see `expect`
        self.revision = 0  # newest revision this cache reflects (changes, or progress from storage)
        self.generation = 0  # moves with every change of content (not with progress)
        self.last_change_at = 0.0  # loop time of the last change applied
        self.oldest = 0  # every change after this revision is in the ring
        self._progress = storage.ProgressRequests()
        self._caught_up: asyncio.Event | None = None  # made by a waiter; set and dropped when `revision` moves
        self.subscribers: set[Subscriber] = set()
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- life cycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"watchcache:{self.rt.key}")
        await self._ready.wait()

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        for s in list(self.subscribers):
            s.close("server shutting down")

    async def _load(self) -> None:
        """Fill the cache from a consistent list, and start the ring empty at that revision."""
        objects: dict[str, dict[str, Any]] = {}
        self.expected.clear()
        res = await self.storage.list(self.prefix)
        for kv in res.items:
            obj = ResourceStore.decode(kv.value, kv.revision)
            objects[kv.key] = obj
        self.objects = objects
        self.added = {}
        self.raw = {kv.key: (kv.value, kv.revision) for kv in res.items}
        self.revision = self.oldest = res.revision
        self.generation += 1
        self.ring.clear()
        self._moved()

    async def _run(self) -> None:
        backoff = 0.05
        while True:
            try:
                if not self._ready.is_set():
                    await self._load()
                    self._ready.set()
                async for ev in self.storage.watch(self.prefix, self.revision + 1, self._progress):
                    if ev.type == "PROGRESS":
                        if ev.revision > self.revision:
                            self.revision = ev.revision
                            self._moved()
                    else:
                        self._apply(ev)
                    backoff = 0.05
            except asyncio.CancelledError:
                raise
            except storage.Compacted:
                # History we had not seen is gone: start over from a fresh list. Watchers cannot be
                # resumed across the gap, so they are closed and will come back with 410.
                log.warning("watch cache for %s fell behind compaction; re-listing", self.rt.key)
                self._reset("the watch cache was re-initialised")
                continue
            except storage.StorageError as exc:
                log.warning("storage watch for %s ended (%s); retrying", self.rt.key, exc)
            except Exception:  # a bug must not silently stop every watch of this resource
                log.exception("watch cache for %s failed; retrying", self.rt.key)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    def _reset(self, reason: str) -> None:
        self._ready.clear()
        for s in list(self.subscribers):
            s.close(reason)
        self.subscribers.clear()

    def expect(self, key: str, value: bytes, obj: dict[str, Any]) -> None:
        """Announce a write this server is making: `value` (these very bytes) is `obj` encoded.

        When the write's event comes back from the store with the same bytes object (the embedded
        store hands it through untouched), the cache takes `obj`, with its resourceVersion set,
        instead of decoding the bytes again: no parse, and the new object shares what it has in
        common with the old one rather than allocating it all anew. For ResourceQuota admission,
        which writes a quota's status for every batch of creates, that took a quota write from ~78
        to ~48 µs of the event loop's CPU (in process, 10 quotas written at a time). `obj` must be
        exactly what decoding `value` gives (JSON types, apart from metadata.resourceVersion,
        which is replaced) and must never be changed afterwards, as nothing the cache holds is. A
        write that fails, or an event with other bytes (etcd, another server), leaves the cache
        decoding as always."""
        if len(self.expected) >= EXPECTED_MAX:
            self.expected.clear()
        self.expected[key] = (value, obj)

    def _apply(self, ev: storage.WatchEvent) -> None:
        if ev.revision <= self.revision:
            return  # already seen (a re-watch may overlap)
        prev = self.objects.get(ev.key)
        self.added.pop(ev.key, None)
        if ev.type == "DELETED":
            self.expected.pop(ev.key, None)
            self.objects.pop(ev.key, None)
            self.raw.pop(ev.key, None)
            obj = ResourceStore.decode(ev.value or ev.prev_value or b"{}", ev.revision)
        else:
            known = self.expected.pop(ev.key, None) if self.expected else None
            if known is not None and known[0] is ev.value:
                obj = _with_revision(known[1], ev.revision)
            else:
                obj = ResourceStore.decode(ev.value or b"{}", ev.revision)
            self.objects[ev.key] = obj
            self.raw[ev.key] = (ev.value or b"{}", ev.revision)
        ce = CacheEvent("ADDED" if prev is None and ev.type != "DELETED" else ev.type, obj, ev.revision, prev)
        if len(self.ring) == self.ring.maxlen:
            self.oldest = self.ring[0].revision
        self.ring.append(ce)
        self.revision = ev.revision
        self.generation += 1
        self.last_change_at = asyncio.get_running_loop().time()
        self._moved()
        for s in list(self.subscribers):
            s.offer(ce)

    # -- serving ------------------------------------------------------------------------------
    async def subscribe(
        self, namespace: str | None, predicate: Predicate | None, after: int | None, limit: int = SUBSCRIBER_QUEUE
    ) -> Subscriber:
        """Register a watcher. `after` None = synthetic ADDED for current objects, then live.
        `limit`: how many live events it may have unread before it is dropped."""
        await self.start()
        sub = Subscriber(namespace, predicate, max(1, limit))
        if after is None:
            backlog = [self._added(key, o) for key, o in self.objects.items()]
        elif after < self.oldest:
            raise errors.expired(f"too old resource version: {after} ({self.oldest})")
        else:
            backlog = [e for e in self.ring if e.revision > after]
        # No await between taking the backlog and registering: no event can slip in between.
        for e in backlog:
            sub.offer(e, initial=True)
        self.subscribers.add(sub)
        return sub

    def _added(self, key: str, obj: dict[str, Any]) -> CacheEvent:
        ev = self.added.get(key)
        if ev is None:
            ev = self.added[key] = CacheEvent("ADDED", obj, int(obj["metadata"]["resourceVersion"]))
        return ev

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    def _moved(self) -> None:
        if self._caught_up is not None:  # only while someone waits: this runs for every change
            self._caught_up.set()
            self._caught_up = None

    async def wait_fresh(self, revision: int, timeout: float, *, progress: bool = True) -> bool:
        """Wait until this cache reflects every change up to `revision` (asking storage for
        progress, as Kubernetes' cacher asks etcd); False if it has not within `timeout`.

        Without progress from the store (etcd before 3.4.31), only a change at or past `revision`
        proves the cache has caught up (a watch delivers changes in revision order). That is
        worth waiting for only where changes keep coming: a prefix that saw none in the last
        BUSY_SECONDS answers False at once, and the caller reads storage."""
        await self.start()
        loop = asyncio.get_running_loop()
        if not progress and self.revision < revision and loop.time() - self.last_change_at > BUSY_SECONDS:
            return False
        deadline = loop.time() + timeout
        while self.revision < revision:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return False
            if self._caught_up is None:
                self._caught_up = asyncio.Event()
            moved = self._caught_up
            self._progress.request()
            try:
                await asyncio.wait_for(moved.wait(), left)
            except TimeoutError:
                return self.revision >= revision
        return True

    async def entries(self) -> tuple[list[tuple[str, dict[str, Any]]], int]:
        """(storage key, object) of every current object, and the revision they reflect."""
        await self.start()
        return list(self.objects.items()), self.revision

    def object_json(self, key: str, obj: dict[str, Any]) -> bytes:
        """`obj` (a current object of `key`, from entries()) as JSON, serialised once and shared
        with the watches that start with it — so a LIST from the cache of 2,000 unchanged pods
        joins 2,000 byte strings instead of encoding 2,000 objects."""
        if self.objects.get(key) is not obj:  # changed since the caller took it: not cached
            return dumps(obj)
        return self._added(key, obj).object_json()

    async def snapshot(self) -> tuple[list[dict[str, Any]], int]:
        """Current objects and the revision they reflect (serves `resourceVersion=0` lists)."""
        await self.start()
        return list(self.objects.values()), self.revision

    def peek(self, key: str) -> dict[str, Any] | None:
        return self.objects.get(key)

    def peek_raw(self, key: str) -> tuple[bytes, int] | None:
        """The stored bytes of `key` and their revision, as of this cache (may lag storage)."""
        return self.raw.get(key)


def _with_revision(obj: dict[str, Any], revision: int) -> dict[str, Any]:
    """`obj` as `ResourceStore.decode` would give it stored at `revision`: a new top level and
    metadata (resourceVersion last, as decoding puts it), everything below them shared."""
    md = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "resourceVersion"}
    md["resourceVersion"] = str(revision)
    return {**obj, "metadata": md}
