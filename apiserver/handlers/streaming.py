"""pods/exec, pods/attach and pods/portforward: a WebSocket from kubectl, relayed to the pod's kubelet.

    GET /api/v1/namespaces/<ns>/pods/<name>/exec?command=hostname&container=c&stdout=true   (WebSocket)

kubectl 1.32 asks for a WebSocket upgrade (subprotocol `v5.channel.k8s.io`) and falls back to
SPDY (a POST) when the upgrade is refused. What happens here, in kube-apiserver's order:

 1. authentication, then authorization of `get pods/exec` (the WebSocket handshake is a GET) AND
    of `create pods/exec`: a read-only `get` must not run commands (Kubernetes 1.35's
    AuthorizePodWebsocketUpgradeCreatePermission, on by default there; mini-k8s has it always);
 2. the pod (404), the container (400: not in the pod, or none named when it has several), the
    node and its kubelet endpoint (400: no node) — the checks of kube-apiserver's streamLocation;
 3. a WebSocket to the kubelet's /exec (or /attach) with the same query and offered subprotocols
    (kubelet/streaming.py), over HTTPS with --kubelet-client-certificate when it is given;
 4. only then is kubectl's WebSocket accepted, with the subprotocol the kubelet chose, and messages
    are copied both ways until either end closes; the other is closed with it.
An error before the upgrade is a `Status` with its code; a kubelet that refuses becomes a Status too.

pods/portforward is the same relay to the kubelet's /portForward/<ns>/<pod> (kubelet/portforward.py):
kubectl 1.32 tunnels SPDY/3.1 in the WebSocket (subprotocol `SPDY/3.1+portforward.k8s.io`), other
clients speak the channel protocol (`v4.channel.k8s.io`, `v4.base64.channel.k8s.io`) with
`?ports=80,8080`, passed on to the kubelet as `?port=80&port=8080`, as kube-apiserver does. There
is no container to check, only the pod and its node.

The SPDY fallback (POST, or a GET without upgrade) comes through the ordinary dispatch
(authorized there as `create` / `get`): it gets the same checks, then the kubelet's own answer to a
request it will not run (its refusal, or "Upgrade request required"); nothing is run over SPDY.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode

import httpx
import websockets
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from api import errors, registry
from api.websocket_compat import lenient_client
from apiserver.auth.requestinfo import request_attributes
from apiserver.handlers.common import json_response
from apiserver.handlers.subresources import KubeletLocation, kubelet_tls, locate_container

if TYPE_CHECKING:
    from apiserver.routing import RequestInfo
    from apiserver.server import APIServer

log = logging.getLogger("apiserver.streaming")
PATH = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/(exec|attach|portforward)/?$")
FORWARDED = ("command", "stdin", "stdout", "stderr", "tty")
DRAIN_SECONDS = 5.0  # for the kubelet's last messages once it has closed
Scope = dict[str, Any]


class StreamingFront:
    """An ASGI app in front of the API's own (front.py): WebSockets for pods/exec and pods/attach
    are served here, everything else goes on to `front`."""

    def __init__(self, front: Any, fastapi_app: Any) -> None:
        self.front = front
        self.app = fastapi_app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        match = PATH.match(scope.get("path", "")) if scope["type"] == "websocket" else None
        if match is None:
            await self.front(scope, receive, send)
            return
        ws = WebSocket(scope, receive, send)
        namespace, name, action = match.groups()
        try:
            where = await self._admit(scope, send, namespace, name, action)
            kubelet = await self._dial(where, scope, namespace, name, action)
        except errors.StatusError as exc:
            with contextlib.suppress(Exception):
                await ws.send_denial_response(json_response(exc.to_status(), exc.code))
            return
        except Exception as exc:
            log.exception("pods/%s of %s/%s failed", action, namespace, name)
            err = errors.internal(f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                await ws.send_denial_response(json_response(err.to_status(), err.code))
            return
        try:
            await ws.accept(subprotocol=kubelet.subprotocol)
            await relay(ws, kubelet)
        finally:
            await kubelet.close()

    async def _admit(self, scope: Scope, send: Any, namespace: str, name: str, action: str) -> KubeletLocation:
        server: APIServer = self.app.state.server
        security = self.app.state.security
        headers = [(bytes(k).decode("latin-1").lower(), bytes(v).decode("latin-1")) for k, v in scope["headers"]]
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        attrs = request_attributes("GET", scope["path"], query)
        local_port = (scope.get("server") or ("", 0))[1]
        authorization = next((v for k, v in headers if k == "authorization"), "")
        decision = await security.identify(attrs, authorization, headers, local_port, _peer_certificate(send))
        security.authorize(decision)  # get pods/exec: the handshake's own verb
        security.authorizer.authorize(decision.user, replace(attrs, verb="create"))  # and create, always
        if action == "portforward":
            return await locate_pod(server, namespace, name)
        return await locate_container(server, namespace, name, query.get("container"), what=action)

    async def _dial(self, where: KubeletLocation, scope: Scope, namespace: str, name: str,
                    action: str) -> websockets.ClientConnection:  # fmt: skip
        server: APIServer = self.app.state.server
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        base = where.url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
        if action == "portforward":
            url = f"{base}/portForward/{namespace}/{name}?{urlencode(kubelet_ports(query))}"
        else:
            pairs = [(k, v) for k, v in query if k in FORWARDED]
            url = f"{base}/{action}/{namespace}/{name}/{where.container}?{urlencode(pairs)}"
        offered = list(scope.get("subprotocols") or [])
        # port-forward's `SPDY/3.1+portforward.k8s.io` is not an RFC token: offered as a plain header
        headers, connection = lenient_client(offered) if action == "portforward" else ({}, None)
        try:
            return await websockets.connect(
                url, subprotocols=None if headers else offered or None, ssl=kubelet_tls(server.config),  # type: ignore[arg-type]
                max_size=None, compression=None, open_timeout=10, ping_interval=None, proxy=None,
                additional_headers=headers, create_connection=connection,
            )  # fmt: skip
        except websockets.InvalidStatus as exc:
            body = (exc.response.body or b"").decode(errors="replace").strip()
            raise kubelet_refusal(exc.response.status_code, body, where.node) from None
        except (OSError, TimeoutError, websockets.WebSocketException) as exc:
            raise errors.internal(f"error dialing backend: {exc}") from None


async def locate_pod(server: APIServer, namespace: str, name: str) -> KubeletLocation:
    """The pod's kubelet for pods/portforward: the pod (404) and its node (400), as for exec, with
    no container to choose (the first one stands in: the location checks it exists)."""
    pods = registry.by_key("pods")
    assert pods is not None
    pod = await server.store(pods).get(namespace, name)
    containers = ((pod.get("spec") or {}).get("containers") or [{}])
    return await locate_container(server, namespace, name, containers[0].get("name"), what="portforward")


def kubelet_ports(query: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`ports=80,8080` (PodPortForwardOptions) as the kubelet's `port=80&port=8080`; each is
    checked (400 for one that is not a port, as kube-apiserver's conversion refuses it)."""
    out = []
    for key, value in query:
        if key != "ports":
            continue
        for piece in value.split(","):
            if not piece.strip().isdigit() or not 0 < int(piece) < 65536:
                raise errors.bad_request(f"invalid port {piece!r} in ports={value!r}")
            out.append(("port", piece.strip()))
    return out


