"""autoscaling/v1 HorizontalPodAutoscalers, served by conversion from the stored autoscaling/v2 object.

Why: Kubernetes stores one HPA and serves it in every version it knows. v1 has a single metric,
`spec.targetCPUUtilizationPercentage`, which is v2's `Resource` metric `cpu` with an
`averageUtilization` target; status carries `currentCPUUtilizationPercentage`. `kubectl autoscale`
(1.32) still POSTs autoscaling/v1, so this is what makes it work. What v1 cannot say (other
metrics, `behavior`, current metrics, conditions) travels in annotations of the v1 view, as in
Kubernetes: hpa_v1_conversion.py.

How: a v1 request is answered by the v2 handlers. Its JSON body is converted v1 -> v2 before they
read it, and every object in the answer (one object, a list, a watch event) v2 -> v1 on the way
out. Tables and Status bodies pass as they are. A v1 PATCH is applied to the v1 view of the stored
object (what the client read, annotations included), then converted back, so `kubectl patch hpa`
through v1 keeps a v2 user's settings unless the patch changes those annotations. Server-side
apply through v1 is refused (405): its field ownership is kept in v2 paths; apply autoscaling/v2
instead.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import Request, Response
from fastapi.responses import StreamingResponse

from api import errors, registry
from api.registry import ResourceType
from apiserver import codec
from apiserver.codec import decode_body, dumps
from apiserver.handlers import dryrun
from apiserver.handlers.apply import update_tracker
from apiserver.handlers.common import json_response, read_body
from apiserver.handlers.update import apply_patch, update_object
from apiserver.hpa_v1_conversion import V1, to_v1, to_v2
from apiserver.routing import RequestInfo

Obj = dict[str, Any]

async def _patch(server: Any, request: Request, v1: ResourceType, info: RequestInfo) -> Response:
    ctype = request.headers.get("content-type")
    mt = codec.media_type(ctype)
    if mt == codec.APPLY_PATCH:
        raise errors.method_not_allowed(info.rt.key, "apply autoscaling/v1 (apply autoscaling/v2)")
    if mt not in codec.PATCH_TYPES:
        raise errors.unsupported_media_type(mt)
    dry_run = dryrun.from_query(request, dryrun.PATCH)
    raw = await read_body(request, server.config.max_request_bytes)
    patch = codec.decode_body(raw, codec.JSON, allow=codec.PATCH_TYPES)
    assert info.name is not None

    def patched(old: Obj) -> Obj:  # the v1 view carries what v1 cannot say in its annotations
        return to_v2(apply_patch(v1, to_v1(old), patch, ctype))

    new = await update_object(
        server, info.rt, info.namespace, info.name, patched, subresource=info.subresource, dry_run=dry_run,
        track_fields=update_tracker(request, info),
    )
    return json_response(to_v1(new), 200)


def _out(body: Any) -> Any:
    if isinstance(body, dict) and body.get("kind") == "HorizontalPodAutoscalerList":
        return {**body, "apiVersion": V1, "items": [to_v1(i) for i in body.get("items") or []]}
    if isinstance(body, dict) and "type" in body and isinstance(body.get("object"), dict):
        return {**body, "object": to_v1(body["object"])}  # a watch event
    return to_v1(body) if isinstance(body, dict) else body


async def _converted_lines(stream: AsyncIterable[Any]) -> AsyncIterator[bytes]:
    pending = b""
    async for chunk in stream:
        pending += chunk.encode() if isinstance(chunk, str) else bytes(chunk)
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield (dumps(_out(json.loads(line))) + b"\n") if line.strip() else line + b"\n"
    if pending.strip():
        yield dumps(_out(json.loads(pending)))


Handle = Callable[[Any, Request, RequestInfo, str], Awaitable[Response]]


async def handle(server: Any, request: Request, info: RequestInfo, verb: str, handle_v2: Handle) -> Response:
    """Serve `info` (an autoscaling/v1 request) through the v2 handlers."""
    stored: ResourceType | None = registry.by_key(info.rt.key)
    assert stored is not None
    v2_info = RequestInfo(stored, info.namespace, info.name, info.subresource)
    if request.method == "PATCH":
        return await _patch(server, request, info.rt, v2_info)
    if request.method in ("POST", "PUT"):
        raw = await read_body(request, server.config.max_request_bytes)
        body = decode_body(raw, request.headers.get("content-type"))  # JSON, YAML or protobuf
        if isinstance(body, dict) and body.get("apiVersion") in (None, V1):
            body = to_v2({**body, "apiVersion": V1})
        payload = json.dumps(body).encode()
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": payload, "more_body": False}

        headers = [(k, v) for k, v in request.scope["headers"] if k.lower() not in (b"content-type", b"content-length")]
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
        request = Request({**request.scope, "headers": headers}, receive)
    response = await handle_v2(server, request, v2_info, verb)
    if isinstance(response, StreamingResponse):
        response.body_iterator = _converted_lines(response.body_iterator)
        return response
    if not (response.media_type or "").startswith("application/json"):
        return response
    body = json.loads(bytes(response.body))
    converted = json_response(_out(body), response.status_code)
    for key, value in response.headers.items():
        if key.lower() == "warning":
            converted.headers[key] = value
    return converted
