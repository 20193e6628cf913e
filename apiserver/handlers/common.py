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
from apiserver.codec import decode_body, dumps, duplicate_fields
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


async def read_object_body(request: Request, limit: int) -> dict[str, Any]:
    """The body of a subresource write (Binding, Eviction, a finalize Namespace): one JSON or YAML object."""
    body = decode_body(await read_body(request, limit), request.headers.get("content-type"))
    if not isinstance(body, dict):
        raise errors.bad_request("the body must be a JSON object")
    return body


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


FIELD_VALIDATION_VALUES = ("", "Ignore", "Strict", "Warn")


_OPTIONS_KIND = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions"}


def check_write_options(request: Request, verb: str) -> None:
    """?fieldValidation= on a write: exactly one of Kubernetes' values (case matters).

    Kubernetes validates a request's options object before it decodes the body, so a bad value
    is a 422 Invalid on `CreateOptions.meta.k8s.io` (or Update/PatchOptions), body unread.
    """
    kind = _OPTIONS_KIND.get(verb)
    mode = request.query_params.get("fieldValidation")
    if kind is None or mode is None or mode in FIELD_VALIDATION_VALUES:
        return
    raise errors.invalid(
        kind, "meta.k8s.io", "", [errors.not_supported("fieldValidation", mode, FIELD_VALIDATION_VALUES)]
    )


def field_validation(rt: ResourceType, obj: dict[str, Any], mode: str | None) -> list[str]:
    """Decode `obj` the way kube-apiserver decodes a built-in kind, in place; return warnings.

    - A value of the wrong type, an integer too big for its Go type or a malformed quantity is
      a 400 BadRequest, whatever the mode (Go's decoder cannot hold it).
    - Unknown fields and duplicate JSON fields: with Strict a 400 "strict decoding error";
      otherwise the unknown fields are pruned (never stored), with a warning each under Warn
      (the default) and silently under Ignore.
    """
    if mode not in FIELD_VALIDATION_VALUES[1:]:
        mode = "Warn"  # absent or empty; anything else was refused by check_write_options
    prefix = f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
    type_errs = schema.type_errors(rt, obj)
    if type_errs:
        raise errors.bad_request(prefix + type_errs[0][1])
    unknown = schema.prune_unknown_fields(rt, obj)
    if mode == "Ignore":
        return []
    problems = [f'unknown field "{path}"' for path in unknown]
    problems += list(duplicate_fields())
    if problems and mode == "Strict":
        raise errors.bad_request(prefix + "strict decoding error: " + ", ".join(problems))
    return problems


def int_param(request: Request, name: str, default: int | None = None) -> int | None:
    """An int64 query parameter; garbage is a 400 in Go's strconv words, as Kubernetes says it."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        if not raw.lstrip("+-").isdigit() or raw.startswith("+"):
            raise ValueError
        value = int(raw)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing {json.dumps(raw)}: invalid syntax') from None
    if not -(2**63) <= value < 2**63:
        raise errors.bad_request(f"strconv.ParseInt: parsing {json.dumps(raw)}: value out of range")
    return value


def bool_param(request: Request, name: str) -> bool:
    """A bool query parameter the way Kubernetes converts one: absent, "0" and "false" (any
    case) are false; any other value is true, even garbage or nothing (`watch=abc`, `watch=`)."""
    raw = request.query_params.get(name)
    if raw is None:
        return False
    return not (raw == "0" or raw.lower() == "false")


def resource_version_param(request: Request) -> str | None:
    """?resourceVersion= as etcd's revision: empty or a decimal uint64, else a 400.

    (kube-apiserver 1.32 answers this with a 500 carrying the same message; the fix it is
    heading for, and the only sane answer to a client's typo, is 400.)
    """
    rv = request.query_params.get("resourceVersion")
    if rv is None or rv == "":
        return None
    if not rv.isdigit() or not rv.isascii() or int(rv) >= 2**64:
        reason = "value out of range" if rv.isdigit() and rv.isascii() else "invalid syntax"
        raise errors.bad_request(
            f"resourceVersion: Invalid value: {json.dumps(rv)}: strconv.ParseUint: parsing {json.dumps(rv)}: {reason}"
        )
    return rv


def check_list_options(request: Request, watch: bool) -> None:
    """Kubernetes' ListOptions rules: a resourceVersionMatch needs a resourceVersion, is one of
    Exact or NotOlderThan, and goes with neither continue nor (Exact) resourceVersion=0.
    Broken rules are a 422 Invalid on `ListOptions.meta.k8s.io`."""
    q = request.query_params
    match = q.get("resourceVersionMatch") or ""
    rv = q.get("resourceVersion") or ""
    causes: list[errors.FieldError] = []
    if watch:
        if q.get("sendInitialEvents") is not None and match != "NotOlderThan":
            causes.append(errors.field_forbidden(
                "resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
        elif q.get("sendInitialEvents") is None and match:
            causes.append(errors.field_forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ))
    elif match:
        if not rv:
            causes.append(errors.field_forbidden("resourceVersionMatch",
                                           "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if q.get("continue"):
            causes.append(errors.field_forbidden("resourceVersionMatch",
                                           "resourceVersionMatch is forbidden when continue is provided"))
        if match not in ("Exact", "NotOlderThan"):
            causes.append(errors.not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]))
        if q.get("sendInitialEvents") is not None:
            causes.append(errors.field_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
        if match == "Exact" and rv == "0":
            causes.append(errors.field_forbidden("resourceVersionMatch",
                                           'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)
