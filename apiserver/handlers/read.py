"""GET: one object, or a list — as JSON, or as the Table that `kubectl get` prints.

A list's `metadata.resourceVersion` is the storage revision it was read at. That number is the
hand-off point for watching: "list, then watch from the list's resourceVersion" sees every change
exactly once — the informer pattern every controller is built on.

`resourceVersion=0` asks for "any recent state" and is served from the watch cache without
touching storage. No resourceVersion asks for the latest state: as in Kubernetes 1.31+
(ConsistentListFromCache), an unpaged one is served from the watch cache once the cache is known to
have caught up with the store's current revision (a progress request to the store's watch), else
read from storage. Decoding 2,000 stored pods per LIST was half of what 48 listing clients cost
(bench/overload.py). `limit` and `continue` page through a consistent snapshot read from storage:
every page is read at the first page's revision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import Request, Response

from api import errors
from api.registry import ResourceType
from apiserver.codec import wants_table
from apiserver.flowcontrol_yield import encode_list, join_list
from apiserver.handlers.common import (
    check_list_options,
    int_param,
    json_response,
    list_predicate,
    resource_version_param,
)
from apiserver.printers import build_table
from apiserver.routing import RequestInfo

if TYPE_CHECKING:
    from apiserver.server import APIServer

CONSISTENT_READ_WAIT_SECONDS = 3.0  # kube-apiserver's cacher waits as long before it reads etcd
UNTRUSTED_PROGRESS_WAIT_SECONDS = 1.0  # for a change to come by, where progress cannot be asked


def include_object(request: Request) -> str:
    return request.query_params.get("includeObject") or "Metadata"


def as_table(
    request: Request, rt: ResourceType, items: list[dict[str, Any]], list_meta: dict[str, Any]
) -> dict[str, Any]:
    try:
        return build_table(rt.key, items, include_object=include_object(request), list_meta=list_meta)
    except ValueError as exc:
        raise errors.bad_request(f"includeObject: {exc}") from None


async def handle_get(server: APIServer, request: Request, info: RequestInfo) -> Response:
    assert info.name is not None
    resource_version_param(request)
    obj = await server.store(info.rt).get(info.namespace, info.name)
    if wants_table(request.headers.get("accept")):
        return json_response(as_table(request, info.rt, [obj], {"resourceVersion": obj["metadata"]["resourceVersion"]}))
    return json_response(obj)


async def handle_list(server: APIServer, request: Request, info: RequestInfo) -> Response:
    q = request.query_params
    check_list_options(request, watch=False)
    rv = resource_version_param(request)
    keep = list_predicate(info.rt, q.get("labelSelector"), q.get("fieldSelector"))
    limit = int_param(request, "limit", 0) or 0
    if limit < 0:
        raise errors.bad_request("limit must be a non-negative integer")
    token = q.get("continue") or None
    if (rv == "0" and not token) or (rv is None and await _cache_is_fresh(server, request, info, limit, token)):
        return await _list_from_cache(server, request, info, keep)
    # Exact: the state at that revision (410 once compacted). NotOlderThan, or a resourceVersion
    # alone: the latest state, which is newer than any revision the store has reached.
    exact = int(rv) if rv and q.get("resourceVersionMatch") == "Exact" else 0
    store = server.store(info.rt)
    if rv and rv != "0" and not exact and not token:
        current = await store.storage.current_revision()
        if int(rv) > current:
            raise errors.too_large_resource_version(int(rv), current)
    page = await store.list(info.namespace, keep=keep, limit=limit, continue_token=token, revision=exact)
    items = page.items
    list_meta: dict[str, Any] = {"resourceVersion": str(page.resource_version)}
    if page.continue_token:
        list_meta["continue"] = page.continue_token
    if page.remaining:
        list_meta["remainingItemCount"] = page.remaining
    if wants_table(request.headers.get("accept")):
        return json_response(as_table(request, info.rt, items, list_meta))
    head = {"kind": info.rt.list_kind, "apiVersion": info.rt.api_version, "metadata": list_meta}
    body = await encode_list(head, items)  # in slices: a big list must not hold the event loop
    return Response(content=body, media_type="application/json")


async def _list_from_cache(server: APIServer, request: Request, info: RequestInfo, keep: Any) -> Response:
    cache = server.cache(info.rt)
    entries, revision = await cache.entries()
    chosen = [(k, o) for k, o in entries if _in_namespace(o, info.namespace) and (keep is None or keep(o))]
    chosen.sort(key=lambda e: (e[1]["metadata"].get("namespace", ""), e[1]["metadata"]["name"]))
    list_meta = {"resourceVersion": str(revision)}
    if wants_table(request.headers.get("accept")):
        return json_response(as_table(request, info.rt, [o for _, o in chosen], list_meta))
    head = {"kind": info.rt.list_kind, "apiVersion": info.rt.api_version, "metadata": list_meta}
    # each object's JSON is cached: encoded once, not per LIST
    body = await join_list(head, (cache.object_json(key, obj) for key, obj in chosen))
    return Response(content=body, media_type="application/json")


async def _cache_is_fresh(
    server: APIServer, request: Request, info: RequestInfo, limit: int, token: str | None
) -> bool:
    """May a consistent LIST (no resourceVersion) be served from the watch cache? Kubernetes 1.31+
    (ConsistentListFromCache) does it when the list is not paged: it asks the store for its
    current revision and waits (up to 3 s) until the cache has caught up to it; if it has not,
    the list is read from the store. Where the store's progress notifications cannot be trusted
    (etcd before 3.4.31/3.5.13) Kubernetes always reads etcd; we still use the cache when a change
    at or past that revision arrives within 1 s on a prefix that is changing (wait_fresh)."""
    store = server.store(info.rt).storage
    if limit or token or request.query_params.get("resourceVersionMatch"):
        return False
    current = await store.current_revision()
    if store.supports_progress:
        fresh = await server.cache(info.rt).wait_fresh(current, CONSISTENT_READ_WAIT_SECONDS)
    else:
        fresh = await server.cache(info.rt).wait_fresh(current, UNTRUSTED_PROGRESS_WAIT_SECONDS, progress=False)
    # as kube-apiserver counts them: a fallback read from storage is still a success
    server.metrics.consistent_reads.labels(info.rt.key, "true", "false" if fresh else "true").inc()
    return fresh


def _in_namespace(obj: dict[str, Any], namespace: str | None) -> bool:
    return namespace is None or obj["metadata"].get("namespace") == namespace
