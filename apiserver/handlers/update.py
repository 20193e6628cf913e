"""PUT and PATCH: change an object, optimistically.

Every change is a read-modify-write guarded by the storage revision (see
ResourceStore.guaranteed_update). A PUT that carries `metadata.resourceVersion` — or a PATCH whose
patch sets it — says "only if nobody changed it since I read it": a stale one gets 409 Conflict,
which is how two controllers editing one object never silently overwrite each other.

The same path serves the main resource and its `/status` subresource; strategy.py decides which
half of the object each may touch. `/scale` is a view of `spec.replicas` as an autoscaling/v1
Scale, for `kubectl scale` and autoscalers.

`?dryRun=All` (handlers/dryrun.py) runs all of it and skips the write: the answer is the object as
it would be, at the revision it was read.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fastapi import Request, Response

from api import errors
from api.patch import PatchError, json_patch, merge_patch, strategic_merge_patch
from api.registry import ResourceType
from api.wirejson import clone
from apiserver import codec, services
from apiserver.admission import Attributes
from apiserver.handlers import dryrun
from apiserver.handlers.apply import handle_apply, update_tracker
from apiserver.handlers.common import check_body_identity, field_validation, json_response, read_body
from apiserver.handlers.preconditions import check_put_uid
from apiserver.registry.defaults import apply_defaults, carry_over_service_allocations
from apiserver.registry.validation import validate_update
from apiserver.routing import RequestInfo
from apiserver.strategy import prepare_for_update

if TYPE_CHECKING:
    from apiserver.server import APIServer

NewObject = Callable[[dict[str, Any]], dict[str, Any] | Awaitable[dict[str, Any]]]
TrackFields = Callable[[dict[str, Any] | None, dict[str, Any]], None]


async def update_object(
    server: APIServer,
    rt: ResourceType,
    namespace: str | None,
    name: str,
    make_new: NewObject,
    *,
    subresource: str | None = None,
    precondition_rv: str | None = None,
    dry_run: bool = False,
    track_fields: TrackFields | None = None,
) -> dict[str, Any]:
    """Apply `make_new(old) -> desired` as a guarded update and return the stored result."""

    async def mutate(old: dict[str, Any]) -> dict[str, Any]:
        desired = make_new(clone(old))
        if inspect.isawaitable(desired):
            desired = await desired
        assert isinstance(desired, dict)
        md = desired.setdefault("metadata", {})
        if md.get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({md.get('name')}) does not match the name on the URL ({name})"
            )
        body_rv = md.get("resourceVersion")
        if body_rv and body_rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(rt.key, name)
        md["name"] = name
        if rt.namespaced:
            md["namespace"] = namespace
        desired["apiVersion"], desired["kind"] = rt.api_version, rt.kind
        new = prepare_for_update(rt, desired, old, subresource)
        if rt.key == "services" and subresource is None:
            carry_over_service_allocations(new, old)  # `kubectl replace` sends no clusterIP
        apply_defaults(rt.key, new)
        # Kubernetes' order: managedFields (who changed what, before admission changes anything:
        # api/managedfields.py), mutating admission, then validation of the final object.
        if track_fields is not None:
            track_fields(old, new)
        await server.admission.admit(Attributes("UPDATE", rt, namespace, name, new, old, subresource))
        causes = validate_update(rt.key, new, old)
        if causes:
            raise errors.invalid(rt.kind, rt.group, name, causes)
        await server.admission.validate(Attributes("UPDATE", rt, namespace, name, new, old, subresource, dry_run))
        if rt.key == "services" and subresource is None:
            taken = services.allocate(server, new, old, dry_run=dry_run)
            pending_release.append((old, new, taken))
        return new

    pending_release: list[tuple[dict[str, Any], dict[str, Any], list[tuple[str, Any]]]] = []
    store = server.store(rt)
    try:
        old, new = await store.guaranteed_update(
            namespace, name, mutate, precondition_rv=precondition_rv, dry_run=dry_run
        )
    except BaseException:
        for _, _, taken in pending_release:
            services.release_taken(server, taken)
        raise
    if pending_release:
        # Only the attempt that was written counts; earlier attempts lost a race and give back.
        for _, _, taken in pending_release[:-1]:
            services.release_taken(server, taken)
        if new is not old and not dry_run:
            services.release_unused(server, old, new)
    return await finish_if_deletable(server, rt, new, dry_run)


async def finish_if_deletable(
    server: APIServer, rt: ResourceType, obj: dict[str, Any], dry_run: bool = False
) -> dict[str, Any]:
    """An object being deleted whose last finalizer just went is removed for good."""
    md = obj["metadata"]
    if dry_run:
        return obj
    if md.get("deletionTimestamp") and not md.get("finalizers") and not md.get("deletionGracePeriodSeconds"):
        if rt.key == "namespaces" and (obj.get("spec") or {}).get("finalizers"):
            return obj
        try:
            await server.store(rt).delete(md.get("namespace"), md["name"], int(md["resourceVersion"]))
        except errors.StatusError as exc:
            if exc.code not in (404, 409):
                raise
    return obj


# -- PUT ---------------------------------------------------------------------------------------
async def handle_update(server: APIServer, request: Request, info: RequestInfo) -> Response:
    assert info.name is not None
    dry_run = dryrun.from_query(request, dryrun.UPDATE)
    raw = await read_body(request, server.config.max_request_bytes)
    body = codec.decode_body(raw, request.headers.get("content-type"))
    if info.subresource == "scale":
        return json_response(
            await _update_scale(server, info, lambda _scale: body, dry_run, update_tracker(request, info))
        )
    obj = check_body_identity(info.rt, body, info.namespace)
    warnings = field_validation(info.rt, obj, request.query_params.get("fieldValidation"))
    key = server.store(info.rt).key(info.namespace, info.name)

    def replaced(old: dict[str, Any]) -> dict[str, Any]:
        check_put_uid(info.rt, key, old, obj)
        return obj

    new = await update_object(
        server, info.rt, info.namespace, info.name, replaced, subresource=info.subresource, dry_run=dry_run,
        track_fields=update_tracker(request, info),
    )
    return json_response(new, 200, warnings)


# -- PATCH -------------------------------------------------------------------------------------
def apply_patch(rt: ResourceType, doc: dict[str, Any], patch: Any, content_type: str | None) -> dict[str, Any]:
    mt = codec.media_type(content_type)
    try:
        if mt == codec.JSON_PATCH:
            if not isinstance(patch, list):
                raise errors.bad_request("a JSON patch must be a list of operations")
            return json_patch(doc, patch)
        if not isinstance(patch, dict):
            raise errors.bad_request("a merge patch must be a JSON object")
        if mt == codec.MERGE_PATCH:
            return merge_patch(doc, patch)
        if mt == codec.STRATEGIC_PATCH:
            return strategic_merge_patch(doc, patch, rt.key)
    except PatchError as exc:
        raise (errors.invalid_patch(str(exc)) if exc.code == 422 else errors.bad_request(str(exc))) from None
    if mt == codec.APPLY_PATCH:
        raise errors.unsupported_media_type(mt, "server-side apply to /scale is not supported; apply the workload")
    raise errors.unsupported_media_type(mt)


async def handle_patch(server: APIServer, request: Request, info: RequestInfo) -> Response:
    assert info.name is not None
    ctype = request.headers.get("content-type")
    mt = codec.media_type(ctype)
    if mt not in codec.PATCH_TYPES:
        raise errors.unsupported_media_type(mt)
    dry_run = dryrun.from_query(request, dryrun.PATCH)
    raw = await read_body(request, server.config.max_request_bytes)
    if mt == codec.APPLY_PATCH and info.subresource != "scale":
        return await handle_apply(server, request, info, raw, dry_run=dry_run)
    if request.query_params.get("force"):
        raise errors.invalid(
            "PatchOptions", "meta.k8s.io", "",
            [errors.field_forbidden("force", "may not be specified for non-apply patch")],
        )
    patch = codec.decode_body(raw, codec.JSON, allow=codec.PATCH_TYPES)
    if info.subresource == "scale":

        def patched_scale(scale: dict[str, Any]) -> dict[str, Any]:
            return apply_patch(info.rt, scale, patch, ctype)

        return json_response(
            await _update_scale(server, info, patched_scale, dry_run, update_tracker(request, info))
        )
    warnings: list[str] = []

    def patched(old: dict[str, Any]) -> dict[str, Any]:
        new = apply_patch(info.rt, old, patch, ctype)
        new = check_body_identity(info.rt, new, info.namespace)
        warnings[:] = field_validation(info.rt, new, request.query_params.get("fieldValidation"))
        return new

    new = await update_object(
        server, info.rt, info.namespace, info.name, patched, subresource=info.subresource, dry_run=dry_run,
        track_fields=update_tracker(request, info),
    )
    return json_response(new, 200, warnings)


# -- /scale ------------------------------------------------------------------------------------
def scale_of(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The autoscaling/v1 Scale view of a workload."""
    from api.labels import from_label_selector, from_set

    md, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    sel = spec.get("selector") or {}
    selector = str(from_set(sel) if rt.key == "replicationcontrollers" else from_label_selector(sel))
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in md},
        "spec": {"replicas": int(spec.get("replicas", 0))},
        "status": {"replicas": int(status.get("replicas", 0)), "selector": selector},
    }


async def get_scale(server: APIServer, info: RequestInfo) -> dict[str, Any]:
    assert info.name is not None
    return scale_of(info.rt, await server.store(info.rt).get(info.namespace, info.name))


async def _update_scale(
    server: APIServer, info: RequestInfo, change: Callable[[dict[str, Any]], Any], dry_run: bool = False,
    track_fields: TrackFields | None = None,
) -> dict[str, Any]:
    assert info.name is not None

    def make_new(old: dict[str, Any]) -> dict[str, Any]:
        scale = change(scale_of(info.rt, old))
        if not isinstance(scale, dict):
            raise errors.bad_request("the body must be an autoscaling/v1 Scale object")
        replicas = (scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or not 0 <= replicas < 2**31:
            raise errors.invalid(
                "Scale",
                "autoscaling",
                info.name or "",
                [errors.invalid_value("spec.replicas", replicas, "must be greater than or equal to 0")],
            )
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(info.rt.key, info.name or "")
        old.setdefault("spec", {})["replicas"] = replicas
        return old

    new = await update_object(
        server, info.rt, info.namespace, info.name, make_new, dry_run=dry_run, track_fields=track_fields
    )
    return scale_of(info.rt, new)
