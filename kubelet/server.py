"""The kubelet's HTTP endpoint (--port, 10250 in Kubernetes): plain HTTP, and HTTPS too when given
--tls-cert-file/--tls-private-key-file.

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

    GET /exec/{namespace}/{pod}/{container}?command=...   WebSocket: run a command in the container
    GET /attach/{namespace}/{pod}/{container}             WebSocket (streaming.py)
    GET /portForward/{namespace}/{pod}[/{uid}]            WebSocket: TCP to the pod's ports (portforward.py)

Who may call what (Kubernetes' kubelet authenticates and authorizes every call; mini-k8s keeps
today's open logs and metrics where no TLS is configured, but never runs a command for a caller it
does not know):
  - exec, attach and portForward need HTTPS with a client certificate verified against --client-ca-file
    (refused with 403 naming the flags when the kubelet has none, 401 when the caller sends none);
    once a --client-ca-file is given, so do /containerLogs, /metrics, /metrics/resource and
    /stats/summary (metrics-server presents its own certificate: --kubelet-certificate-authority);
    /healthz stays open for the readiness checks;
  - the certificate's CN is the user and its O the groups; --authorization-mode Webhook then asks
    the API server with a SubjectAccessReview, with the attributes Kubernetes' kubelet uses: resource
    `nodes`, subresource `metrics` for /metrics…, `stats` for /stats/…, `proxy` for the rest, name =
    the pod's node (the `?node=` one for metrics), verb from the HTTP method (`get` for the logs) —
    except that exec, attach and portForward always need `create`: Kubernetes derives `get` from the
    WebSocket's GET there, which lets a read-only `nodes/proxy` grant run commands (or reach a pod's ports).
One port serves both protocols: the first byte of a connection tells a TLS handshake (0x16) from
an HTTP request, so the readiness checks that speak plain HTTP keep working (and, on a kubelet
without a client CA, the scrapers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from asyncio import sslproto
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import uvicorn
from prometheus_client import CollectorRegistry, Gauge, generate_latest
from starlette.applications import Starlette
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from api.websocket_compat import lenient_server_protocol
from kubelet import portforward, resourcemetrics, streaming
from kubelet.logs import LogError

if TYPE_CHECKING:
    from kubelet.kubelet import Kubelet

TRUE = ("true", "1", "yes")
log = logging.getLogger("kubelet.server")
Scope = dict[str, Any]
Send = Callable[[dict[str, Any]], Awaitable[None]]


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

    async def exec_ws(ws: WebSocket) -> None:
        await streaming.serve(kubelet, ws, "exec")

    async def attach_ws(ws: WebSocket) -> None:
        await streaming.serve(kubelet, ws, "attach")

    async def port_forward_ws(ws: WebSocket) -> None:
        await portforward.serve(kubelet, ws)

    async def port_forward_not_upgraded(request: Request) -> Response:
        p = request.path_params
        refused = portforward.refusal(kubelet, p["namespace"], p["pod"], p.get("uid", ""))
        code, text = refused or (400, "Upgrade request required: this kubelet forwards ports over WebSocket "
                                      f"({portforward.SPDY_TUNNEL}, {', '.join(portforward.CHANNEL_PROTOCOLS)}); "
                                      "SPDY is not served")  # fmt: skip
        return PlainTextResponse(text, status_code=code)

    async def not_upgraded(_: Request) -> Response:
        return PlainTextResponse(
            "Upgrade request required: this kubelet streams exec and attach over WebSocket "
            f"({', '.join(streaming.PROTOCOLS)}); SPDY is not served", status_code=400)  # fmt: skip

    app = Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/metrics", metrics),
            Route("/metrics/resource", metrics_resource),
            Route("/stats/summary", stats_summary),
            Route("/containerLogs/{namespace}/{pod}/{container}", container_logs),
            WebSocketRoute("/exec/{namespace}/{pod}/{container}", exec_ws),
            WebSocketRoute("/attach/{namespace}/{pod}/{container}", attach_ws),
            Route("/exec/{namespace}/{pod}/{container}", not_upgraded, methods=["GET", "POST"]),
            Route("/attach/{namespace}/{pod}/{container}", not_upgraded, methods=["GET", "POST"]),
            WebSocketRoute("/portForward/{namespace}/{pod}", port_forward_ws),
            WebSocketRoute("/portForward/{namespace}/{pod}/{uid}", port_forward_ws),
            Route("/portForward/{namespace}/{pod}", port_forward_not_upgraded, methods=["GET", "POST"]),
            Route("/portForward/{namespace}/{pod}/{uid}", port_forward_not_upgraded, methods=["GET", "POST"]),
        ]
    )
    return Guard(kubelet, app)  # type: ignore[return-value]


STREAMING = ("/exec/", "/attach/", "/portForward/")  # always need a verified client certificate


def protected_subresource(path: str) -> str | None:
    """The `nodes/<subresource>` a path needs once the kubelet has a --client-ca-file (Kubernetes'
    kubelet maps its paths the same way); None for what stays open (/healthz)."""
    if path == "/metrics" or path.startswith("/metrics/"):
        return "metrics"
    if path.startswith("/stats/"):
        return "stats"
    if path.startswith(("/containerLogs/", *STREAMING)):
        return "proxy"
    return None
NO_CA = ("this kubelet runs commands only for callers it authenticates: start it with --tls-cert-file, "
         "--tls-private-key-file and --client-ca-file (mini-k8s up --secure does), and give the API server "
         "--kubelet-client-certificate and --kubelet-client-key")  # fmt: skip


class Guard:
    """Authentication and authorization in front of the routes (see the module comment)."""

    def __init__(self, kubelet: Kubelet, app: Starlette) -> None:
        self.kubelet = kubelet
        self.app = app
        self.state = app.state

    async def __call__(self, scope: Scope, receive: Any, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            refusal = await self.check(scope, send)
            if refusal is not None:
                code, text = refusal
                await PlainTextResponse(text, status_code=code)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def check(self, scope: Scope, send: Send) -> tuple[int, str] | None:
        """None to serve the request, else (code, text) to refuse it with."""
        path: str = scope["path"]
        cfg = self.kubelet.config
        streaming_call = path.startswith(STREAMING)
        subresource = protected_subresource(path)
        if not streaming_call and not (cfg.client_ca_file and subresource):
            return None
        if not cfg.client_ca_file:
            return 403, NO_CA
        der = peer_certificate(send)
        if der is None:
            return 401, "Unauthorized"
        user, groups = subject(der)
        if cfg.authorization_mode != "Webhook":
            return None
        # exec/attach/portForward: `create` whatever the method (see the module comment); others: the method's verb
        method = scope.get("method", "GET")
        verb = "create" if streaming_call else {"POST": "create", "PUT": "update", "PATCH": "patch",
                                                 "DELETE": "delete"}.get(method, "get")  # fmt: skip
        node = self._node_of(path, scope, str(subresource))
        attributes = f"user={user}, verb={verb}, resource=nodes, subresource={subresource}"
        try:
            allowed = await self._review(user, groups, verb, node, str(subresource))
        except Exception as exc:  # noqa: BLE001 - no answer is no permission
            log.warning("SubjectAccessReview for %s failed: %s", user, exc)
            return 500, f"Authorization error ({attributes})"
        if not allowed:
            return 403, f"Forbidden ({attributes})"
        return None

    def _node_of(self, path: str, scope: Scope, subresource: str) -> str:
        """The node the call is about (several simulated nodes may share this process): the pod's
        node, or for metrics and stats the one `?node=` names — read as the handlers read it (the
        last value of a repeated parameter), so the node authorized is the node served."""
        if subresource in ("metrics", "stats"):
            asked = QueryParams(scope.get("query_string", b"").decode("latin-1")).get("node")
            return asked if asked in self.kubelet.node_names else self.kubelet.node_names[0]
        parts = path.split("/")
        if len(parts) >= 4:
            pod = self.kubelet.pods.get(f"{parts[2]}/{parts[3]}")
            if pod is not None and (pod.get("spec") or {}).get("nodeName"):
                return str(pod["spec"]["nodeName"])
        return self.kubelet.node_names[0]

    async def _review(self, user: str, groups: list[str], verb: str, node: str, subresource: str) -> bool:
        review = {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": groups, "resourceAttributes": {
                "verb": verb, "version": "v1", "resource": "nodes", "subresource": subresource, "name": node}},
        }  # fmt: skip
        answer = await self.kubelet.client.raw("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                                               body=review)  # fmt: skip
        return bool((answer.get("status") or {}).get("allowed"))


def peer_certificate(send: Send) -> bytes | None:
    """The client's certificate (DER), already verified by the TLS handshake against
    --client-ca-file; None on plain HTTP or when the client sent none. ASGI does not carry it: it is
    read from the connection through uvicorn's protocol object, whose bound `send` this is."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    return ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None


