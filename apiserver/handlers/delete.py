"""DELETE: remove an object — at once, gracefully, or once its finalizers are done.

Three things can stand between "delete" and "gone", and all of them are visible on the object:
- finalizers: `metadata.finalizers` lists controllers that must clean up first. The server only
  sets `deletionTimestamp` and answers with the object (200); each controller removes its finalizer when done, and
  the update that removes the last one removes the object (handlers/update.py).
- propagationPolicy: how the garbage collector treats dependents (objects whose ownerReferences
  point here). Background: delete the owner now, the GC deletes dependents later. Foreground: add
  the `foregroundDeletion` finalizer, so the owner stays until its dependents are gone. Orphan: add
  the `orphan` finalizer, and the GC strips the ownerReferences instead of deleting. For a v1
  ReplicationController the API default is still Orphan, kept for backwards compatibility as in
  Kubernetes (kubectl always asks for Background explicitly).
- graceful termination: a pod on a node gets `deletionTimestamp` = now + grace period; its kubelet
  stops the containers and then deletes the pod with grace 0. A pod on no node goes at once.
A dry run (`dryRun: ["All"]` in DeleteOptions or `?dryRun=All`) decides all of the above and
answers as the delete would — the Status, or the object with its deletionTimestamp — writing nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from fastapi import Request, Response

from api import errors
from api.registry import ResourceType
from api.timestamps import now_rfc3339
from apiserver import codec, services
from apiserver.admission import Attributes
from apiserver.handlers import dryrun
from apiserver.handlers.common import bool_param, int_param, json_response, list_predicate, read_body
from apiserver.handlers.preconditions import check_delete
from apiserver.handlers.update import finish_if_deletable
from apiserver.routing import RequestInfo

if TYPE_CHECKING:
    from apiserver.server import APIServer

ORPHAN, FOREGROUND = "orphan", "foregroundDeletion"


async def delete_options(server: APIServer, request: Request) -> dict[str, Any]:
    """DeleteOptions from the body (kubectl sends one) merged with query parameters, type-checked."""
    raw = await read_body(request, server.config.max_request_bytes)
    opts: dict[str, Any] = {}
    if raw.strip():
        body = codec.decode_body(raw, request.headers.get("content-type"))
        if not isinstance(body, dict):
            raise errors.bad_request("DeleteOptions must be a JSON object")
        opts.update(body)
    grace = int_param(request, "gracePeriodSeconds")
    if grace is not None:
        opts["gracePeriodSeconds"] = grace
    if request.query_params.get("propagationPolicy"):
        opts["propagationPolicy"] = request.query_params["propagationPolicy"]
    if request.query_params.get("orphanDependents"):
        opts["orphanDependents"] = bool_param(request, "orphanDependents")
    _check_options(opts)
    dryrun.for_delete(request, opts)
    return opts


def _check_options(opts: dict[str, Any]) -> None:
    grace = opts.get("gracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool) or not 0 <= grace < 2**63):
        raise errors.bad_request(f"gracePeriodSeconds: {grace!r} is not a non-negative 64-bit integer")
    pre = opts.get("preconditions")
    if pre is not None and (not isinstance(pre, dict) or not all(isinstance(v, str | None) for v in pre.values())):
        raise errors.bad_request("preconditions must be an object with string uid and resourceVersion")
    policy = opts.get("propagationPolicy")
    if policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.bad_request(
            f'propagationPolicy: Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan"'
        )
    if not isinstance(opts.get("orphanDependents", False), bool | None):
        raise errors.bad_request("orphanDependents must be a boolean")


def _policy(rt: ResourceType, opts: dict[str, Any]) -> str:
    if opts.get("propagationPolicy"):
        return str(opts["propagationPolicy"])
    if "orphanDependents" in opts:
        return "Orphan" if opts["orphanDependents"] else "Background"
    return "Orphan" if rt.key == "replicationcontrollers" else "Background"


def _grace_seconds(rt: ResourceType, obj: dict[str, Any], opts: dict[str, Any]) -> int:
    if rt.key != "pods":
        return 0
    spec, phase = obj.get("spec") or {}, (obj.get("status") or {}).get("phase")
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0  # nothing is running it: nothing to wait for
    grace = opts.get("gracePeriodSeconds")
    if grace is None:
        grace = spec.get("terminationGracePeriodSeconds", 30)
    return max(int(grace), 0)


def _success_status(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    md = obj["metadata"]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": md["name"], "group": rt.group, "kind": rt.plural, "uid": md.get("uid")},
    }


async def delete_object(
    server: APIServer, rt: ResourceType, namespace: str | None, name: str, opts: dict[str, Any]
) -> tuple[dict[str, Any], bool]:
    """Delete or start deleting; returns (the object as last seen, whether it is gone now).

    `opts["dryRun"]` (already checked by dryrun.for_delete) makes every step a dry run."""
    # The object may change between our read and the delete (a controller writing its status):
    # storage then refuses the guarded delete, and we read again and retry, as Kubernetes' store
    # does. Only the client's own resourceVersion precondition makes such a conflict final.
    pinned = bool((opts.get("preconditions") or {}).get("resourceVersion"))
    for attempt in range(DELETE_ATTEMPTS):
        try:
            return await _delete_once(server, rt, namespace, name, opts)
        except errors.StatusError as exc:
            if exc.reason != "Conflict" or pinned or attempt == DELETE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


# Kubernetes' store retries without limit; a bound keeps a pathological writer from holding a
# request forever, and is far above what a few busy controllers can cause.
DELETE_ATTEMPTS = 50


async def _delete_once(
    server: APIServer, rt: ResourceType, namespace: str | None, name: str, opts: dict[str, Any]
) -> tuple[dict[str, Any], bool]:
    dry_run = bool(opts.get("dryRun"))
    store = server.store(rt)
    obj = await store.get(namespace, name)
    md = obj["metadata"]
    check_delete(rt, store.key(namespace, name), obj, opts.get("preconditions") or {})
    await server.admission.admit(Attributes("DELETE", rt, namespace, name, None, obj))

    policy = _policy(rt, opts)
    grace = _grace_seconds(rt, obj, opts)
    wanted = {ORPHAN} if policy == "Orphan" else {FOREGROUND} if policy == "Foreground" else set()
    ns_finalizers = rt.key == "namespaces" and bool((obj.get("spec") or {}).get("finalizers"))
    if grace == 0 and not md.get("finalizers") and not wanted and not ns_finalizers:
        await store.delete(namespace, name, int(md["resourceVersion"]), dry_run=dry_run)
        if rt.key == "services" and not dry_run:
            services.release_unused(server, obj, None)
        return obj, True
    return await _mark_deleting(server, rt, namespace, name, grace, wanted, dry_run), False


async def _mark_deleting(
    server: APIServer,
    rt: ResourceType,
    namespace: str | None,
    name: str,
    grace: int,
    wanted: set[str],
    dry_run: bool = False,
) -> dict[str, Any]:
    def mark(old: dict[str, Any]) -> dict[str, Any]:
        md = old["metadata"]
        finalizers = list(md.get("finalizers") or [])
        if not md.get("deletionTimestamp"):
            finalizers = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)] + sorted(wanted)
        md["finalizers"] = finalizers or None
        if md["finalizers"] is None:
            del md["finalizers"]
        deadline = datetime.now(UTC) + timedelta(seconds=min(grace, 10**9))  # ~31 years is forever enough
        current = md.get("deletionTimestamp")
        new_ts = deadline.strftime("%Y-%m-%dT%H:%M:%SZ") if grace else now_rfc3339()
        if not current or (rt.key == "pods" and new_ts < current):
            md["deletionTimestamp"] = new_ts
            md["deletionGracePeriodSeconds"] = grace
        if rt.key == "namespaces":
            old.setdefault("status", {})["phase"] = "Terminating"
        return old

    return await _raw_update(server, rt, namespace, name, mark, dry_run)


async def _raw_update(
    server: APIServer, rt: ResourceType, namespace: str | None, name: str, change: Any, dry_run: bool = False
) -> dict[str, Any]:
    """Metadata-only bookkeeping that must bypass the user-facing update rules."""
    _, new = await server.store(rt).guaranteed_update(namespace, name, change, dry_run=dry_run)
    return await finish_if_deletable(server, rt, new, dry_run)


async def handle_delete(server: APIServer, request: Request, info: RequestInfo) -> Response:
    assert info.name is not None
    opts = await delete_options(server, request)
    obj, gone = await delete_object(server, info.rt, info.namespace, info.name, opts)
    if gone and info.rt.key not in ("pods", "namespaces"):
        return json_response(_success_status(info.rt, obj), 200)
    # Not gone yet (finalizers, a grace period): the object as it is now, with its deletionTimestamp.
    # Kubernetes answers 202 only when the client asked `orphanDependents: false` (kept as it was
    # for older clients); every other pending deletion is a 200.
    pending = not gone and opts.get("orphanDependents") is False
    return json_response(obj, 202 if pending else 200)


async def handle_deletecollection(server: APIServer, request: Request, info: RequestInfo) -> Response:
    opts = await delete_options(server, request)
    keep = list_predicate(info.rt, request.query_params.get("labelSelector"), request.query_params.get("fieldSelector"))
    page = await server.store(info.rt).list(info.namespace, keep=keep)
    deleted = []
    for item in page.items:
        md = item["metadata"]
        try:
            obj, _ = await delete_object(server, info.rt, md.get("namespace"), md["name"], opts)
            deleted.append(obj)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
    body = {
        "kind": info.rt.list_kind,
        "apiVersion": info.rt.api_version,
        "metadata": {"resourceVersion": str(page.resource_version)},
        "items": deleted,
    }
    return json_response(body, 200)

