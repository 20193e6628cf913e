"""The client side of `pods/portforward`, as kubectl 1.32 speaks it: SPDY/3.1 in a WebSocket.

    GET /api/v1/namespaces/<ns>/pods/<pod>/portforward
    Upgrade: websocket; Sec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io

One SPDY connection (api/spdy_session.py) carries every forwarded connection. For each one
accepted on a local listener ("Handling connection for 8080"), as client-go's PortForwarder does:
an error stream and a data stream with headers `streamtype`, `port` and `requestid` (a counter
from 0); the error stream is half-closed at once (nothing is written to it) and read to its end
in the background; the data stream is copied both ways; when the pod's side is done the data
stream is reset and the error stream's text, if any, is reported as kubectl logs it — after
which kubectl closes the whole connection and exits with "error: lost connection to pod".
A refused upgrade is retried as kubectl's SPDY fallback (a POST) and that answer reported.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any

from api.errors import StatusError
from api.spdy_session import TUNNEL_PROTOCOL, Session, Stream, StreamError, splice
from api.websocket_compat import lenient_client
from client.rest import resource_path
from kubectl.cli import CmdError
from kubectl.cli import Session as CliSession

PROTOCOL = TUNNEL_PROTOCOL
LOST = "lost connection to pod"


@dataclass
class ForwardedPort:
    local: int
    remote: int


def klog_error(message: str) -> None:
    """An error line as client-go's runtime.HandleError prints it through klog."""
    now = time.time()
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
    sys.stderr.write(f'E{stamp} {os.getpid():>7} portforward.go:424] "Unhandled Error" err={json.dumps(message)}\n')
    sys.stderr.flush()


def listen_addresses(addresses: list[str]) -> list[tuple[str, str]]:
    """(host to bind, host as printed): `localhost` is 127.0.0.1 and ::1, as kubectl binds it."""
    out: list[tuple[str, str]] = []
    for address in addresses:
        if address == "localhost":
            out += [("127.0.0.1", "127.0.0.1"), ("::1", "[::1]")]
        else:
            out.append((address, f"[{address}]" if ":" in address else address))
    return out


