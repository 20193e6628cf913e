"""pods/ephemeralcontainers: how `kubectl debug` adds a debugging container to a running pod.

A pod's containers are fixed once it exists; ephemeral containers are the one exception. They
may only be *added* (never changed or removed), through this subresource: GET returns the pod,
PUT or PATCH (kubectl debug sends a strategic merge patch) change `spec.ephemeralContainers`
and nothing else. An ephemeral container has no ports, probes, lifecycle hooks or resources
(it is not part of the pod's service), and a unique name. The kubelet's process runtime runs
them in the pod's namespaces, never restarts them, and reports them in
`status.ephemeralContainerStatuses` (kubelet/podworker.py); `kubectl debug -it` then attaches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import Request, Response

from api import errors
from apiserver import codec
from apiserver.handlers import dryrun
from apiserver.handlers.common import json_response, read_body
from apiserver.handlers.update import apply_patch
from apiserver.registry.defaults.pod import default_container
from apiserver.registry.validation.names import is_dns1123_label
from apiserver.routing import RequestInfo

if TYPE_CHECKING:
    from apiserver.server import APIServer

Obj = dict[str, Any]
_NOT_ALLOWED = ("ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "resources")
PATH = "spec.ephemeralContainers"


def validate_ephemeral_containers(new: list[Any], old: list[Obj], spec: Obj) -> list[errors.FieldError]:
    errs: list[errors.FieldError] = []
    names = {c.get("name") for key in ("containers", "initContainers") for c in spec.get(key) or []}
    targets = {c.get("name") for c in spec.get("containers") or []}
    for i, c in enumerate(new):
        here = f"{PATH}[{i}]"
        if not isinstance(c, dict):
            errs.append(errors.invalid_value(here, c, "must be an object"))
            continue
        name = c.get("name") or ""
        if not name:
            errs.append(errors.required(f"{here}.name", ""))
        elif is_dns1123_label(name):
            errs.append(errors.invalid_value(f"{here}.name", name, ";".join(is_dns1123_label(name))))
        elif name in names:
            errs.append(errors.duplicate(f"{here}.name", name))
        names.add(name)
        if not c.get("image"):
            errs.append(errors.required(f"{here}.image", ""))
        for field in _NOT_ALLOWED:
            if c.get(field):
                errs.append(errors.field_forbidden(f"{here}.{field}", "cannot be set for an Ephemeral Container"))
        target = c.get("targetContainerName")
        if target and target not in targets:
            errs.append(errors.not_found_value(f"{here}.targetContainerName", target))
    by_name = {c.get("name"): c for c in new if isinstance(c, dict)}
    for c in old:
        quoted = f'"{c.get("name")}"'
        if c.get("name") not in by_name:
            errs.append(errors.field_forbidden(PATH, f"existing ephemeral containers {quoted} may not be removed"))
        elif by_name[c.get("name")] != c:
            errs.append(errors.field_forbidden(PATH, f"existing ephemeral containers {quoted} may not be changed"))
    return errs


async def handle_ephemeral_containers(server: APIServer, request: Request, info: RequestInfo) -> Response:
    assert info.name is not None
    store = server.store(info.rt)
    if request.method == "GET":
        return json_response(await store.get(info.namespace, info.name))
    dry_run = dryrun.from_query(request, dryrun.PATCH if request.method == "PATCH" else dryrun.UPDATE)
    ctype = request.headers.get("content-type")
    raw = await read_body(request, server.config.max_request_bytes)
    if request.method == "PATCH":
        if codec.media_type(ctype) not in codec.PATCH_TYPES:
            raise errors.unsupported_media_type(codec.media_type(ctype))
        body = codec.decode_body(raw, codec.JSON, allow=codec.PATCH_TYPES)
    else:
        body = codec.decode_body(raw, ctype)
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be a JSON object describing a Pod")

    def add(pod: Obj) -> Obj:
        wanted = apply_patch(info.rt, pod, body, ctype) if request.method == "PATCH" else body
        rv = (wanted.get("metadata") or {}).get("resourceVersion")
        if request.method == "PUT" and rv and rv != pod["metadata"]["resourceVersion"]:
            raise errors.conflict("pods", info.name or "")
        new = (wanted.get("spec") or {}).get("ephemeralContainers") or []
        for c in new:
            if isinstance(c, dict) and c.get("image"):
                default_container(c)
        spec = pod.setdefault("spec", {})
        causes = validate_ephemeral_containers(new, spec.get("ephemeralContainers") or [], spec)
        if causes:
            raise errors.invalid("Pod", "", info.name or "", causes)
        if new:
            spec["ephemeralContainers"] = new
        return pod

    _, updated = await store.guaranteed_update(info.namespace, info.name, add, dry_run=dry_run)
    return json_response(updated)
