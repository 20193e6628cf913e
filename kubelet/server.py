"""The kubelet's HTTP endpoint (--port, 10250 in Kubernetes; plain HTTP here).

    GET /healthz                                   "ok"
    GET /metrics                                   Prometheus text (private registry)
    GET /metrics/resource[?node=]                  resource usage for metrics-server (resourcemetrics.py)
    GET /stats/summary[?node=]                     the same as a Summary API document
    GET /containerLogs/{namespace}/{pod}/{container}?follow=&tailLines=&timestamps=&previous=
                                                   &sinceSeconds=&limitBytes=

The API server's `pods/log` subresource proxies to the last one, so `kubectl logs` works: it
finds the node's InternalIP and `status.daemonEndpoints.kubeletEndpoint.Port` and calls us. One
server serves every simulated node of the process: the path names the pod, so it is unambiguous.
The resource usage endpoints are about one node: with several in the process, `?node=` says which.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import uvicorn
from prometheus_client import CollectorRegistry, Gauge, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from kubelet import resourcemetrics
from kubelet.logs import LogError

if TYPE_CHECKING:
    from kubelet.kubelet import Kubelet

TRUE = ("true", "1", "yes")


def _int(request: Request, name: str) -> int | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise LogError(f"invalid {name}: {value!r}") from None


def build_app(kubelet: Kubelet) -> Starlette:
    registry = CollectorRegistry()
    nodes = Gauge("kubelet_node_count", "Simulated nodes in this process", registry=registry)
    pods = Gauge("kubelet_running_pods", "Pods with a pod worker", registry=registry)
    renewals = Gauge("kubelet_node_lease_renewals", "Lease renewals so far", registry=registry)
    statuses = Gauge("kubelet_node_status_updates", "Node status posts so far", registry=registry)
    failures = Gauge("kubelet_heartbeat_failures", "Failed lease renewals and status posts", registry=registry)

    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def metrics(_: Request) -> Response:
        nodes.set(len(kubelet.nodes))
        pods.set(len(kubelet.workers))
        renewals.set(kubelet.heartbeats.lease_renewals)
        statuses.set(kubelet.heartbeats.status_updates)
        failures.set(kubelet.heartbeats.failures)
        return Response(generate_latest(registry), media_type="text/plain; version=0.0.4")

    async def metrics_resource(request: Request) -> Response:
        return await resourcemetrics.metrics_resource(kubelet, request)

    async def stats_summary(request: Request) -> Response:
        return await resourcemetrics.stats_summary(kubelet, request)

    async def container_logs(request: Request) -> Response:
        p = request.path_params
        key = (p["namespace"], p["pod"], p["container"])
        q = request.query_params
        try:
            since = _int(request, "sinceSeconds")
            chunks = await kubelet.logs.read(
                key,
                follow=q.get("follow", "").lower() in TRUE,
                tail_lines=_int(request, "tailLines"),
                timestamps=q.get("timestamps", "").lower() in TRUE,
                previous=q.get("previous", "").lower() in TRUE,
                since_seconds=float(since) if since is not None else None,
                limit_bytes=_int(request, "limitBytes"),
            )
        except LogError as exc:
            if kubelet.pods.get(f"{key[0]}/{key[1]}") is None:
                return PlainTextResponse(f'pod "{key[1]}" not found in namespace "{key[0]}"', status_code=404)
            return PlainTextResponse(str(exc), status_code=400)
        return StreamingResponse(chunks, media_type="text/plain")

    return Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/metrics", metrics),
            Route("/metrics/resource", metrics_resource),
            Route("/stats/summary", stats_summary),
            Route("/containerLogs/{namespace}/{pod}/{container}", container_logs),
        ]
    )


def serve(kubelet: Kubelet, host: str, port: int) -> tuple[uvicorn.Server, asyncio.Task[None]]:
    """Start serving; stop with `server.should_exit = True` and await the task."""
    # An idle connection is closed by the client, not by us: it stays open 120 s, longer than a scraper
    # keeps one (httpx: 5 s; Go's default transport: 90 s). With uvicorn's default of 5 s, a scraper
    # polling every 5 s (metrics-server under --classroom) would reuse a connection just as we close
    # it, and fail with "Server disconnected without sending a response".
    config = uvicorn.Config(build_app(kubelet), host=host, port=port, log_level="warning", timeout_keep_alive=120)
    server = uvicorn.Server(config)
    # main() owns SIGTERM/SIGINT; uvicorn must not take them over (it would only stop itself).
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    return server, asyncio.create_task(server.serve(), name="kubelet-http")
