"""The REST API's own door into the server, in front of FastAPI.

Requests for the Kubernetes API proper — `/api/v1/...` and `/apis/<group>/<version>/...`, the paths
every component and kubectl use all day — go straight to `app.dispatch`. Everything else (`/docs`,
`/metrics`, `/healthz`, `/version`, the discovery roots `/api`, `/apis`, `/apis/<group>`) goes
through FastAPI as before.

Why a door of our own: through FastAPI, a request passes about eight layers (error middleware,
telemetry, body limit, exception mapping, exit stack, router, route matching, request/response
wrapping) before any of our code runs. Profiled under a kubelet's pod-status writes that was a
quarter of the API server's CPU, and the API handlers need none of it: they read the request
themselves, and every error they raise becomes a `Status` right here — the same body FastAPI's
exception handlers in app.py produce for the paths it still serves.

Every request, whichever way it goes, first passes flow control (flowcontrol.py): it is classified
into a priority level and may wait in a queue for a seat, or be turned away with 429 and a
Retry-After header. A client that hangs up while its answer is being written is not an error of
ours: it is logged at debug level, without a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from api import errors
from apiserver.auth.audit import AuditLog
from apiserver.auth.context import set_current_user
from apiserver.auth.requestinfo import request_attributes
from apiserver.auth.security import Security
from apiserver.auth.user import UNSECURED, UserInfo
from apiserver.flowcontrol import FlowController
from apiserver.flowcontrol_schemas import classify, classify_user, parse
from apiserver.handlers.common import json_response
from apiserver.tls_writes import CoalescingTransport, peer_certificate

log = logging.getLogger("apiserver")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Dispatch = Callable[[Request, str, str, str], Awaitable[Response]]


def api_target(path: str) -> tuple[str, str, str] | None:
    """(group, version, rest of the path) for a path of the REST API proper, else None.

    /api/v1/namespaces/default/pods        -> ("", "v1", "namespaces/default/pods")
    /apis/apps/v1/deployments              -> ("apps", "v1", "deployments")
    /apis/apps, /api, /healthz             -> None (FastAPI serves them)
    """
    if path == "/api/v1" or path.startswith("/api/v1/"):
        return "", "v1", path[len("/api/v1/") :]
    if path.startswith("/apis/"):
        parts = path[len("/apis/") :].split("/", 2)
        if len(parts) >= 2 and parts[0] and parts[1]:
            return parts[0], parts[1], parts[2] if len(parts) == 3 else ""
    return None


class APIFront:
    """An ASGI app: the REST API to `dispatch`, the rest to `app` (the FastAPI application, whose
    `state.server` the handlers read through `request.app`)."""

    def __init__(self, app: ASGIApp, dispatch: Dispatch) -> None:
        self.app = app
        self.dispatch = dispatch

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope[RAW_SEND] = send
        security: Security | None = getattr(getattr(self.app, "state", None), "security", None)
        if security is None or not security.checks_anything:  # plain HTTP only: system:unsecured
            await self._admitted(scope, receive, send)
            return
        await self._secured(security, scope, receive, send)

    async def _secured(self, security: Security, scope: Scope, receive: Receive, send: Send) -> None:
        """Authenticate and authorize (apiserver/auth/), then serve; audit whatever happened."""
        # One pass over the raw headers (their names are lower-case in ASGI): the credential, and
        # whether any are decoded at all — only impersonation and the audit log read the others.
        authorization, impersonating = b"", False
        for key, value in scope["headers"]:
            if key == b"authorization":
                authorization = value
            elif key.startswith(b"impersonate-"):
                impersonating = True
        headers = ([(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
                   if impersonating or security.audit is not None else [])  # fmt: skip
        raw_query = scope.get("query_string", b"")
        query = {k: v[0] for k, v in parse_qs(raw_query.decode("latin-1")).items()} if raw_query else {}
        attrs = request_attributes(scope["method"], scope["path"], query)
        received, code = (AuditLog.now() if security.audit is not None else ""), [0]

        async def recording_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                code[0] = message["status"]
            await send(message)

        out = recording_send if security.audit is not None else send  # only the audit needs the code

        local_port = (scope.get("server") or ("", 0))[1]
        decision, allowed = None, False
        try:
            decision = await security.identify(
                attrs, authorization.decode("latin-1"), headers, local_port, _peer_certificate(send)
            )
            security.authorize(decision)
            allowed = True
        except errors.StatusError as exc:
            await _send_quietly(json_response(exc.to_status(), exc.code), scope, receive, out)
        else:
            set_current_user(decision.user)
            authenticated = None if decision.user is UNSECURED else decision.user
            await self._admitted(scope, receive, out, authenticated, attrs.verb)
        finally:
            if security.audit is not None:
                security.audit.record(received=received, scope=scope, headers=headers, attrs=attrs, code=code[0],
                                      decision=decision, allowed=allowed)  # fmt: skip

    async def _admitted(
        self, scope: Scope, receive: Receive, send: Send, user: UserInfo | None = None, verb: str = ""
    ) -> None:
        """Flow control (flowcontrol.py), then serve. `user`: who the secure port authenticated, by
        whom the request is classified, and `verb` the request's as authorization saw it; on the
        plain port None and "", unused there (flowcontrol_schemas.classify reads the request itself)."""
        release = None
        flow: FlowController | None = getattr(getattr(self.app, "state", None), "flowcontrol", None)
        if flow is not None:
            attrs = parse(
                scope["method"],
                scope["path"],
                scope.get("query_string", b"").decode("latin-1"),
                _header(scope, b"user-agent"),
                (scope.get("client") or ("", 0))[0],
            )
            classified = classify(attrs) if user is None else classify_user(attrs, user.name, user.groups, verb)
            try:
                release = await flow.acquire(classified, attrs)
            except errors.StatusError as exc:
                retry = str(exc.retry_after_seconds or 1)
                response = json_response(exc.to_status(), exc.code)
                response.headers["Retry-After"] = retry
                await _send_quietly(response, scope, receive, send)
                return
        try:
            await self._serve(scope, receive, send)
        finally:
            if release is not None:
                release()

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = api_target(scope["path"])
        if target is None:
            await self.app(scope, receive, send)
            return
        scope["app"] = self.app  # what FastAPI would set: handlers find the server on it
        raw_send = scope.get(RAW_SEND, send)
        scope[ABORT] = lambda: _abort(raw_send)
        try:
            response = await self.dispatch(Request(scope, receive, send), *target)
        except errors.StatusError as exc:
            response = json_response(exc.to_status(), exc.code)
        except ClientDisconnect:  # hung up in the middle of sending its body: nobody to answer
            log.debug("client %s disconnected before its request body was complete", scope.get("client"))
            return
        except Exception as exc:  # a bug: say so in a Status, never an HTML page
            log.exception("internal error")
            err = errors.internal(f"{type(exc).__name__}: {exc}")
            response = json_response(err.to_status(), err.code)
        await _send_quietly(response, scope, receive, send)


ABORT = "mini_k8s.abort"  # scope key: call it to cut the client's connection at once
RAW_SEND = "mini_k8s.send"  # scope key: uvicorn's own `send`, which leads to the connection


def _peer_certificate(send: Send) -> bytes | None:
    """The client's certificate (DER) on a TLS connection, already verified by the handshake
    against --client-ca-file; None on plain HTTP or when the client sent none. ASGI does not carry
    it, so it is read from the connection through uvicorn's request cycle, whose bound `send` this is."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if isinstance(transport, CoalescingTransport):  # the secure port's: read once per connection
        return transport.peer_certificate
    return peer_certificate(transport) if transport is not None else None


def _abort(send: Send) -> None:
    """Close the connection now, dropping whatever is still buffered for it. ASGI has no message
    for that (a watch we drop must end even if the client never reads again), so we reach the
    socket through uvicorn's request cycle, whose bound `send` this is."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is not None:
        transport.abort()


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers") or ():
        if key == name:
            return bytes(value).decode("latin-1")
    return ""


async def _send_quietly(response: Response, scope: Scope, receive: Receive, send: Send) -> None:
    """Write the answer; a client that went away meanwhile is its own business, not a 500."""
    try:
        await response(scope, receive, send)
    except OSError as exc:  # ClientDisconnected is an OSError
        log.debug("client %s went away before its answer was written: %s", scope.get("client"), exc)
