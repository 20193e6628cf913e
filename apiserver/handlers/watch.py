"""?watch=1: a long-lived HTTP response streaming one JSON event per line.

    {"type":"ADDED","object":{...}}
    {"type":"MODIFIED","object":{...}}
    {"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"42"}}}

Events come from the resource's WatchCache (watchcache.py), never straight from storage. A
resourceVersion that is too old is answered the way kube-apiserver answers it: the stream opens and
its first and only event is an ERROR carrying a 410 Expired Status — the client's cue to re-list.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from fastapi import Request, Response
from fastapi.responses import StreamingResponse

from api import errors
from apiserver.codec import dumps, wants_table
from apiserver.handlers.common import (
    bool_param,
    check_list_options,
    int_param,
    list_predicate,
    resource_version_param,
)
from apiserver.handlers.read import as_table
from apiserver.routing import RequestInfo
from apiserver.watchcache import CacheEvent, Subscriber

if TYPE_CHECKING:
    from apiserver.server import APIServer


def _line(type_: str, obj_json: bytes) -> bytes:
    return b'{"type":"' + type_.encode() + b'","object":' + obj_json + b"}\n"


async def handle_watch(server: APIServer, request: Request, info: RequestInfo) -> Response:
    q = request.query_params
    field_sel = q.get("fieldSelector")
    if info.name is not None:  # GET /pods/x?watch=1: the legacy single-object watch
        field_sel = ",".join(s for s in (field_sel, f"metadata.name={info.name}") if s)
    keep = list_predicate(info.rt, q.get("labelSelector"), field_sel)
    check_list_options(request, watch=True)
    rv = resource_version_param(request)
    after = int(rv) if rv not in (None, "0") else None
    timeout = int_param(request, "timeoutSeconds")
    bookmarks = bool_param(request, "allowWatchBookmarks")
    table = wants_table(request.headers.get("accept"))
    cache = server.cache(info.rt)
    try:
        sub = await cache.subscribe(info.namespace, keep, after, server.config.watch_buffer_events)
    except errors.StatusError as exc:
        return StreamingResponse(_one(_line("ERROR", dumps(exc.to_status()))), media_type="application/json")

    def render(ev: CacheEvent) -> bytes:
        if table:
            return _line(ev.type, dumps(as_table(request, info.rt, [ev.object], {})))
        return _line(ev.type, ev.object_json())

    def bookmark() -> bytes:
        obj: dict[str, Any] = {
            "kind": info.rt.kind,
            "apiVersion": info.rt.api_version,
            "metadata": {"resourceVersion": str(cache.revision)},
        }
        return _line("BOOKMARK", dumps(obj))

    # A watcher too far behind is dropped: its connection is cut, so the server keeps nothing for
    # a client that stopped reading (it re-watches from its last resourceVersion).
    sub.on_overflow = request.scope.get("mini_k8s.abort")
    gauge = server.metrics.watchers.labels(info.rt.key)
    gauge.inc()
    stream = _events(sub, render, bookmark if bookmarks else None, timeout, server.config.watch_bookmark_interval)

    async def body() -> AsyncIterator[bytes]:
        try:
            async for chunk in stream:
                yield chunk
        finally:
            cache.unsubscribe(sub)
            gauge.dec()

    return StreamingResponse(body(), media_type="application/json")


CHUNK_BYTES = 64 * 1024


async def _one(chunk: bytes) -> AsyncIterator[bytes]:
    yield chunk


async def _events(
    sub: Subscriber, render: Any, bookmark: Any, timeout: int | None, bookmark_every: float
) -> AsyncIterator[bytes]:
    deadline = time.monotonic() + timeout if timeout else None
    while True:
        wait = bookmark_every if bookmark else None
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            wait = min(wait, left) if wait else left
        try:
            ev = await asyncio.wait_for(sub.queue.get(), wait) if wait else await sub.queue.get()
        except TimeoutError:
            if bookmark and (deadline is None or deadline - time.monotonic() > 0):
                yield bookmark()
            continue
        if ev is None or sub.dropped:  # dropped: its connection is cut, render nothing more
            return
        out = [render(ev)]
        size = len(out[0])
        # Drain what is already queued into one chunk: fewer writes under bursts. Bounded in bytes
        # too: a new watch of 2,000 pods is 4 MB of events, and rendering what a client that
        # does not read will never take holds up everything else the event loop has to do.
        while len(out) < 256 and size < CHUNK_BYTES and not sub.queue.empty():
            nxt = sub.queue.get_nowait()
            if nxt is None:
                yield b"".join(out)
                return
            out.append(render(nxt))
            size += len(out[-1])
        yield b"".join(out)
