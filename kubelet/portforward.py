"""The kubelet's port-forward endpoint: TCP connections to a port of a pod, over WebSocket.

    GET /portForward/{namespace}/{pod}[/{uid}]        (the path and casing of Kubernetes' kubelet)

The API server's pods/portforward relays the client's WebSocket here (apiserver/handlers/streaming.py).
Two protocols, chosen by the subprotocol the client offers, as Kubernetes' kubelet and kube-apiserver do:

  - `SPDY/3.1+portforward.k8s.io` (kubectl 1.31+, KEP-4006): SPDY/3.1 tunneled in the WebSocket
    (api/spdy_session.py). For each local connection kubectl opens two streams whose headers say
    `streamtype` (error | data), `port` and `requestid`; each gets a SYN_REPLY (a stream without a
    valid port or type is reset); when both of a request are there, a connection is made to the
    port and copied both ways on the data stream (FIN = end of one direction: the pod's socket is
    half-closed, and the pod's EOF becomes our FIN). If no connection can be made, the error stream
    carries the message (`error forwarding port 80 to pod <id>, uid : ...`: Kubernetes' words,
    with containerd's reason); the error stream is closed when the request is over.
    Streams nobody will read never hold up the connection (api/spdy_session.py): error streams
    drop what the client sends on them, and a duplicate stream, the streams of a request that
    timed out, and a data stream the client still sends on when its connection is over are reset.
  - the channel protocol (`v4.channel.k8s.io`, `v4.base64.channel.k8s.io`, or none: the
    subprotocols of Kubernetes' kubelet; the official Python client's): `?port=80&port=8080`
    (the API server turns `?ports=80,8080` into that); for the i-th port, channel 2i is data and
    2i+1 errors; the first message on each is the port, 2 bytes little endian; one connection per
    port, and the WebSocket closes when all of them are over. In base64 (text messages), each
    message is the channel as an ASCII digit ('0' + channel), then the payload in base64.

"Inside the pod" is its network namespace: a connection to localhost:<port> there, so a server
bound to 127.0.0.1 in the pod is reachable, as in Kubernetes. The socket is created by a thread
started for it, which enters the pod's namespace (setns is per thread), makes the socket (a
socket stays in the namespace it was made in) and ends: never a pooled thread, which would be
left in the pod's namespace if returning to the host's failed. The host's localhost is used
only for hostNetwork pods and with --pod-network host; a pod whose namespace does not exist
(yet: waiting for its sandbox, or FailedCreatePodSandBox) is refused with the kubelet's
"failed to find sandboxID for pod ...", never forwarded to the node's localhost.
The simulated runtime has no processes to connect to: the upgrade is refused, saying so.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import errno
import logging
import os
import socket
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.responses import PlainTextResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from api import spdy
from api.spdy_session import CHUNK, TUNNEL_PROTOCOL, Session, Stream, StreamError, splice
from kubelet import netns

if TYPE_CHECKING:
    from kubelet.kubelet import Kubelet

log = logging.getLogger("kubelet.portforward")

SPDY_TUNNEL = TUNNEL_PROTOCOL
BINARY, BASE64 = "v4.channel.k8s.io", "v4.base64.channel.k8s.io"
CHANNEL_PROTOCOLS = (BINARY, BASE64)  # and none at all: Kubernetes' kubelet's websocket.go
STREAM_CREATION_TIMEOUT = 30.0  # Kubernetes' kubelet waits as long for the second stream of a request
SIMULATED = ("port-forward is not possible: the simulated runtime runs no processes; "
             "start the cluster with --runtime process")  # fmt: skip


@dataclass
class Target:
    """Where connections go: the pod's network namespace ("" = the host's) and its sandbox id."""

    netns: str
    sandbox: str


def refusal(kubelet: Kubelet, namespace: str, pod: str, uid: str = "") -> tuple[int, str] | None:
    """Why this kubelet will not forward to the pod at all, as (code, text); None if it will."""
    worker = kubelet.workers.get(f"{namespace}/{pod}")
    if worker is None or (uid and worker.uid != uid):
        return 404, "pod does not exist"
    if getattr(kubelet.runtime, "exec_target", None) is None:
        return 400, SIMULATED
    if _netns_of(kubelet, namespace, pod) is None:
        # Kubernetes' kubelet (GetPortForward) for a pod without a sandbox, with its status 500
        return 500, f"failed to find sandboxID for pod {pod}_{namespace}({worker.uid or ''})"
    return None


def _netns_of(kubelet: Kubelet, namespace: str, pod: str) -> str | None:
    """The pod's network namespace: "" for the host's (hostNetwork, --pod-network host), None
    when the pod has none (yet), so that nothing is ever forwarded to the node's localhost instead."""
    worker = kubelet.workers[f"{namespace}/{pod}"]
    if worker.host_network or kubelet.config.pod_network != "bridge":
        return ""
    if worker.netns:
        return str(worker.netns)
    path = netns.netns_path(worker.uid or "")  # a sandbox made by an earlier kubelet process
    return path if worker.uid and os.path.exists(path) else None


