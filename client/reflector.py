"""Reflector: keep a local store equal to the server's truth with one LIST and then WATCH.

This is the loop at the bottom of every informer in client-go, and the whole reason a controller
never polls:

    LIST  /api/v1/pods                    -> every object, and the list's resourceVersion R
    store.replace(items)                     (the store now equals the server at R)
    WATCH /api/v1/pods?resourceVersion=R  -> every change after R, in order
          ADDED/MODIFIED/DELETED             store.add / update / delete; remember its RV
          BOOKMARK                           nothing changed up to RV: remember it
    stream ends (timeoutSeconds, server     -> WATCH again from the last RV: nothing is missed,
    restart, dropped connection)               nothing is seen twice
    410 Gone / Expired                      -> the server no longer has history that old (watch
                                               cache overflowed, storage compacted, server
                                               restarted): LIST again and replace the store

Connection errors (server down, refused, reset mid-stream) are retried with exponential backoff
and jitter - 0.8 s doubling to 30 s by default, as client-go does - so a fleet of clients does not
hammer an API server that is trying to come back up. A successful watch resets the backoff.

`replace` is the moment of truth after a gap: the store compares the fresh list with what it holds
and emits the deletes it missed (see informer.py). That is why a 410 is harmless: level-triggered
clients converge on the truth without having seen every intermediate event.

Paging (`page_size`, client/pager.py) is off unless asked for. The API server answers a LIST
without `limit` from its watch cache, and a paged one from storage (apiserver/handlers/read.py),
so paging every informer's list would move each component's start and every re-list onto etcd.
client-go makes the same choice: its reflector pages only when `WatchListPageSize` is set or the
server already answered in pages (a server whose watch cache is off).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from typing import Any, Protocol

from api.errors import GoneError, StatusError
from client.errors import ConnectionFailed
from client.pager import ListPager
from client.rest import Resource, RESTClient, resource_type
from client.watch import ADDED, BOOKMARK, DELETED, MODIFIED

log = logging.getLogger("client.reflector")


class Store(Protocol):
    """What a Reflector feeds. The Informer implements it."""

    def replace(self, objects: list[dict[str, Any]], resource_version: str) -> None: ...
    def add(self, obj: dict[str, Any]) -> None: ...
    def update(self, obj: dict[str, Any]) -> None: ...
    def delete(self, obj: dict[str, Any]) -> None: ...


class Backoff:
    """Exponential backoff with jitter: initial, x factor each failure, capped at `cap`."""

    def __init__(
        self, initial: float = 0.8, cap: float = 30.0, factor: float = 2.0, jitter: float = 1.0
    ) -> None:
        self.initial, self.cap, self.factor, self.jitter = initial, cap, factor, jitter
        self._next = initial

    def next(self) -> float:
        """The delay to wait now; the following one will be longer."""
        base = self._next
        self._next = min(self._next * self.factor, self.cap)
        return min(base * (1.0 + random.random() * self.jitter), self.cap)

    def reset(self) -> None:
        self._next = self.initial


class Reflector:
    """Mirror one resource (optionally one namespace / selector) into `store`. Run `run()` as a
    task; cancel it to stop."""

    def __init__(
        self,
        client: RESTClient,
        resource: Resource,
        store: Store,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        watch_timeout_seconds: int = 300,
        backoff_initial: float = 0.8,
        backoff_max: float = 30.0,
        page_size: int = 0,
    ) -> None:
        self.client = client
        self.rt = resource_type(resource)
        self.store = store
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.watch_timeout_seconds = watch_timeout_seconds
        self.backoff = Backoff(backoff_initial, backoff_max)
        self.last_sync_resource_version = ""  # the newest RV the store reflects ("" before the first list)
        self.lists = 0  # how many times we (re-)listed: 1 + one per 410, visible to tests and metrics
        self.pager = ListPager(client, self.rt, page_size)  # .pages: list requests, every page counted
        self.name = f"{self.rt.key}" + (f" in {namespace}" if namespace else "")

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        # A reflector that already mirrored something (stopped, then run again) first tries to
        # resume from its last resourceVersion; the server answers 410 if that is too old.
        need_list = not self.last_sync_resource_version
        while True:
            try:
                if need_list:
                    await self._list_and_replace()
                    need_list = False
                started = loop.time()
                events = await self._watch()
                # The server ended the stream cleanly (timeoutSeconds, or it dropped a slow
                # watcher): resume from where we are. A stream that closes at once, empty, is a
                # server in trouble: do not spin on it.
                if events == 0 and loop.time() - started < 1.0:
                    await asyncio.sleep(self.backoff.next())
            except GoneError as exc:
                log.info("reflector %s: %s; re-listing", self.name, exc)
                need_list = True  # no sleep: a 410 is routine, the server is healthy
            except asyncio.CancelledError:
                raise
            except (ConnectionFailed, StatusError) as exc:
                delay = self.backoff.next()
                log.warning("reflector %s: %s; retrying in %.1fs", self.name, exc, delay)
                await asyncio.sleep(delay)
            except Exception:  # a bug in a handler must not end the mirror for good
                delay = self.backoff.next()
                log.exception("reflector %s failed; retrying in %.1fs", self.name, delay)
                need_list = True
                await asyncio.sleep(delay)

    async def _list_and_replace(self) -> None:
        result = await self.pager.list(
            self.namespace, label_selector=self.label_selector, field_selector=self.field_selector
        )
        rv = str((result.get("metadata") or {}).get("resourceVersion") or "")
        items: list[dict[str, Any]] = []
        for item in result.get("items") or []:
            # List items travel without kind/apiVersion on a real cluster; put them back so every
            # object in a cache looks the same whether it came from a list or a watch.
            item.setdefault("kind", self.rt.kind)
            item.setdefault("apiVersion", self.rt.api_version)
            items.append(item)
        self.store.replace(items, rv)
        self.last_sync_resource_version = rv
        self.lists += 1

    async def _watch(self) -> int:
        """Watch from the last RV until the stream ends; returns how many events it carried."""
        count = 0
        stream = self.client.watch(
            self.rt,
            self.namespace,
            resource_version=self.last_sync_resource_version or None,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            timeout_seconds=self.watch_timeout_seconds,
            allow_bookmarks=True,
        )
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                count += 1
                if event.type == ADDED:
                    self.store.add(event.object)
                elif event.type == MODIFIED:
                    self.store.update(event.object)
                elif event.type == DELETED:
                    self.store.delete(event.object)
                elif event.type != BOOKMARK:
                    log.warning("reflector %s: unknown watch event type %r", self.name, event.type)
                    continue
                if event.resource_version:
                    self.last_sync_resource_version = event.resource_version
                self.backoff.reset()  # the server is up and talking to us
        return count
