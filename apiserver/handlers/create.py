"""POST: create an object — name it, stamp its metadata, default it, admit it, validate it, store it.

The order matters and is Kubernetes' order: the server fills in what the client may omit
(generateName, uid, creationTimestamp, defaults), admission applies cluster policy, validation
checks the final object, and only a fully valid object is written. Anything refused leaves storage
untouched. With `?dryRun=All` every step runs and the write is skipped (handlers/dryrun.py): the
answer is the object as it would have been created, uid and creationTimestamp included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import Request, Response

from api import errors
from api.registry import ResourceType
from apiserver import services
from apiserver.admission import Attributes
from apiserver.codec import decode_body
from apiserver.handlers import dryrun
from apiserver.handlers.apply import update_tracker
from apiserver.handlers.common import check_body_identity, field_validation, json_response, read_body
from apiserver.objectmeta import generate_name, meta
from apiserver.registry.defaults import apply_defaults
from apiserver.registry.validation import validate_create
from apiserver.routing import RequestInfo
from apiserver.strategy import prepare_for_create

if TYPE_CHECKING:
    from apiserver.server import APIServer

_GENERATE_ATTEMPTS = 5


async def create_object(
    server: APIServer, rt: ResourceType, namespace: str | None, obj: dict[str, Any], *, dry_run: bool = False,
    track_fields: Callable[[None, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    obj = check_body_identity(rt, obj, namespace)
    md = meta(obj)
    generated = not md.get("name") and bool(md.get("generateName"))
    for attempt in range(_GENERATE_ATTEMPTS):
        candidate = {**obj, "metadata": dict(md)}
        if generated:
            candidate["metadata"]["name"] = generate_name(md["generateName"])
        try:
            return await _create_once(server, rt, candidate, dry_run, track_fields)
        except errors.StatusError as exc:
            if not (generated and exc.reason == "AlreadyExists" and attempt < _GENERATE_ATTEMPTS - 1):
                raise
    raise AssertionError("unreachable")


async def _create_once(
    server: APIServer, rt: ResourceType, obj: dict[str, Any], dry_run: bool,
    track_fields: Callable[[None, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    prepare_for_create(rt, obj)
    apply_defaults(rt.key, obj)
    md = obj["metadata"]
    if not md.get("name"):  # admission needs a name; report every problem with the object at once
        causes = validate_create(rt.key, obj) or [errors.required("metadata.name", "name or generateName is required")]
        raise errors.invalid(rt.kind, rt.group, "", causes)
    # Kubernetes' order: managedFields (the creator owns what it sent, defaults included, not what
    # admission adds: api/managedfields.py), mutating admission, then validation of the final object.
    if track_fields is not None:
        track_fields(None, obj)
    await server.admission.admit(Attributes("CREATE", rt, md.get("namespace"), md["name"], obj))
    causes = validate_create(rt.key, obj)
    if causes:
        raise errors.invalid(rt.kind, rt.group, md.get("name", ""), causes)
    await server.admission.validate(Attributes("CREATE", rt, md.get("namespace"), md["name"], obj, dry_run=dry_run))
    taken = services.allocate(server, obj, dry_run=dry_run) if rt.key == "services" else []
    try:
        return await server.store(rt).create(obj, dry_run=dry_run)
    except BaseException:
        services.release_taken(server, taken)
        raise


async def handle_create(server: APIServer, request: Request, info: RequestInfo) -> Response:
    if info.namespace is None and info.rt.namespaced:
        raise errors.method_not_allowed()
    dry_run = dryrun.from_query(request, dryrun.CREATE)
    raw = await read_body(request, server.config.max_request_bytes)
    obj = check_body_identity(info.rt, decode_body(raw, request.headers.get("content-type")), info.namespace)
    warnings = field_validation(info.rt, obj, request.query_params.get("fieldValidation"))
    created = await create_object(
        server, info.rt, info.namespace, obj, dry_run=dry_run, track_fields=update_tracker(request, info)
    )
    return json_response(created, 201, warnings)
