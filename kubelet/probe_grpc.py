"""The gRPC probe (`grpc: {port, service}`, GA in Kubernetes 1.27), as the kubelet runs it.

Why a module of its own: it is the only probe that needs a protocol library. gRPC runs over
HTTP/2 with protobuf messages, so it is done with the maintained implementations (grpcio, and the
generated health-checking stubs of grpcio-health-checking) rather than by hand, and those cost
about a tenth of a second to import: prober.py imports this module, and this module imports them
(in a thread, so the kubelet's event loop does not stall), only when a pod has a grpc probe. A
kubelet whose pods never use one never loads gRPC.

What it does is what Kubernetes' prober does (pkg/probe/grpc): dial the pod IP and the probe's
port in plaintext (no TLS: credentials are not supported), waiting for the connection to be ready,
then call the standard health checking protocol, `grpc.health.v1.Health/Check` with
`HealthCheckRequest{service}` ("" asks about the server as a whole); dial and call share one
deadline, `timeoutSeconds`. Only SERVING is a success. The failures read as Kubernetes words them:

    timeout: failed to connect service "10.1.2.3:2379" within 1s: context deadline exceeded
    error: this server does not implement the grpc health protocol (grpc.health.v1.Health): <message>
    timeout: health rpc did not complete within 1s
    error: health rpc probe failed: rpc error: code = NotFound desc = unknown service
    service unhealthy (responded with "NOT_SERVING")

(grpc-go keeps redialling a refused port until the deadline, and so does grpcio: nothing
listening is a timeout, as in Kubernetes.) The user agent is kube-probe/<version>, as for httpGet.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Any

from kubelet.config import go_duration

USER_AGENT = "kube-probe/1.32"
_modules: tuple[Any, Any, Any] | None = None


def _load() -> tuple[Any, Any, Any]:
    import grpc
    import grpc.aio
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    return grpc, health_pb2, health_pb2_grpc


async def _grpc() -> tuple[Any, Any, Any]:
    global _modules
    if _modules is None:
        _modules = await asyncio.to_thread(_load)
    return _modules


def join_host_port(host: str, port: int) -> str:
    """Go's net.JoinHostPort: an IPv6 address in brackets."""
    try:
        if isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address):
            return f"[{host}]:{port}"
    except ValueError:
        pass
    return f"{host}:{port}"


def go_code(code: Any) -> str:
    """grpc-go's name of a status code: NOT_FOUND -> NotFound, CANCELLED -> Canceled."""
    if code.name == "CANCELLED":
        return "Canceled"
    if code.name == "OK":
        return "OK"
    return "".join(part.capitalize() for part in code.name.split("_"))


async def probe(host: str, port: int, service: str, timeout: float) -> str | None:
    """None when the server reports SERVING, else the failure's text (Kubernetes')."""
    grpc, health_pb2, health_pb2_grpc = await _grpc()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    addr = join_host_port(host, port)
    within = go_duration(timeout)
    options = [("grpc.primary_user_agent", USER_AGENT), ("grpc.enable_http_proxy", 0)]
    async with grpc.aio.insecure_channel(addr, options=options) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), timeout)
        except TimeoutError:
            return f"timeout: failed to connect service {_quote(addr)} within {within}: context deadline exceeded"
        except Exception as exc:  # noqa: BLE001 - any dial error is the probe's failure, as in Kubernetes
            return f"error: failed to connect service at {_quote(addr)}: {exc}"
        stub = health_pb2_grpc.HealthStub(channel)
        remaining = max(deadline - loop.time(), 0.001)
        try:
            resp = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=remaining)
        except grpc.aio.AioRpcError as err:
            code, message = err.code(), err.details() or ""
            if code == grpc.StatusCode.UNIMPLEMENTED:
                return ("error: this server does not implement the grpc health protocol "
                        f"(grpc.health.v1.Health): {message}")  # fmt: skip
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                return f"timeout: health rpc did not complete within {within}"
            return f"error: health rpc probe failed: rpc error: code = {go_code(code)} desc = {message}"
    if resp.status != health_pb2.HealthCheckResponse.SERVING:
        try:
            name = health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)
        except ValueError:  # a status this version of the protocol does not name
            name = str(resp.status)
        return f"service unhealthy (responded with {_quote(name)})"
    return None


def _quote(text: str) -> str:
    """Go's %q for the plain ASCII an address or a status name is."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