class PortForwarder:
    def __init__(self, s: CliSession, pod: str, ports: list[ForwardedPort], addresses: list[str]) -> None:
        self.s = s
        self.pod = pod
        self.ports = ports
        self.addresses = addresses
        self.session: Session | None = None
        self.conn: Any = None
        self.request_id = 0
        self.lost = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()

    async def dial(self) -> None:
        import websockets

        client = self.s.client
        path = resource_path("pods", self.s.namespace, self.pod, "portforward")
        base = client.base_url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
        extra, connection = lenient_client([PROTOCOL])
        headers = {k: v for k, v in client._headers.items() if k.lower() != "accept"}
        try:
            self.conn = await websockets.connect(
                base + path, additional_headers={**headers, **extra}, create_connection=connection,
                ssl=client.ssl_context, max_size=None, compression=None, proxy=None, ping_interval=None,
                user_agent_header=None,
                close_timeout=1,  # kubectl does not linger for the closing handshake when it gives up
            )  # fmt: skip
        except websockets.InvalidStatus:
            try:  # kubectl's SPDY fallback: the API server answers it (and serves no SPDY)
                await client.raw("POST", path)
            except StatusError as exc:
                raise CmdError(f"error upgrading connection: {exc.message}") from None
            raise CmdError("error upgrading connection: unable to upgrade streaming request") from None
        except OSError as exc:
            raise CmdError(f"error upgrading connection: {exc}") from None
        if self.conn.subprotocol != PROTOCOL:
            await self.conn.close()
            raise CmdError(f'unable to negotiate protocol: client supports "portforward.k8s.io", server returned '
                           f'"{self.conn.subprotocol or ""}"')  # fmt: skip

    async def run(self) -> int:
        await self.dial()
        self.session = Session(self.conn.send, client=True, validate=_refuse_streams)
        reader = asyncio.create_task(self._read())
        servers = []
        try:
            await self.session.start()
            for port in self.ports:
                servers += await self._listen(port)
            if not servers:
                raise CmdError(f"unable to listen on any of the requested ports: {self._ports_repr()}")
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signal.SIGINT, stop.set)
            waiters = [asyncio.create_task(stop.wait()), asyncio.create_task(self.lost.wait())]
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            for waiter in waiters:
                waiter.cancel()
            if self.lost.is_set() and not stop.is_set():
                raise CmdError(LOST)
            return 0
        finally:
            for server in servers:
                server.close()
            for task in [reader, *self.tasks]:
                task.cancel()
            await asyncio.gather(reader, *self.tasks, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self.conn.close()

    def _ports_repr(self) -> str:
        return "[" + " ".join(f"{{{p.local} {p.remote}}}" for p in self.ports) + "]"

    async def _read(self) -> None:
        assert self.session is not None
        try:
            async for message in self.conn:
                await self.session.feed(message if isinstance(message, bytes) else message.encode())
        except Exception:  # noqa: BLE001 - whatever ends the connection, it is lost
            pass
        finally:
            self.session.connection_lost()
            self.lost.set()

    async def _listen(self, port: ForwardedPort) -> list[asyncio.Server]:
        servers, failures = [], []
        for host, shown in listen_addresses(self.addresses):
            try:
                server = await asyncio.start_server(lambda r, w, p=port: self._spawn(self._handle(r, w, p)),
                                                    host, port.local, reuse_address=True)  # fmt: skip
            except OSError as exc:
                failures.append(f"unable to create listener: Error listen tcp {shown}:{port.local}: {exc.strerror}")
                continue
            port.local = server.sockets[0].getsockname()[1]  # port 0: the same random port for every address
            servers.append(server)
            print(f"Forwarding from {shown}:{port.local} -> {port.remote}", flush=True)
        if not servers:
            sys.stderr.write(f"Unable to listen on port {port.local}: Listeners failed to create with the following "
                             f"errors: [{' '.join(failures)}]\n")  # fmt: skip
        return servers

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: ForwardedPort) -> None:
        assert self.session is not None
        print(f"Handling connection for {port.local}", flush=True)
        request_id, self.request_id = self.request_id, self.request_id + 1
        headers = [("streamtype", "error"), ("port", str(port.remote)), ("requestid", str(request_id))]
        message: asyncio.Task[bytes] | None = None
        error = data = None
        try:
            try:
                error = await self.session.open_stream(headers)
            except StreamError as exc:
                klog_error(f"error creating error stream for port {port.local} -> {port.remote}: {exc}")
                return
            await error.close()  # we're not writing to this stream
            message = asyncio.create_task(error.read_all())
            try:
                data = await self.session.open_stream([("streamtype", "data"), *headers[1:]])
            except StreamError as exc:
                klog_error(f"error creating forwarding stream for port {port.local} -> {port.remote}: {exc}")
                return
            await splice(data, reader, writer, until_remote_done=True)
            with contextlib.suppress(StreamError):
                await data.reset()  # discard what is unsent, so the error stream is not held up
            text = (await message).decode(errors="replace")
            if text:
                klog_error(f"an error occurred forwarding {port.local} -> {port.remote}: {text}")
                await self.session.goaway()
                with contextlib.suppress(Exception):
                    await self.conn.close()
        except StreamError:  # the connection is gone (Session.write says so for any transport error)
            pass
        finally:  # also when cancelled (Ctrl-C, lost connection): nothing left running or open
            if message is not None and not message.done():
                message.cancel()
            if message is not None:
                await asyncio.gather(message, return_exceptions=True)
            for stream in (data, error):  # not over: nobody will read them any more
                if stream is not None and not stream.remote_closed:
                    with contextlib.suppress(StreamError):
                        await stream.reset()
            writer.close()


def _refuse_streams(stream: Stream) -> str | None:
    """The server opens no streams to kubectl: one it did would never be read (so it is reset)."""
    return "the client accepts no streams"