def kubelet_refusal(code: int, text: str, node: str) -> errors.StatusError:
    """The kubelet's refusal as a Status. Its 401 is about *our* credentials, not the user's: it is
    reported as 403 so kubectl does not ask the user to log in."""
    message = text or f"the kubelet on node {node} answered {code}"
    if code in (401, 403):
        return errors.StatusError.from_status({"code": 403, "reason": "Forbidden", "status": "Failure",
                                               "message": f"kubelet on node {node}: {message}"})  # fmt: skip
    if code == 404:
        return errors.StatusError.from_status({"code": 404, "reason": "NotFound", "status": "Failure",
                                               "message": message})  # fmt: skip
    if code == 400:
        return errors.bad_request(message)
    return errors.internal(message)


async def relay(client: WebSocket, kubelet: websockets.ClientConnection) -> None:
    """Copy messages both ways; when one side closes, close the other."""

    async def upstream() -> None:
        while True:
            message = await client.receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("bytes")
            await kubelet.send(data if data is not None else message.get("text") or "")

    async def downstream() -> None:
        async for message in kubelet:
            if isinstance(message, bytes):
                await client.send_bytes(message)
            else:
                await client.send_text(message)

    up, down = asyncio.create_task(upstream()), asyncio.create_task(downstream())
    tasks = [up, down]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        if up.done() and not up.cancelled() and isinstance(up.exception(), websockets.ConnectionClosed):
            # the kubelet closed while the client was still talking: what it sent before closing
            # (the last output, the Status) is still queued here and must reach the client
            await asyncio.wait([down], timeout=DRAIN_SECONDS)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        code = kubelet.close_code or 1000
        with contextlib.suppress(Exception, WebSocketDisconnect):
            await client.close(code if code in (1000, 1001, 1011) else 1000)
        with contextlib.suppress(Exception):
            await kubelet.close()


