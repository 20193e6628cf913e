"""autoscaling/v1 HorizontalPodAutoscalers, served by conversion from the stored autoscaling/v2 object.

Kubernetes stores one HPA and serves it in every version it knows. v1 has a single metric,
`spec.targetCPUUtilizationPercentage`, which is v2's `Resource` metric `cpu` with an
`Utilization` target; status carries `currentCPUUtilizationPercentage`. `kubectl autoscale`
(1.32) still POSTs autoscaling/v1, so this is what makes it work.

How: a v1 request is answered by the v2 handlers. Its JSON body is converted v1 -> v2 before they
read it, and every object in the answer (one object, a list, a watch event) v2 -> v1 on the way
out. Tables and Status bodies pass as they are. A v1 PATCH is applied to the v1 view of the stored
object (what the client read), then converted back; what v1 cannot express (other metrics,
`behavior`) is kept from the stored object, so `kubectl patch hpa` through v1 does not erase a v2
user's settings. Server-side apply through v1 is refused (405): its field ownership is kept in v2
paths; apply autoscaling/v2 instead.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
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
from apiserver.routing import RequestInfo

Obj = dict[str, Any]
V1, V2 = "autoscaling/v1", "autoscaling/v2"


def _cpu_target(metrics: list[Obj]) -> int | None:
    for metric in metrics:
        resource = metric.get("resource") or {}
        target = resource.get("target") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu" and target.get("type") == "Utilization":
            value = target.get("averageUtilization")
            return value if isinstance(value, int) else None
    return None


def to_v2(obj: Obj) -> Obj:
    """A v1 HPA as autoscaling/v2 (what is stored)."""
    out = {k: v for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = V2
    spec = dict(obj.get("spec") or {})
    cpu = spec.pop("targetCPUUtilizationPercentage", None)
    if cpu is not None:
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}}]
    out["spec"] = spec
    if "status" in obj:
        status = dict(obj.get("status") or {})
        current = status.pop("currentCPUUtilizationPercentage", None)
        if current is not None:
            status["currentMetrics"] = [{"type": "Resource", "resource": {
                "name": "cpu", "current": {"averageUtilization": current}}}]
        out["status"] = status
    return out


def to_v1(obj: Obj) -> Obj:
    """A stored v2 HPA as autoscaling/v1: the CPU utilization metric only."""
    if obj.get("kind") != "HorizontalPodAutoscaler":
        return obj
    out = {k: v for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = V1
    spec = {k: v for k, v in (obj.get("spec") or {}).items() if k not in ("metrics", "behavior")}
    cpu = _cpu_target((obj.get("spec") or {}).get("metrics") or [])
    if cpu is not None:
        spec["targetCPUUtilizationPercentage"] = cpu
    out["spec"] = spec
    if "status" in obj:
        src = obj.get("status") or {}
        status = {k: v for k, v in src.items() if k not in ("currentMetrics", "conditions")}
        for metric in src.get("currentMetrics") or []:
            resource = metric.get("resource") or {}
            value = (resource.get("current") or {}).get("averageUtilization")
            if metric.get("type") == "Resource" and resource.get("name") == "cpu" and value is not None:
                status["currentCPUUtilizationPercentage"] = value
        out["status"] = status
    return out


def _keep_what_v1_cannot_say(new: Obj, old: Obj) -> Obj:
    """`new` (converted from v1) with the stored object's non-CPU metrics and `behavior`."""
    old_spec, spec = old.get("spec") or {}, new.setdefault("spec", {})
    if "behavior" in old_spec:
        spec["behavior"] = old_spec["behavior"]
    others = [m for m in old_spec.get("metrics") or [] if _cpu_target([m]) is None]
    if others:
        spec["metrics"] = (spec.get("metrics") or []) + others
    return new


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

    def patched(old: Obj) -> Obj:
        new = to_v2(apply_patch(v1, to_v1(old), patch, ctype))
        return _keep_what_v1_cannot_say(new, old)

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


async def _converted_lines(stream: AsyncIterator[Any]) -> AsyncIterator[bytes]:
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
