"""Informer: a local, always-current copy of one resource, with indexes and change notifications.

A controller asks "which pods does this ReplicaSet own?" many times a second. Asking the API
server each time would melt it; asking a local cache costs nothing. The informer is that cache:

    Reflector (LIST + WATCH) ──▶ Informer.replace/add/update/delete ──▶ cache keyed "ns/name"
                                                                    ├─▶ indexes ("byNode" -> keys)
                                                                    └─▶ handlers on_add/on_update/on_delete

Handlers must be cheap: they only put a *key* on a WorkQueue. The worker then reads the newest
state from the cache when it gets round to it. That is level-triggered design: by the time the
worker runs, three updates may have collapsed into one key, and the worker acts on the current
state, not on a history of events.

Convergence after a gap. When the reflector re-lists (410 Gone, server restart), `replace`
compares the fresh list with the cache:
- a key in the cache but not in the list was deleted while we were not looking -> on_delete with
  the last state we knew (client-go wraps it in DeletedFinalStateUnknown; we pass the object);
- a key whose resourceVersion changed -> on_update(old, new);
- a new key -> on_add; an unchanged key -> nothing.
So no delete is ever missed and nothing is announced twice.

Cached objects are shared with every reader: treat them as read-only and copy before changing
(`copy.deepcopy(obj)`), exactly client-go's rule.

`SharedInformerFactory` hands out one informer per resource, so the ReplicaSet and Deployment
controllers in one process share a single watch on pods instead of opening one each.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from client.reflector import Reflector
from client.rest import Resource, RESTClient, resource_type

log = logging.getLogger("client.informer")

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], list[str]]

NAMESPACE_INDEX = "namespace"


def meta_namespace_key(obj: Mapping[str, Any]) -> str:
    """`namespace/name`, or just `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc)."""
    meta = obj.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{ns}/{name}" if ns else name


def split_key(key: str) -> tuple[str, str]:
    """`ns/name` -> ("ns", "name"); `name` -> ("", "name")."""
    ns, sep, name = key.partition("/")
    return (ns, name) if sep else ("", ns)


def index_by_namespace(obj: Obj) -> list[str]:
    return [(obj.get("metadata") or {}).get("namespace") or ""]


def index_by_node_name(obj: Obj) -> list[str]:
    """Pods by `spec.nodeName` (what the kubelet and the node lifecycle controller ask)."""
    node = (obj.get("spec") or {}).get("nodeName")
    return [node] if node else []


def index_by_owner_uid(obj: Obj) -> list[str]:
    """Objects by the uid of each owner in `metadata.ownerReferences` (garbage collector, RS)."""
    return [ref["uid"] for ref in (obj.get("metadata") or {}).get("ownerReferences") or [] if ref.get("uid")]


def index_by_service_name(obj: Obj) -> list[str]:
    """EndpointSlices by `<namespace>/<service>` from their `kubernetes.io/service-name` label
    (what kube-proxy and the cluster DNS ask: the slices of one Service)."""
    meta = obj.get("metadata") or {}
    name = (meta.get("labels") or {}).get("kubernetes.io/service-name")
    return [f"{meta.get('namespace') or ''}/{name}"] if name else []


def _rv(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


@dataclass(frozen=True)
class EventHandler:
    on_add: Callable[[Obj], Any] | None = None
    on_update: Callable[[Obj, Obj], Any] | None = None  # (old, new)
    on_delete: Callable[[Obj], Any] | None = None


class Informer:
    """Cache + indexes + handlers for one resource, fed by its own Reflector."""

    def __init__(
        self,
        client: RESTClient,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        watch_timeout_seconds: int = 300,
        backoff_initial: float = 0.8,
        backoff_max: float = 30.0,
        page_size: int = 0,  # 0: one LIST (served from the watch cache); see client/reflector.py
    ) -> None:
        self.rt = resource_type(resource)
        self._items: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: index_by_namespace}
        self._indices: dict[str, dict[str, set[str]]] = {NAMESPACE_INDEX: {}}
        self._handlers: list[EventHandler] = []
        self._lock = threading.RLock()  # readers may live on other threads; writes are rare
        self._synced = threading.Event()
        self._task: asyncio.Task[None] | None = None
        self.reflector = Reflector(
            client,
            self.rt,
            self,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            watch_timeout_seconds=watch_timeout_seconds,
            backoff_initial=backoff_initial,
            backoff_max=backoff_max,
            page_size=page_size,
        )

    # ------------------------------------------------------------------ configuration

    def add_event_handler(
        self,
        on_add: Callable[[Obj], Any] | None = None,
        on_update: Callable[[Obj, Obj], Any] | None = None,
        on_delete: Callable[[Obj], Any] | None = None,
    ) -> None:
        """Register callbacks. A handler added after the cache filled is told about what is
        already there with on_add, as client-go does, so late joiners miss nothing."""
        handler = EventHandler(on_add, on_update, on_delete)
        with self._lock:
            self._handlers.append(handler)
            existing = list(self._items.values())
        if on_add:
            for obj in existing:
                self._call(on_add, obj)

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Named indexes: `add_indexers({"byNode": index_by_node_name})`, then
        `by_index("byNode", "node-1")`. An index function returns the values an object is filed under."""
        with self._lock:
            for name, fn in indexers.items():
                self._indexers[name] = fn
                self._indices[name] = {}
                for key, obj in self._items.items():
                    self._index_one(name, key, obj)

    # ------------------------------------------------------------------ reading the cache

    def get(self, key: str) -> Obj | None:
        with self._lock:
            return self._items.get(key)

    def list(self) -> list[Obj]:
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        with self._lock:
            if index_name not in self._indices:
                raise KeyError(f"index {index_name!r} does not exist")
            return sorted(self._indices[index_name].get(value, ()))

    def by_index(self, index_name: str, value: str) -> builtins.list[Obj]:
        with self._lock:
            return [self._items[k] for k in self.index_keys(index_name, value) if k in self._items]

    def has_synced(self) -> bool:
        """True once the first LIST is in the cache: before that, "not in cache" means nothing."""
        return self._synced.is_set()

    async def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Wait until has_synced(); False if `timeout` seconds pass first."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while not self._synced.is_set():
            if deadline is not None and loop.time() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    # ------------------------------------------------------------------ running

    def start(self) -> asyncio.Task[None]:
        """Start the reflector as a task (idempotent)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.reflector.run(), name=f"informer:{self.rt.key}")
        return self._task

    async def run(self) -> None:
        await self.start()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    # ------------------------------------------------------------------ the Store the reflector feeds

    def replace(self, objects: builtins.list[Obj], resource_version: str) -> None:
        new = {meta_namespace_key(o): o for o in objects}
        notes: builtins.list[tuple[str, Obj | None, Obj]] = []
        with self._lock:
            for key, gone in list(self._items.items()):
                if key not in new:
                    self._remove(key)
                    notes.append(("delete", None, gone))
            for key, obj in new.items():
                cached = self._items.get(key)
                if cached is None:
                    self._put(key, obj)
                    notes.append(("add", None, obj))
                elif _rv(cached) != _rv(obj):
                    self._put(key, obj)
                    notes.append(("update", cached, obj))
            self._synced.set()
        for kind, old, obj in notes:
            self._notify(kind, old, obj)

    def add(self, obj: Obj) -> None:
        self._upsert(obj)

    def update(self, obj: Obj) -> None:
        self._upsert(obj)

    def delete(self, obj: Obj) -> None:
        key = meta_namespace_key(obj)
        with self._lock:
            if key not in self._items:
                return  # never seen (or already gone): nothing to announce
            self._remove(key)
        self._notify("delete", None, obj)

    def _upsert(self, obj: Obj) -> None:
        key = meta_namespace_key(obj)
        with self._lock:
            old = self._items.get(key)
            if old is not None and _rv(old) == _rv(obj):
                return  # the same version again (a resumed watch can overlap): no news
            self._put(key, obj)
        self._notify("add" if old is None else "update", old, obj)

    # ------------------------------------------------------------------ internals

    def _index_one(self, name: str, key: str, obj: Obj) -> None:
        for value in self._indexers[name](obj):
            self._indices[name].setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: Obj) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]

    def _put(self, key: str, obj: Obj) -> None:
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        for name in self._indexers:
            self._index_one(name, key, obj)

    def _remove(self, key: str) -> None:
        old = self._items.pop(key)
        self._unindex(key, old)

    def _notify(self, kind: str, old: Obj | None, obj: Obj) -> None:
        for h in list(self._handlers):
            if kind == "add" and h.on_add:
                self._call(h.on_add, obj)
            elif kind == "update" and h.on_update:
                self._call(h.on_update, old, obj)
            elif kind == "delete" and h.on_delete:
                self._call(h.on_delete, obj)

    def _call(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # one faulty handler must not stop the cache or the other handlers
            log.exception("informer %s: event handler failed", self.rt.key)


class SharedInformerFactory:
    """One Informer per (resource, selectors) for a whole process. Ask for informers, then
    `start()` and `await wait_for_cache_sync()` before the workers begin."""

    def __init__(
        self,
        client: RESTClient,
        *,
        namespace: str | None = None,
        watch_timeout_seconds: int = 300,
        backoff_initial: float = 0.8,
        backoff_max: float = 30.0,
        page_size: int = 0,  # 0: one LIST (served from the watch cache); see client/reflector.py
    ) -> None:
        self.client = client
        self.namespace = namespace
        self._options = {
            "watch_timeout_seconds": watch_timeout_seconds,
            "backoff_initial": backoff_initial,
            "backoff_max": backoff_max,
            "page_size": page_size,
        }
        self._informers: dict[tuple[str, str | None, str | None], Informer] = {}

    def informer_for(
        self, resource: Resource, *, label_selector: str | None = None, field_selector: str | None = None
    ) -> Informer:
        rt = resource_type(resource)
        key = (rt.key, label_selector, field_selector)
        if key not in self._informers:
            self._informers[key] = Informer(
                self.client,
                rt,
                namespace=self.namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                watch_timeout_seconds=int(self._options["watch_timeout_seconds"]),
                backoff_initial=self._options["backoff_initial"],
                backoff_max=self._options["backoff_max"],
                page_size=int(self._options["page_size"]),
            )
        return self._informers[key]

    def informers(self) -> dict[str, Informer]:
        return {k[0] if k[1:] == (None, None) else repr(k): inf for k, inf in self._informers.items()}

    def start(self) -> None:
        """Start every informer asked for so far (safe to call again after asking for more)."""
        for informer in self._informers.values():
            informer.start()

    async def wait_for_cache_sync(self, timeout: float | None = None) -> dict[str, bool]:
        """Resource key -> synced, once all have synced or `timeout` has passed."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        out: dict[str, bool] = {}
        for name, informer in self.informers().items():
            left = None if deadline is None else max(deadline - loop.time(), 0.0)
            out[name] = await informer.wait_for_sync(left)
        return out

    async def shutdown(self) -> None:
        for informer in self._informers.values():
            await informer.stop()