async def handle_not_upgraded(server: APIServer, request: Request, info: RequestInfo) -> Response:
    """pods/exec or pods/attach without a WebSocket (kubectl's SPDY fallback): the same checks,
    then the kubelet's answer to a plain request — its refusal of the caller (which kubectl then
    shows), or "Upgrade request required". Nothing runs."""
    assert info.name is not None and info.subresource is not None
    if info.subresource == "portforward":
        return await _port_forward_not_upgraded(server, info)
    where = await locate_container(server, info.namespace or "", info.name, request.query_params.get("container"),
                                   what=info.subresource)  # fmt: skip
    answer = await _plain_get(server, f"{where.url}/{info.subresource}/{info.namespace}/{info.name}/{where.container}")
    raise kubelet_refusal(answer.status_code, answer.text.strip(), where.node)


async def _plain_get(server: APIServer, url: str) -> httpx.Response:
    """The kubelet's answer to a request that was not upgraded (a refusal, or "Upgrade request required")."""
    tls = kubelet_tls(server.config)
    try:
        async with httpx.AsyncClient(timeout=10.0, verify=tls if tls is not None else True) as client:
            return await client.get(url)
    except httpx.HTTPError as exc:
        raise errors.internal(f"error dialing backend: {exc}") from None


async def _port_forward_not_upgraded(server: APIServer, info: RequestInfo) -> Response:
    """kubectl's legacy SPDY port-forward (an `Upgrade: SPDY/3.1` POST): not served. The pod and
    its kubelet are checked first, so a missing pod or a runtime that cannot forward says so."""
    assert info.name is not None
    where = await locate_pod(server, info.namespace or "", info.name)
    answer = await _plain_get(server, f"{where.url}/portForward/{info.namespace}/{info.name}")
    if answer.status_code == 400 and answer.text.startswith("Upgrade request required"):
        raise errors.bad_request("pods/portforward is served over WebSocket only (subprotocols "
                                 "SPDY/3.1+portforward.k8s.io, v4.channel.k8s.io, v4.base64.channel.k8s.io); the "
                                 "legacy SPDY upgrade is not "
                                 "supported by mini-k8s")  # fmt: skip
    raise kubelet_refusal(answer.status_code, answer.text.strip(), where.node)


def _peer_certificate(send: Any) -> bytes | None:
    """The client's verified certificate (DER) from uvicorn's connection, as front.py reads it."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    return ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
