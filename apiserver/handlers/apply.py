"""PATCH with `Content-Type: application/apply-patch+yaml`: server-side apply.

    parse   the body is YAML (or JSON) of a partial object; ?fieldManager= is required
    read    the live object; none -> the apply creates it (201), as Kubernetes does
    merge   api/apply.py merges, prunes what the manager stopped applying, finds conflicts
    write   the usual guarded update (admission, validation) or create path

Conflicts answer 409 with one `FieldManagerConflict` cause per field, which kubectl prints with
its advice about --force-conflicts. The merge runs inside the guarded update, so a concurrent
write makes it run again on the newer object instead of overwriting it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import Request, Response

from api import errors
from api.apply import ApplyConflicts, apply
from api.managedfields import manager_name, record_update
from api.timestamps import now_rfc3339
from apiserver import codec
from apiserver.handlers.common import bool_param, check_body_identity, field_validation, json_response
from apiserver.routing import RequestInfo

if TYPE_CHECKING:
    from apiserver.server import APIServer


def _config(info: RequestInfo, raw: bytes) -> dict[str, Any]:
    body = codec.decode_body(raw, codec.YAML_TYPES[0])
    if not isinstance(body, dict):
        raise errors.bad_request("the apply configuration must be a YAML or JSON object")
    if not body.get("apiVersion") or not body.get("kind"):
        raise errors.bad_request("invalid object type: an apply configuration must set apiVersion and kind")
    config = check_body_identity(info.rt, body, info.namespace)
    md = config["metadata"]
    if md.get("name", info.name) != info.name:
        raise errors.bad_request(
            f"the name of the object ({md.get('name')}) does not match the name on the URL ({info.name})"
        )
    md["name"] = info.name
    if md.get("managedFields") is not None:
        raise errors.bad_request("metadata.managedFields must be nil")
    return config


def _applied(info: RequestInfo, config: dict[str, Any], manager: str, force: bool, live: dict[str, Any]) -> dict:
    try:
        return apply(info.rt, live, config, manager, subresource=info.subresource, force=force, now=now_rfc3339())
    except ApplyConflicts as exc:
        raise errors.apply_conflict(exc.conflicts) from None


async def handle_apply(
    server: APIServer, request: Request, info: RequestInfo, raw: bytes, *, dry_run: bool = False
) -> Response:
    """Server-side apply; with `dry_run` (`?dryRun=All`) everything runs and nothing is written."""
    from apiserver.handlers.create import create_object
    from apiserver.handlers.update import update_object

    assert info.name is not None
    manager = request.query_params.get("fieldManager") or ""
    if not manager:
        raise errors.invalid(
            "PatchOptions", "meta.k8s.io", "", [errors.required("fieldManager", "is required for apply patch")]
        )
    force = bool_param(request, "force")
    config = _config(info, raw)
    warnings = field_validation(info.rt, config, request.query_params.get("fieldValidation"))
    for _ in range(3):
        try:
            await server.store(info.rt).get(info.namespace, info.name)
        except errors.NotFoundError:
            if info.subresource:
                raise
            live = {"apiVersion": info.rt.api_version, "kind": info.rt.kind,
                    "metadata": {k: v for k, v in config["metadata"].items() if k in ("name", "namespace")}}
            try:
                created = await create_object(
                    server, info.rt, info.namespace, _applied(info, config, manager, force, live), dry_run=dry_run
                )
            except errors.AlreadyExistsError:
                continue  # someone created it meanwhile: apply to theirs
            return json_response(created, 201, warnings)
        new = await update_object(
            server, info.rt, info.namespace, info.name,
            lambda old: _applied(info, config, manager, force, old), subresource=info.subresource,
            dry_run=dry_run,
        )
        return json_response(new, 200, warnings)
    raise errors.conflict(info.rt.key, info.name)


def update_tracker(
    request: Request, info: RequestInfo, subresource: str | None = None
) -> Callable[[dict[str, Any] | None, dict[str, Any]], None]:
    """The managedFields bookkeeping for a create, PUT or non-apply PATCH by this request's manager."""
    manager = manager_name(request.query_params.get("fieldManager"), request.headers.get("user-agent"))
    rt, sub = info.rt, subresource if subresource is not None else info.subresource

    def track(old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        record_update(rt, old, new, manager, sub, now_rfc3339())

    return track