def target_of(kubelet: Kubelet, namespace: str, pod: str) -> Target:
    """Where to connect (refusal() said the pod has a network namespace)."""
    path = _netns_of(kubelet, namespace, pod)
    if path is None:
        raise LookupError(f"pod {namespace}/{pod} has no network namespace")
    worker = kubelet.workers[f"{namespace}/{pod}"]
    return Target(path, worker.uid or f"{namespace}_{pod}")


async def serve(kubelet: Kubelet, ws: WebSocket) -> None:
    """/portForward (authentication and authorization are done: server.py)."""
    p = ws.path_params
    namespace, pod = p["namespace"], p["pod"]
    refused = refusal(kubelet, namespace, pod, p.get("uid", ""))
    if refused is not None:
        await deny(ws, *refused)
        return
    target = target_of(kubelet, namespace, pod)
    offered = list(ws.scope.get("subprotocols") or [])
    if SPDY_TUNNEL in offered:
        await ws.accept(subprotocol=SPDY_TUNNEL)
        await SpdyForwarder(ws, target).run()
        return
    chosen = next((x for x in offered if x in CHANNEL_PROTOCOLS), None)
    if offered and chosen is None:  # (Kubernetes' wsstream answers the same 400 in other words)
        await deny(ws, 400, "unable to upgrade: none of the subprotocols offered is supported: "
                            f"{', '.join((SPDY_TUNNEL, *CHANNEL_PROTOCOLS))}")  # fmt: skip
        return
    try:
        ports = parse_ports(ws.query_params.getlist("port"))
    except ValueError as exc:
        await deny(ws, 400, str(exc))
        return
    await ws.accept(subprotocol=chosen)
    await ChannelForwarder(ws, target, ports, base64_codec=chosen == BASE64).run()


async def deny(ws: WebSocket, code: int, message: str) -> None:
    await ws.send_denial_response(PlainTextResponse(message, status_code=code))


def parse_ports(values: list[str]) -> list[int]:
    """The `port` query parameters (each may be a comma-separated list), checked as Kubernetes' NewV4Options."""
    if not values:
        raise ValueError('query parameter "port" is required')
    ports = []
    for value in values:
        if not value:
            raise ValueError('query parameter "port" cannot be empty')
        for piece in value.split(","):
            try:
                port = int(piece)
            except ValueError:
                raise ValueError(f'unable to parse "{value}" as a port: invalid syntax') from None
            if not 0 < port < 65536:
                raise ValueError(f'port "{value}" must be > 0' if port < 1 else f'unable to parse "{value}" as a port')
            ports.append(port)
    return ports


# ------------------------------------------------------------------------------------ connecting


