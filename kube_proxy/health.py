"""`--healthz-bind-address` (127.0.0.1:10256): /healthz and /livez as kube-proxy answers them -
a JSON body with `lastUpdated` (the last successful rule sync) and 503 while the rules are
stale, which is what a load balancer's health check of a node reads."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


def serve_health(address: str, port: int, status: Callable[[], tuple[int, str]]) -> asyncio.Task[None]:
    async def healthz(request: Request) -> Response:
        code, body = status()
        return Response(body, status_code=code, media_type="application/json")

    app = Starlette(routes=[Route("/healthz", healthz), Route("/livez", healthz)])
    server = uvicorn.Server(uvicorn.Config(app, host=address, port=port, log_level="warning", lifespan="off"))
    # main() owns SIGTERM/SIGINT; uvicorn must not take them over.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]

    async def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await server.serve()

    return asyncio.get_running_loop().create_task(run())
