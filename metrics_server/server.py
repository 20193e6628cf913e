"""The metrics.k8s.io/v1beta1 API, served from the storage and the Node and Pod informers.

    GET /apis, /apis/metrics.k8s.io, /apis/metrics.k8s.io/v1beta1      discovery (discovery.py)
    GET /apis/metrics.k8s.io/v1beta1/nodes[/{name}]                    NodeMetricsList / NodeMetrics
    GET /apis/metrics.k8s.io/v1beta1/pods                              PodMetricsList, all namespaces
    GET /apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods[/{name}]     PodMetricsList / PodMetrics
    GET /healthz, /livez, /readyz                                      "ok" (or 500 with the reason)

The paths are the ones the API server's aggregation layer forwards unchanged. Lists take
`labelSelector` (matched against the Node's or Pod's labels, from the informers) and
`fieldSelector` on metadata.name (and metadata.namespace for pods), and are sorted by name. An
object is listed only when its metrics exist (two points, storage.py); a GET of one without is a
404 `nodemetrics.metrics.k8s.io "x" not found` (`podmetrics...`), as upstream answers. Every error
is a Kubernetes Status.

Plain HTTP on --bind-address:--port: real metrics-server serves HTTPS (4443 or 10250) and checks
the caller; see main.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from api import errors, fields, labels
from client import Informer
from metrics_server import discovery, objects
from metrics_server.storage import Storage

PREFIX = "/apis/metrics.k8s.io/v1beta1"
NODE_FIELDS = ("metadata.name",)
POD_FIELDS = ("metadata.name", "metadata.namespace")


def _status(exc: errors.StatusError) -> Response:
    return JSONResponse(exc.to_status(), status_code=exc.code)


def _filter(request: Request, supported: tuple[str, ...]) -> Callable[[dict[str, Any]], bool]:
    """?labelSelector= and ?fieldSelector= as one test on a Node or Pod (400 when malformed)."""
    try:
        sel = labels.parse(request.query_params.get("labelSelector") or "")
        fsel = fields.parse(request.query_params.get("fieldSelector") or "")
        fsel.check_supported(supported)
    except ValueError as exc:
        raise errors.bad_request(str(exc)) from None
    return lambda o: sel.matches((o.get("metadata") or {}).get("labels") or {}) and fsel.matches_object(o)


def build_app(storage: Storage, nodes: Informer, pods: Informer, health: Callable[[str], str | None]) -> Starlette:
    """`health(check)` answers "livez" or "readyz": None when fine, else why not."""

    def node_item(node: dict[str, Any], typed: bool) -> dict[str, Any] | None:
        usage = storage.node_usage(node["metadata"]["name"])
        return objects.node_metrics(node, usage, typed=typed) if usage is not None else None

    def pod_item(pod: dict[str, Any], typed: bool) -> dict[str, Any] | None:
        md = pod["metadata"]
        found = storage.pod_usage(md.get("namespace") or "", md["name"])
        return objects.pod_metrics(pod, found[0], found[1], typed=typed) if found is not None else None

    async def list_nodes(request: Request) -> Response:
        match = _filter(request, NODE_FIELDS)
        chosen = sorted((n for n in nodes.list() if match(n)), key=lambda n: n["metadata"]["name"])
        items = [i for i in (node_item(n, False) for n in chosen) if i is not None]
        return JSONResponse(objects.metrics_list("NodeMetricsList", items))

    async def get_node(request: Request) -> Response:
        name = request.path_params["name"]
        node = nodes.get(name)
        item = node_item(node, True) if node is not None else None
        if item is None:
            raise errors.not_found("nodemetrics.metrics.k8s.io", name)
        return JSONResponse(item)

    async def list_pods(request: Request) -> Response:
        match = _filter(request, POD_FIELDS)
        namespace = request.path_params.get("namespace")
        chosen = [p for p in pods.list() if (namespace is None or p["metadata"].get("namespace") == namespace)
                  and match(p)]  # fmt: skip
        chosen.sort(key=lambda p: (p["metadata"].get("namespace") or "", p["metadata"]["name"]))
        items = [i for i in (pod_item(p, False) for p in chosen) if i is not None]
        return JSONResponse(objects.metrics_list("PodMetricsList", items))

    async def get_pod(request: Request) -> Response:
        namespace, name = request.path_params["namespace"], request.path_params["name"]
        pod = pods.get(f"{namespace}/{name}")
        item = pod_item(pod, True) if pod is not None else None
        if item is None:
            raise errors.not_found("podmetrics.metrics.k8s.io", name)
        return JSONResponse(item)

    def document(make: Callable[[], dict[str, Any]]) -> Callable[[Request], Any]:
        async def endpoint(_: Request) -> Response:
            return JSONResponse(make())

        return endpoint

    def check(name: str | None) -> Callable[[Request], Any]:
        async def endpoint(_: Request) -> Response:
            problems = [p for p in (health(c) for c in ([name] if name else ["livez", "readyz"])) if p]
            return PlainTextResponse("\n".join(problems), status_code=500) if problems else PlainTextResponse("ok")

        return endpoint

    async def status_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, errors.StatusError)
        return _status(exc)

    async def http_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            return _status(errors.method_not_allowed())
        return _status(errors.not_found_path())

    return Starlette(
        routes=[
            Route("/apis", document(discovery.api_group_list)),
            Route("/apis/metrics.k8s.io", document(discovery.api_group)),
            Route(PREFIX, document(discovery.api_resource_list)),
            Route(PREFIX + "/nodes", list_nodes),
            Route(PREFIX + "/nodes/{name}", get_node),
            Route(PREFIX + "/pods", list_pods),
            Route(PREFIX + "/namespaces/{namespace}/pods", list_pods),
            Route(PREFIX + "/namespaces/{namespace}/pods/{name}", get_pod),
            Route("/healthz", check(None)),
            Route("/livez", check("livez")),
            Route("/readyz", check("readyz")),
        ],
        exception_handlers={errors.StatusError: status_error, HTTPException: http_error},
    )


def serve(app: Starlette, host: str, port: int) -> tuple[uvicorn.Server, asyncio.Task[None]]:
    """Start serving; stop with `server.should_exit = True` and await the task."""
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off"))
    # main() owns SIGTERM/SIGINT; uvicorn must not take them over.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    return server, asyncio.get_running_loop().create_task(server.serve(), name="metrics-server-http")