def subject(der: bytes) -> tuple[str, list[str]]:
    """(CN, [O, ...]) of a certificate: the user and groups, as Kubernetes reads them."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    name = x509.load_der_x509_certificate(der).subject
    cn = [str(a.value) for a in name.get_attributes_for_oid(NameOID.COMMON_NAME)]
    return (cn[0] if cn else ""), [str(a.value) for a in name.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


def tls_context(cfg: Any) -> ssl.SSLContext | None:
    if not cfg.tls_cert_file:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cfg.tls_cert_file, cfg.tls_private_key_file)
    if cfg.client_ca_file:
        context.load_verify_locations(cfg.client_ca_file)
        context.verify_mode = ssl.CERT_OPTIONAL  # asked for, verified if sent; the Guard decides
    return context


def either_protocol(context: ssl.SSLContext) -> type[asyncio.Protocol]:
    """A uvicorn protocol class that serves HTTPS or plain HTTP on one port: it waits for the first
    bytes of a connection, then hands the connection to uvicorn's own HTTP protocol, through TLS
    (asyncio's SSLProtocol, fed what was read) when they start a TLS handshake record (0x16)."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class Either(asyncio.Protocol):
        def __init__(self, **kwargs: Any) -> None:
            self.kwargs = kwargs
            self.transport: Any = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport = transport

        def data_received(self, data: bytes) -> None:
            http = AutoHTTPProtocol(**self.kwargs)  # type: ignore[call-arg]
            if data[:1] != b"\x16":
                self.transport.set_protocol(http)
                http.connection_made(self.transport)
                http.data_received(data)
                return
            loop = asyncio.get_running_loop()
            tls = sslproto.SSLProtocol(loop, http, context, None, server_side=True)
            self.transport.set_protocol(tls)
            tls.connection_made(self.transport)
            view = memoryview(data)
            while view:
                buffer = tls.get_buffer(len(view))
                n = min(len(buffer), len(view))
                buffer[:n] = view[:n]
                tls.buffer_updated(n)
                view = view[n:]

        def eof_received(self) -> bool | None:
            return None

        def connection_lost(self, exc: Exception | None) -> None:
            self.transport = None

    return Either


def serve(kubelet: Kubelet, host: str, port: int) -> tuple[uvicorn.Server, asyncio.Task[None]]:
    """Start serving; stop with `server.should_exit = True` and await the task."""
    # An idle connection is closed by the client, not by us: it stays open 120 s, longer than a scraper
    # keeps one (httpx: 5 s; Go's default transport: 90 s). With uvicorn's default of 5 s, a scraper
    # polling every 5 s (metrics-server under --classroom) would reuse a connection just as we close
    # it, and fail with "Server disconnected without sending a response".
    context = tls_context(kubelet.config)
    extra: dict[str, Any] = {"http": either_protocol(context)} if context is not None else {}
    # ws: port-forward's subprotocol `SPDY/3.1+portforward.k8s.io` is not an RFC token (api/websocket_compat.py)
    config = uvicorn.Config(build_app(kubelet), host=host, port=port, log_level="warning", timeout_keep_alive=120,
                            ws=lenient_server_protocol(), **extra)  # fmt: skip
    server = uvicorn.Server(config)
    # main() owns SIGTERM/SIGINT; uvicorn must not take them over (it would only stop itself).
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    return server, asyncio.create_task(server.serve(), name="kubelet-http")
