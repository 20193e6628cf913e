"""The application: routes, dispatch by verb, and one error path that always speaks Status.

Routing is deliberately not one FastAPI route per resource (that would be ~150 routes generated
from the registry). Instead `/api/v1/...` and `/apis/<group>/<version>/...` go through one
dispatcher that resolves the path against the kind registry (routing.py) and picks the handler from
the HTTP method and the shape of the path — the same job kube-apiserver's RequestInfo + handler
chain does. Those requests enter through front.py, ahead of FastAPI; FastAPI serves the rest
(/docs, /metrics, health, discovery roots).

Every error becomes a `Status` body with the right code, including paths nobody registered, bodies
that are too large, and a storage backend that is down; an unexpected exception becomes a 500
InternalError Status (and is logged), never an HTML page.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from api import errors, registry
from api.duration import parse_duration
from apiserver import hpa_v1, storage
from apiserver.aggregator import proxy as aggregator_proxy
from apiserver.aggregator import table as aggregator_table
from apiserver.auth import reviews
from apiserver.auth.bootstrap import ensure_bootstrap_policy
from apiserver.auth.security import Security
from apiserver.auth.tokenrequest import handle_token_request
from apiserver.config import ServerConfig
from apiserver.flowcontrol import FlowController
from apiserver.front import APIFront
from apiserver.handlers import discovery
from apiserver.handlers.common import bool_param, check_write_options, json_response
from apiserver.handlers.create import handle_create
from apiserver.handlers.delete import handle_delete, handle_deletecollection
from apiserver.handlers.ephemeral import handle_ephemeral_containers
from apiserver.handlers.eviction import handle_eviction
from apiserver.handlers.read import handle_get, handle_list
from apiserver.handlers.streaming import StreamingFront, handle_not_upgraded
from apiserver.handlers.subresources import handle_binding, handle_finalize, handle_log
from apiserver.handlers.update import get_scale, handle_patch, handle_update
from apiserver.handlers.watch import handle_watch
from apiserver.openapi import routes as openapi_routes
from apiserver.routing import RequestInfo, resolve
from apiserver.server import APIServer

log = logging.getLogger("apiserver")


async def open_storage(config: ServerConfig) -> storage.Storage:
    if config.etcd_servers:
        from apiserver.storage.etcd import EtcdStorage

        return await EtcdStorage.connect(
            config.etcd_servers, prefix=config.etcd_prefix, timeout=config.etcd_request_timeout
        )
    from apiserver.storage.sqlite import SQLiteStorage

    sync = "full" if config.sqlite_synchronous == "full" else "normal"
    return await SQLiteStorage.open(  # server.py compacts
        config.data_dir, sync=sync, compact_interval_seconds=None
    )


def create_app(config: ServerConfig) -> StreamingFront:
    """The ASGI application uvicorn serves: the REST API through front.py, the rest through FastAPI,
    the WebSockets of pods/exec and pods/attach through handlers/streaming.py."""
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        server = APIServer(config, await open_storage(config))
        app.state.server = server
        app.state.flowcontrol = FlowController(
            config.max_requests_inflight,
            config.max_mutating_requests_inflight,
            server.metrics.registry,
            count_objects=lambda key: len(server.caches[key].objects) if key in server.caches else 0,
        )
        await server.start()
        app.state.security = Security(config, server)
        server.authorizer = app.state.security.authorizer
        if app.state.security.authorizer.uses_rbac:
            await ensure_bootstrap_policy(server)
        try:
            yield
        finally:
            await server.stop()

    app = FastAPI(
        title="mini-apiserver",
        version="1.32.0-mini",
        lifespan=lifespan,
        openapi_url=None,  # /openapi/v2, /openapi/v3 and /docs are ours: apiserver/openapi/routes.py
        docs_url=None,
        redoc_url=None,
    )
    _install_error_handlers(app)
    _install_routes(app)
    return StreamingFront(APIFront(app, dispatch), app)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.StatusError)
    async def status_error(_: Request, exc: errors.StatusError) -> Response:
        return json_response(exc.to_status(), exc.code)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            err: errors.StatusError = errors.not_found_path()
        elif exc.status_code == 405:
            err = errors.method_not_allowed()
        else:
            err = errors.StatusError.from_status({"code": exc.status_code, "message": str(exc.detail)})
        return json_response(err.to_status(), err.code)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> Response:
        err = errors.bad_request(str(exc))
        return json_response(err.to_status(), err.code)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> Response:
        log.exception("internal error")
        err = errors.internal(f"{type(exc).__name__}: {exc}")
        return json_response(err.to_status(), err.code)


def _verb(method: str, info: RequestInfo, request: Request) -> str:
    if info.subresource:
        return {"GET": "get", "PUT": "update", "PATCH": "patch", "POST": "create"}.get(method, "unknown")
    if info.is_collection:
        if method == "GET":
            return "watch" if bool_param(request, "watch") else "list"
        return {"POST": "create", "DELETE": "deletecollection"}.get(method, "unknown")
    if method == "GET":
        return "watch" if bool_param(request, "watch") else "get"
    return {"PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method, "unknown")


async def dispatch(request: Request, group: str, version: str, path: str) -> Response:
    server: APIServer = request.app.state.server
    api_service = aggregator_table.backend_for(server, group, version)
    if api_service is not None:  # another server's group (metrics.k8s.io): authorized, now proxied
        return await aggregator_proxy.proxy(server, request, api_service)
    segments = [s for s in path.split("/") if s] if path else []
    if not segments:
        if request.method != "GET":
            raise errors.method_not_allowed()
        res = discovery.api_resource_list(group, version)
        if res is None:
            raise errors.not_found_path()
        return res
    if reviews.serves(group, version):  # whoami, can-i: questions, never stored
        return await reviews.handle(server, request, group, segments)
    info = resolve(group, version, segments)
    verb = _verb(request.method, info, request)
    started = time.perf_counter()
    code = 500
    try:
        if registry.is_converted(info.rt):  # autoscaling/v1 HPAs: served from the stored v2 objects
            work = hpa_v1.handle(server, request, info, verb, _handle)
        else:
            work = _handle(server, request, info, verb)
        response = await _within_timeout(work, request, verb)
        code = response.status_code
        return response
    except errors.StatusError as exc:
        code = exc.code
        raise
    except storage.StorageError as exc:
        code = 503
        raise errors.service_unavailable(f"storage is unavailable: {exc}") from None
    except ClientDisconnect:
        code = 0  # no answer: the client hung up in the middle of its request (front.py)
        raise
    finally:
        resource = info.rt.key
        server.metrics.requests.labels(verb, resource, info.subresource or "", str(code)).inc()
        if verb != "watch":
            server.metrics.latency.labels(verb, resource).observe(time.perf_counter() - started)


async def _within_timeout(work: Awaitable[Response], request: Request, verb: str) -> Response:
    """`?timeout=30s` bounds a request (client-go sends it for `--request-timeout`); past it the
    answer is 504 Timeout, as Kubernetes answers. A write cut off this way may still have been
    stored, as in Kubernetes: read before retrying. Watches end by `timeoutSeconds` instead."""
    raw = request.query_params.get("timeout")
    if raw is None or verb == "watch":
        return await work
    try:
        seconds = parse_duration(raw)
    except ValueError:
        if inspect.iscoroutine(work):
            work.close()
        raise errors.bad_request(f'invalid timeout "{raw}": want a duration such as 30s') from None
    if seconds <= 0:
        return await work
    try:
        return await asyncio.wait_for(work, seconds)
    except TimeoutError:
        raise errors.timeout("request did not complete within requested timeout - context deadline exceeded") from None


async def _handle(server: APIServer, request: Request, info: RequestInfo, verb: str) -> Response:
    sub, method = info.subresource, request.method
    check_write_options(request, verb)  # ?fieldValidation=, before any body is read
    if sub in (None, "status"):
        if sub == "status" and method in ("GET",):
            return await handle_get(server, request, info)
        handler = {
            "list": handle_list,
            "watch": handle_watch,
            "get": handle_get,
            "create": handle_create,
            "update": handle_update,
            "patch": handle_patch,
            "delete": handle_delete,
            "deletecollection": handle_deletecollection,
        }.get(verb)
        if handler is None or (sub == "status" and verb not in ("update", "patch")):
            raise errors.method_not_allowed()
        return await handler(server, request, info)
    if sub == "scale":
        if method == "GET":
            return json_response(await get_scale(server, info))
        if method in ("PUT", "PATCH"):
            return await (handle_update if method == "PUT" else handle_patch)(server, request, info)
    special = {
        ("binding", "POST"): handle_binding,
        ("eviction", "POST"): handle_eviction,
        ("token", "POST"): handle_token_request,
        ("log", "GET"): handle_log,
        ("exec", "GET"): handle_not_upgraded,  # the WebSocket upgrade itself: StreamingFront
        ("exec", "POST"): handle_not_upgraded,
        ("attach", "GET"): handle_not_upgraded,
        ("attach", "POST"): handle_not_upgraded,
        ("portforward", "GET"): handle_not_upgraded,
        ("portforward", "POST"): handle_not_upgraded,
        ("finalize", "PUT"): handle_finalize,
        ("ephemeralcontainers", "GET"): handle_ephemeral_containers,
        ("ephemeralcontainers", "PUT"): handle_ephemeral_containers,
        ("ephemeralcontainers", "PATCH"): handle_ephemeral_containers,
    }.get((sub, method))
    if special is None:
        raise errors.method_not_allowed()
    return await special(server, request, info)


def _install_routes(app: FastAPI) -> None:
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]

    # OpenAPI documents and the docs page (before the catch-all 404 route below).
    openapi_routes.install(app)

    # Discovery roots. Kubernetes answers them with or without a trailing slash (kr8s and the
    # official Python client ask for /version/, /api/ and /apis/).
    @app.get("/version", include_in_schema=False)
    @app.get("/version/", include_in_schema=False)
    async def version() -> Response:
        return discovery.version()

    @app.get("/api", include_in_schema=False)
    @app.get("/api/", include_in_schema=False)
    async def api_versions(request: Request) -> Response:
        cfg: ServerConfig = request.app.state.server.config
        return discovery.api_versions(f"{cfg.advertise_address}:{cfg.advertise_port}")

    @app.get("/apis", include_in_schema=False)
    @app.get("/apis/", include_in_schema=False)
    async def api_groups(request: Request) -> Response:
        return discovery.api_group_list(aggregator_table.remote_groups(request.app.state.server))

    @app.get("/healthz", include_in_schema=False)
    @app.get("/livez", include_in_schema=False)
    async def healthz() -> Response:
        return Response(b"ok", media_type="text/plain")

    @app.get("/readyz", include_in_schema=False)
    async def readyz(request: Request) -> Response:
        server: APIServer = request.app.state.server
        try:
            await server.storage.ping()
        except storage.StorageError as exc:
            return Response(f"[-]storage failed: {exc}\nreadyz check failed\n".encode(), 503, media_type="text/plain")
        return Response(b"ok", media_type="text/plain")

    @app.get("/metrics", include_in_schema=False)
    async def metrics(request: Request) -> Response:
        m = request.app.state.server.metrics
        return Response(m.render(), media_type=m.content_type)

    # The Kubernetes API itself (/api/v1/..., /apis/<group>/<version>/...) never reaches FastAPI:
    # front.py hands it to `dispatch` directly. What is left here is the group document and a 404
    # Status for every other path.
    async def group_doc(request: Request) -> Response:
        remote = aggregator_table.remote_groups(request.app.state.server)
        res = discovery.api_group(request.path_params["group"], remote) if request.method == "GET" else None
        if res is None:
            raise errors.not_found_path()
        return res

    async def unknown(request: Request) -> Response:
        raise errors.not_found_path()

    for path, endpoint in (("/apis/{group}", group_doc), ("/apis/{group}/", group_doc), ("/{path:path}", unknown)):
        app.add_route(path, endpoint, methods=methods, include_in_schema=False)
