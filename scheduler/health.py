"""`--port`: /healthz ("ok") and /metrics (Prometheus text) from the scheduler's own event loop."""

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


def serve(port: int, registry: CollectorRegistry, before_scrape: Callable[[], None]) -> asyncio.Task[None]:
    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def metrics(request: Request) -> Response:
        before_scrape()  # refresh gauges that are cheaper to read than to keep current
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    app = Starlette(routes=[Route("/healthz", healthz), Route("/metrics", metrics)])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    # main() owns SIGTERM/SIGINT; uvicorn must not take them over (older and newer uvicorn hooks).
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    return asyncio.create_task(server.serve(), name="scheduler-http")
