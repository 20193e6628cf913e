"""What every REST handler shares: reading bodies, answering JSON, parsing list options.

Responses are written as bytes we serialise ourselves (not FastAPI's response models): the API
server's job is to pass Kubernetes objects through faithfully, unknown fields and all, and fast.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import Request, Response

from api import errors, fields, labels, schema
from api.registry import ResourceType
from apiserver.codec import dumps
from apiserver.objectmeta import meta

Predicate = Callable[[dict[str, Any]], bool]


def json_response(obj: Any, code: int = 200, warnings: list[str] | None = None) -> Response:
    headers = {}
    if warnings:
        # One header value per warning, in the RFC 7234 form kubectl prints ("Warning: ...").
        # Escaped like Go's %q: quotes, backslashes, control and non-ASCII characters become escapes.
        headers["Warning"] = ", ".join("299 - " + json.dumps(w) for w in warnings[:20])
    return Response(content=dumps(obj), status_code=code, media_type="application/json", headers=headers)


async def read_body(request: Request, limit: int) -> bytes:
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        raise errors.too_large(limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise errors.too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def list_predicate(rt: ResourceType, label_selector: str | None, field_selector: str | None) -> Predicate | None:
    """Compile ?labelSelector= and ?fieldSelector= into one test on an object (None = keep all)."""
    tests: list[Predicate] = []
    if label_selector:
        try:
            sel = labels.parse(label_selector)
        except ValueError as exc:
            raise errors.bad_request(str(exc)) from None
        if not sel.empty:
            tests.append(lambda o: sel.matches((o.get("metadata") or {}).get("labels") or {}))
    if field_selector:
        try:
            fsel = fields.parse(field_selector)
            fields.check_supported(rt.key, fsel)
        except ValueError as exc:
            raise errors.bad_request(str(exc)) from None
        if not fsel.empty:
            tests.append(fsel.matches_object)
    if not tests:
        return None
    if len(tests) == 1:
        return tests[0]
    return lambda o: all(t(o) for t in tests)


def check_body_identity(rt: ResourceType, obj: Any, namespace: str | None) -> dict[str, Any]:
    """The body must be an object of this resource's kind, in the URL's namespace."""
    if not isinstance(obj, dict):
        raise errors.bad_request(f"the body of the request must be a JSON object describing a {rt.kind}")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if api_version and api_version != rt.api_version:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version ({rt.api_version})"
        )
    if kind and kind != rt.kind:
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})")
    md = meta(obj)
    if rt.namespaced:
        body_ns = md.get("namespace")
        if body_ns and namespace and body_ns != namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        if namespace:
            md["namespace"] = namespace
    else:
        md.pop("namespace", None)
    # Kubernetes' field order: type info first, then metadata, spec, status.
    rest = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": md, **rest}


def field_validation(rt: ResourceType, obj: dict[str, Any], mode: str | None) -> list[str]:
    """Unknown and mistyped fields: warn by default, refuse with fieldValidation=Strict.

    Kubernetes answers a strict-mode failure with 400 BadRequest ("strict decoding error").
    """
    type_errs = schema.type_errors(rt, obj)
    if type_errs:
        detail = "; ".join(f"{path}: {msg}" for path, msg in type_errs[:5])
        raise errors.bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {detail}')
    mode = (mode or "Warn").capitalize()
    if mode == "Ignore":
        return []
    unknown = schema.unknown_fields(rt, obj)
    if not unknown:
        return []
    messages = [f'unknown field "{path}"' for path in unknown]
    if mode == "Strict":
        raise errors.bad_request(
            f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: strict decoding error: '
            + ", ".join(messages)
        )
    return messages


def int_param(request: Request, name: str, default: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise errors.bad_request(f"invalid value for {name}: {raw!r} is not an integer") from None
    if not -(2**63) <= value < 2**63:
        raise errors.bad_request(f"invalid value for {name}: {raw} does not fit in a 64-bit integer")
    return value


def bool_param(request: Request, name: str) -> bool:
    return (request.query_params.get(name) or "").lower() in ("1", "true", "yes")
