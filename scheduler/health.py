"""`--port`: /healthz ("ok") and /metrics (Prometheus text) from the scheduler's own event loop, and
with --profiling (the default, as in kube-scheduler) /debug/pprof/goroutine?debug=1|2: every asyncio
task and thread with its stack (api/stackdump.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from api import stackdump


async def pprof_index(request: Request) -> Response:
    return PlainTextResponse("goroutine?debug=1  asyncio tasks and threads, identical stacks folded\n"
                             "goroutine?debug=2  every task and thread with its stack\n")  # fmt: skip


async def pprof_goroutine(request: Request) -> Response:
    debug = request.query_params.get("debug", "")
    if debug not in ("1", "2"):
        return PlainTextResponse("only text profiles are served: use ?debug=1 or ?debug=2\n", status_code=400)
    return PlainTextResponse(stackdump.dump(int(debug)))


def serve(
    port: int, registry: CollectorRegistry, before_scrape: Callable[[], None], *, profiling: bool = True
) -> asyncio.Task[None]:
    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def metrics(request: Request) -> Response:
        before_scrape()  # refresh gauges that are cheaper to read than to keep current
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    routes = [Route("/healthz", healthz), Route("/metrics", metrics)]
    if profiling:
        routes += [Route("/debug/pprof/", pprof_index), Route("/debug/pprof/goroutine", pprof_goroutine)]
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    # main() owns SIGTERM/SIGINT; uvicorn must not take them over.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    return asyncio.create_task(server.serve(), name="scheduler-http")
