"""`--health-port`: /healthz ("ok" while the process serves) and /readyz ("ok" once the Service and
EndpointSlice caches have synced: before that every cluster name would be NXDOMAIN), as CoreDNS's
`health` and `ready` plugins answer on their ports."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route


def serve(address: str, port: int, ready: Callable[[], bool]) -> asyncio.Task[None]:
    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(request: Request) -> Response:
        return PlainTextResponse("ok") if ready() else PlainTextResponse("caches not synced", status_code=503)

    app = Starlette(routes=[Route("/healthz", healthz), Route("/readyz", readyz)])
    server = uvicorn.Server(uvicorn.Config(app, host=address, port=port, log_level="warning", lifespan="off"))
    # main() owns SIGTERM/SIGINT; uvicorn must not take them over.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]

    async def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await server.serve()

    return asyncio.get_running_loop().create_task(run())
