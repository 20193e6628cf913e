"""GET: one object, or a list — as JSON, or as the Table that `kubectl get` prints.

A list's `metadata.resourceVersion` is the storage revision it was read at. That number is the
hand-off point for watching: "list, then watch from the list's resourceVersion" sees every change
exactly once — the informer pattern every controller is built on.

`resourceVersion=0` asks for "any recent state" and is served from the watch cache without
touching storage; no resourceVersion asks for the latest state and reads storage. `limit` and
`continue` page through a consistent snapshot: every page is read at the first page's revision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import Request, Response

from api import errors
from api.registry import ResourceType
from apiserver.codec import wants_table
from apiserver.flowcontrol_yield import encode_list
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
    list_meta: dict[str, Any]
    if rv == "0" and not token:
        objs, revision = await server.cache(info.rt).snapshot()
        items = [o for o in objs if _in_namespace(o, info.namespace) and (keep is None or keep(o))]
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        list_meta = {"resourceVersion": str(revision)}
    else:
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
        list_meta = {"resourceVersion": str(page.resource_version)}
        if page.continue_token:
            list_meta["continue"] = page.continue_token
        if page.remaining:
            list_meta["remainingItemCount"] = page.remaining
    if wants_table(request.headers.get("accept")):
        return json_response(as_table(request, info.rt, items, list_meta))
    head = {"kind": info.rt.list_kind, "apiVersion": info.rt.api_version, "metadata": list_meta}
    body = await encode_list(head, items)  # in slices: a big list must not hold the event loop
    return Response(content=body, media_type="application/json")


def _in_namespace(obj: dict[str, Any], namespace: str | None) -> bool:
    return namespace is None or obj["metadata"].get("namespace") == namespace
