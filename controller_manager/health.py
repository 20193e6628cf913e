"""The manager's small HTTP server on --port: /healthz and /metrics."""

from __future__ import annotations

import asyncio
import contextlib

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from controller_manager.metrics import ControllerMetrics


def serve(port: int, metrics: ControllerMetrics) -> asyncio.Task[None]:
    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def render(_: Request) -> Response:
        return Response(metrics.render(), media_type="text/plain; version=0.0.4")

    app = Starlette(routes=[Route("/healthz", healthz), Route("/metrics", render)])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    # The manager owns SIGTERM/SIGINT; uvicorn must not install its own handlers over them.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    return asyncio.create_task(server.serve(), name="healthz")
