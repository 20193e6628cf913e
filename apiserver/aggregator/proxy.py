"""Forward a request for an aggregated group/version to the server that serves it.

By the time a request gets here the front door has authenticated and authorized it (RBAC on
`pods.metrics.k8s.io` like any resource) and flow control has admitted it. The backend is told
who asked in kube-aggregator's request headers (`X-Remote-User`, `X-Remote-Group`); the
client's own credentials are not passed on. The answer streams back unchanged (a watch works),
and a backend that cannot be reached is a 503 Status, as in Kubernetes.
"""

from __future__ import annotations

import base64
import functools
import ssl
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from api import errors
from apiserver.aggregator.endpoints import Unreachable, resolve
from apiserver.auth.context import current_user

if TYPE_CHECKING:
    from apiserver.server import APIServer

# Request headers worth passing on; everything else (Authorization, Impersonate-*, cookies) stays.
_FORWARD = ("accept", "accept-encoding", "content-type", "user-agent")
# Response headers worth passing back (hop-by-hop ones are the server's business).
_RETURN = ("content-type", "content-encoding", "cache-control", "etag", "warning", "retry-after")


@functools.lru_cache(maxsize=32)
def tls_context(ca_bundle: str, insecure: bool) -> ssl.SSLContext:
    if insecure:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    return ssl.create_default_context(cadata=base64.b64decode(ca_bundle).decode())


@functools.lru_cache(maxsize=32)
def _client(https: bool, ca_bundle: str, insecure: bool) -> httpx.AsyncClient:
    """One pooled client per way of reaching backends, kept for the server's life: a client per
    request would cost a new connection and, with httpx, a TLS context built from the CA store
    (about 20 ms each: proxied requests ran at 2 % of a direct call's rate)."""
    verify: ssl.SSLContext | bool = tls_context(ca_bundle, insecure) if https else False
    return httpx.AsyncClient(verify=verify, timeout=httpx.Timeout(30.0, read=None),
                             limits=httpx.Limits(max_connections=None, max_keepalive_connections=64))  # fmt: skip


def _headers(request: Request) -> list[tuple[str, str]]:
    out = [(k, v) for k, v in request.headers.items() if k in _FORWARD]
    user = current_user()
    out.append(("x-remote-user", user.name))
    out += [("x-remote-group", g) for g in user.groups]
    return out


async def proxy(server: APIServer, request: Request, api_service: dict[str, Any]) -> Response:
    try:
        backend = await resolve(server, api_service)
    except Unreachable as exc:
        raise errors.service_unavailable(f"service unavailable: {exc.message}") from None
    url = backend.url + request.url.path
    if request.url.query:
        url += "?" + request.url.query
    body = await request.body()
    client = _client(backend.url.startswith("https:"), backend.ca_bundle, backend.insecure)
    try:
        upstream = await client.send(
            client.build_request(request.method, url, headers=_headers(request), content=body or None), stream=True
        )
    except httpx.HTTPError as exc:
        raise errors.service_unavailable(f"error trying to reach service: {exc or type(exc).__name__}") from None

    async def relay() -> AsyncIterator[bytes]:
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        finally:
            await upstream.aclose()

    headers = {k: v for k, v in upstream.headers.items() if k in _RETURN}
    return StreamingResponse(relay(), status_code=upstream.status_code, headers=headers)