async def _socket_in(path: str, family: int) -> socket.socket:
    """A TCP socket of the network namespace at `path` ("" = the host's, this thread's).

    Made on a thread started for it alone, which ends right after: if returning to the host's
    namespace failed (netns._inside raises), no thread is left behind inside the pod, as a thread
    of a shared pool would be, to run unrelated work there later."""
    if not path:
        return socket.socket(family, socket.SOCK_STREAM)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[socket.socket] = loop.create_future()

    def settle(sock: socket.socket | None, exc: BaseException | None) -> None:
        if done.cancelled():  # our caller is gone (cancelled): nobody will close it
            if sock is not None:
                sock.close()
        elif sock is not None:
            done.set_result(sock)
        else:
            done.set_exception(exc or OSError("no socket"))

    def make() -> None:
        sock = None
        try:
            with netns._inside(path):
                sock = socket.socket(family, socket.SOCK_STREAM)
        except Exception as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            if sock is not None:  # made, but the thread could not return to the host's namespace
                sock.close()
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(settle, None, exc)
            return
        try:
            loop.call_soon_threadsafe(settle, sock, None)
        except RuntimeError:
            sock.close()

    threading.Thread(target=make, name=f"portforward-netns-{os.path.basename(path)}", daemon=True).start()
    return await done


def _go_error(exc: OSError, network: str, address: str) -> str:
    reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
    return f"dial {network} {address}: connect: {reason}"


