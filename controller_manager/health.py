"""The manager's small HTTP server on --address:--port: /healthz, /metrics, and (with
--profiling, the default) /debug/pprof/ — the index and `goroutine?debug=1|2`, which lists every
asyncio task and thread with its stack (api/stackdump.py)."""

from __future__ import annotations

import asyncio
import contextlib

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from api import stackdump
from controller_manager.metrics import ControllerMetrics

PPROF_INDEX = """<html><head><title>/debug/pprof/</title></head><body>
<p>/debug/pprof/ of a Python process: Go's binary profiles do not exist here.</p>
<table><tr><td>{tasks}</td><td><a href="goroutine?debug=1">goroutine</a></td>
<td>asyncio tasks and threads, identical stacks folded (<a href="goroutine?debug=2">full dump</a>)</td></tr>
</table></body></html>
"""


async def pprof_index(_: Request) -> Response:
    return HTMLResponse(PPROF_INDEX.format(tasks=len(asyncio.all_tasks())))


async def pprof_goroutine(request: Request) -> Response:
    debug = request.query_params.get("debug", "")
    if debug not in ("1", "2"):
        return PlainTextResponse(
            "only text profiles are served: use ?debug=1 (folded) or ?debug=2 (every task)\n", status_code=400
        )
    return PlainTextResponse(stackdump.dump(int(debug)))


def profiling_routes() -> list[Route]:
    return [
        Route("/debug/pprof/", pprof_index),
        Route("/debug/pprof/goroutine", pprof_goroutine),
    ]


def serve(address: str, port: int, metrics: ControllerMetrics, *, profiling: bool = True) -> asyncio.Task[None]:
    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def render(_: Request) -> Response:
        return Response(metrics.render(), media_type="text/plain; version=0.0.4")

    routes = [Route("/healthz", healthz), Route("/metrics", render)]
    if profiling:
        routes += profiling_routes()
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, host=address, port=port, log_level="warning"))
    # The manager owns SIGTERM/SIGINT; uvicorn must not install its own handlers over them.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    return asyncio.create_task(server.serve(), name="healthz")