async def connect(target: Target, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """localhost:<port> in the pod: IPv4, then IPv6, as containerd dials it; OSError with
    containerd's message when neither answers."""
    loop = asyncio.get_running_loop()
    failures = []
    for family, network, host, shown in ((socket.AF_INET, "tcp4", "127.0.0.1", f"127.0.0.1:{port}"),
                                         (socket.AF_INET6, "tcp6", "::1", f"[::1]:{port}")):  # fmt: skip
        try:
            sock = await _socket_in(target.netns, family)
        except OSError as exc:
            failures.append(f"{network}: {exc}")
            continue
        handed = False  # to open_connection, whose transport then owns it
        try:
            sock.setblocking(False)
            try:
                await asyncio.wait_for(loop.sock_connect(sock, (host, port)), 10)
            except TimeoutError:
                failures.append(_go_error(OSError(errno.ETIMEDOUT, ""), network, shown))
                continue
            except OSError as exc:
                failures.append(_go_error(exc, network, shown))
                continue
            handed = True
            return await asyncio.open_connection(sock=sock)
        finally:  # also when cancelled: an open socket of the pod's would keep its namespace alive
            if not handed:
                sock.close()
    where = f"network namespace {target.netns!r}" if target.netns else "the host network namespace"
    where = where.replace("'", '"')
    raise OSError(f"failed to execute portforward in {where}: failed to connect to localhost:{port} inside "
                  f'namespace "{target.sandbox}", IPv4: {failures[0]} IPv6 {failures[-1]} ')  # fmt: skip


def forwarding_error(port: int, target: Target, exc: OSError) -> str:
    """Kubernetes' kubelet's words (the CRI streaming server knows the sandbox, not the uid)."""
    return f"error forwarding port {port} to pod {target.sandbox}, uid : {exc}"


# ----------------------------------------------------------------------------------------- SPDY


@dataclass
class Pair:
    request_id: str
    data: Stream | None = None
    error: Stream | None = None
    created: float = field(default_factory=lambda: asyncio.get_running_loop().time())
    timer: asyncio.TimerHandle | None = None  # STREAM_CREATION_TIMEOUT, cancelled once complete


DISCONNECTED = (StreamError, OSError, WebSocketDisconnect, RuntimeError)


class SpdyForwarder:
    def __init__(self, ws: WebSocket, target: Target) -> None:
        self.ws = ws
        self.target = target
        self.session = Session(self._send, client=False, validate=self._validate)
        self.pairs: dict[str, Pair] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    async def _send(self, data: bytes) -> None:
        await self.ws.send_bytes(data)

    @staticmethod
    def _validate(stream: Stream) -> str | None:
        """httpStreamReceived's checks; a refused stream is reset."""
        port = stream.header("port")
        if not port:
            return '"port" header is required'
        if not port.isdigit() or not 0 < int(port) < 65536:
            return f"unable to parse {port!r} as a port"
        kind = stream.header("streamtype")
        if not kind:
            return '"streamType" header is required'
        if kind not in ("error", "data"):
            return f"invalid stream type {kind!r}"
        return None

    async def run(self) -> None:
        reader = asyncio.create_task(self._read())
        try:
            await self.session.start()
            while (stream := await self.session.incoming.get()) is not None:
                self._add(stream)
        except DISCONNECTED:
            pass
        finally:
            reader.cancel()
            for pair in self.pairs.values():
                if pair.timer is not None:
                    pair.timer.cancel()
            self.pairs.clear()
            for task in list(self.tasks):
                task.cancel()
            await asyncio.gather(reader, *self.tasks, return_exceptions=True)
            self.session.connection_lost()
            with contextlib.suppress(Exception):
                await self.ws.close(1000)

    async def _read(self) -> None:
        try:
            while True:
                message = await self.ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("bytes")
                if data is None:
                    data = (message.get("text") or "").encode()
                await self.session.feed(data)
        except spdy.ProtocolError as exc:
            log.warning("port-forward: %s", exc)
            await self.session.goaway()
        except DISCONNECTED:
            pass
        finally:
            self.session.connection_lost()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _add(self, stream: Stream) -> None:
        request_id = stream.header("requestid")
        kind = stream.header("streamtype")
        if kind == "error":
            stream.discard_input()  # written to, never read (what a client sends on it is dropped)
        if not request_id:  # an old client: Kubernetes derives the id from the stream ids
            request_id = str(stream.id if kind == "error" else stream.id - 2)
        pair = self.pairs.get(request_id)
        if pair is None:
            pair = self.pairs[request_id] = Pair(request_id)
            pair.timer = asyncio.get_running_loop().call_later(STREAM_CREATION_TIMEOUT, self._expire, pair)
        if getattr(pair, kind) is not None:
            message = f"error processing stream for request {request_id}: {kind} stream already assigned"
            if pair.error is not None:
                self._spawn(_write_quietly(pair.error, message))
            self._spawn(_reset_quietly(stream))  # a stream nobody will read must not stay open
            return
        setattr(pair, kind, stream)
        if pair.data is not None and pair.error is not None:
            self.pairs.pop(request_id, None)
            if pair.timer is not None:
                pair.timer.cancel()
            self._spawn(self._forward(pair.data, pair.error))

    def _expire(self, pair: Pair) -> None:
        """The other stream of a request did not come in time (Kubernetes' monitorStreamPair)."""
        if self.pairs.get(pair.request_id) is not pair:
            return
        self.pairs.pop(pair.request_id, None)

        async def give_up() -> None:
            if pair.error is not None:
                await _write_quietly(pair.error, f"timed out waiting for streams (request {pair.request_id})")
                with contextlib.suppress(*DISCONNECTED):
                    await pair.error.close()
            if pair.data is not None:
                await _reset_quietly(pair.data)

        self._spawn(give_up())

    async def _forward(self, data: Stream, error: Stream) -> None:
        port = int(data.header("port"))
        try:
            try:
                reader, writer = await connect(self.target, port)
            except OSError as exc:
                await error.write(forwarding_error(port, self.target, exc).encode())
                return
            try:
                await splice(data, reader, writer)
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
        except StreamError:
            pass
        finally:  # as Kubernetes: the error stream, then the data stream
            with contextlib.suppress(*DISCONNECTED):
                await error.close()
            if data.remote_closed:
                with contextlib.suppress(*DISCONNECTED):
                    await data.close()
            else:  # the client may still be sending: nobody would read it any more
                await _reset_quietly(data)


async def _write_quietly(stream: Stream, message: str) -> None:
    with contextlib.suppress(*DISCONNECTED):
        await stream.write(message.encode())


async def _reset_quietly(stream: Stream) -> None:
    with contextlib.suppress(*DISCONNECTED):
        await stream.reset()


# ------------------------------------------------------------------------------- channel protocol


class ChannelForwarder:
    """One connection per port: channel 2i data, 2i+1 errors (v4.channel.k8s.io; in text
    messages with `base64_codec`: v4.base64.channel.k8s.io)."""

    def __init__(self, ws: WebSocket, target: Target, ports: list[int], *, base64_codec: bool = False) -> None:
        self.ws = ws
        self.target = target
        self.ports = ports
        self.base64 = base64_codec
        self.writers: dict[int, asyncio.StreamWriter] = {}
        self.ready = [asyncio.Event() for _ in ports]
        self.lock = asyncio.Lock()

    async def send(self, channel: int, data: bytes) -> None:
        async with self.lock:
            if self.base64:  # wsstream's base64Codec: '0' + channel, then the payload in base64
                await self.ws.send_text(chr(ord("0") + channel) + base64.b64encode(data).decode())
            else:
                await self.ws.send_bytes(bytes([channel]) + data)

    def decode(self, message: dict[str, Any]) -> tuple[int, bytes] | None:
        """(channel, payload) of a message from the client; None for an empty or undecodable one."""
        if self.base64:
            text = message.get("text")
            if text is None:
                text = (message.get("bytes") or b"").decode("ascii", errors="replace")
            if not text:
                return None
            try:
                return ord(text[0]) - ord("0"), base64.b64decode(text[1:], validate=True)
            except (binascii.Error, ValueError):
                return None  # wsstream logs it and goes on
        raw = message.get("bytes")
        if raw is None:
            raw = (message.get("text") or "").encode()
        return (raw[0], raw[1:]) if raw else None

    async def run(self) -> None:
        try:
            for i, port in enumerate(self.ports):
                head = port.to_bytes(2, "little")
                await self.send(2 * i, head)
                await self.send(2 * i + 1, head)
        except (WebSocketDisconnect, RuntimeError, OSError):
            return
        forwards = [asyncio.create_task(self._forward(i, port)) for i, port in enumerate(self.ports)]

        async def all_over() -> None:
            await asyncio.gather(*forwards, return_exceptions=True)

        reader, over = asyncio.create_task(self._read()), asyncio.create_task(all_over())
        try:
            await asyncio.wait([reader, over], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (reader, over, *forwards):
                task.cancel()
            await asyncio.gather(reader, over, *forwards, return_exceptions=True)
            for writer in self.writers.values():
                writer.close()
            with contextlib.suppress(Exception):
                await self.ws.close(1000)

    async def _read(self) -> None:
        while True:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            decoded = self.decode(message)
            if decoded is None:
                continue
            channel, payload = decoded
            if channel < 0 or channel % 2 or channel // 2 >= len(self.ports):
                continue  # only data channels carry anything from the client
            index = channel // 2
            await self.ready[index].wait()
            writer = self.writers.get(index)
            if writer is not None and payload:
                with contextlib.suppress(OSError):
                    writer.write(payload)
                    await writer.drain()

    async def _forward(self, index: int, port: int) -> None:
        try:
            reader, writer = await connect(self.target, port)
        except OSError as exc:
            self.ready[index].set()
            with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
                await self.send(2 * index + 1, forwarding_error(port, self.target, exc).encode())
            return
        self.writers[index] = writer
        self.ready[index].set()
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            while chunk := await reader.read(CHUNK):
                await self.send(2 * index, chunk)
        writer.close()
        self.writers.pop(index, None)
