"""The kubelet's port-forward pieces that need no cluster (kubelet/portforward.py): the `port`
query of the channel protocol, the connection error in Kubernetes' and containerd's words, which
network namespace a pod's connections go to, and the SPDY forwarder against an in-process client
(a fake WebSocket carrying api/spdy_session.py's client side) to a TCP server on this host."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import socket
import uuid
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from api import spdy
from api.spdy_session import Session, Stream, StreamError
from kubelet import portforward
from kubelet.portforward import SpdyForwarder, Target, connect, forwarding_error, parse_ports, refusal, target_of


def test_ports_are_parsed_as_kubernetes_does() -> None:
    assert parse_ports(["80", "8080,9000"]) == [80, 8080, 9000]
    with pytest.raises(ValueError, match='query parameter "port" is required'):
        parse_ports([])
    with pytest.raises(ValueError, match="cannot be empty"):
        parse_ports([""])
    with pytest.raises(ValueError, match='unable to parse "http" as a port'):
        parse_ports(["http"])
    with pytest.raises(ValueError, match="must be > 0"):
        parse_ports(["0"])


async def test_a_closed_port_gives_containerds_message() -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = Target("", "sandbox-1")
    with pytest.raises(OSError) as info:
        await connect(target, port)
    message = forwarding_error(port, target, info.value)
    assert message.startswith(f"error forwarding port {port} to pod sandbox-1, uid : failed to execute portforward in ")
    assert (f'failed to connect to localhost:{port} inside namespace "sandbox-1", '
            f"IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused IPv6 dial tcp6 [::1]:{port}: ") in message


async def test_a_listening_port_is_reached() -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        reader, writer = await connect(Target("", "x"), port)
        assert await reader.read() == b""
        writer.close()


def _kubelet(*, pod_network: str = "bridge", host_network: bool = False, netns: str = "") -> Any:
    worker = SimpleNamespace(uid=str(uuid.uuid4()), host_network=host_network, netns=netns)
    return SimpleNamespace(workers={"default/web": worker}, runtime=SimpleNamespace(exec_target=lambda c: None),
                           config=SimpleNamespace(pod_network=pod_network))  # fmt: skip


def test_a_pod_without_its_network_namespace_is_refused_never_sent_to_the_nodes_localhost() -> None:
    """Waiting for its sandbox, or FailedCreatePodSandBox: no namespace, no fallback to the host's."""
    kubelet = _kubelet()
    uid = kubelet.workers["default/web"].uid
    assert refusal(kubelet, "default", "web") == (500, f"failed to find sandboxID for pod web_default({uid})")
    with pytest.raises(LookupError):
        target_of(kubelet, "default", "web")
    assert refusal(kubelet, "default", "other") == (404, "pod does not exist")


def test_the_host_namespace_is_only_for_host_network_pods_and_pod_network_host() -> None:
    for kubelet in (_kubelet(host_network=True), _kubelet(pod_network="host")):
        assert refusal(kubelet, "default", "web") is None
        assert target_of(kubelet, "default", "web").netns == ""
    kubelet = _kubelet(netns="/var/run/netns/mk-x")
    assert refusal(kubelet, "default", "web") is None
    assert target_of(kubelet, "default", "web") == Target("/var/run/netns/mk-x", kubelet.workers["default/web"].uid)


async def test_a_namespace_that_cannot_be_entered_is_a_connection_error() -> None:
    """The socket is made on a thread of its own, in the namespace or not at all (never the host's)."""
    with pytest.raises(OSError, match="failed to connect to localhost:80") as info:
        await connect(Target("/nonexistent/netns/mk-gone", "sandbox-1"), 80)
    assert "tcp4: " in str(info.value) and "No such file" in str(info.value)


class FakeWebSocket:
    """What SpdyForwarder uses of Starlette's WebSocket, wired to a client Session in this process."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.client = Session(self._to_kubelet, client=True)

    async def _to_kubelet(self, data: bytes) -> None:
        self.inbox.put_nowait({"type": "websocket.receive", "bytes": data})

    async def receive(self) -> dict[str, Any]:
        return await self.inbox.get()

    async def send_bytes(self, data: bytes) -> None:
        await self.client.feed(data)

    async def close(self, code: int = 1000) -> None:
        self.client.connection_lost()


@contextlib.asynccontextmanager
async def forwarder() -> AsyncIterator[tuple[Session, SpdyForwarder]]:
    ws = FakeWebSocket()
    fwd = SpdyForwarder(ws, Target("", "sandbox-1"))  # type: ignore[arg-type]
    running = asyncio.create_task(fwd.run())
    try:
        yield ws.client, fwd
    finally:
        ws.inbox.put_nowait({"type": "websocket.disconnect"})
        await asyncio.wait_for(running, 10)


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.close()


def _closed_port() -> int:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _request(client: Session, port: int, request_id: str) -> tuple[Stream, Stream]:
    error = await client.open_stream([("streamtype", "error"), ("port", str(port)), ("requestid", request_id)])
    await error.close()
    data = await client.open_stream([("streamtype", "data"), ("port", str(port)), ("requestid", request_id)])
    return error, data


async def _reset_by_the_kubelet(client: Session, headers: list[tuple[str, str]]) -> int:
    """Open a stream the kubelet answers, then resets: its id (the reset may come before
    open_stream returns, which then says the stream was refused)."""
    sid = client._next_id
    try:
        stream = await client.open_stream(headers)
    except StreamError:
        return sid
    assert await asyncio.wait_for(stream.read_all(), 10) == b"" and stream.reset_status == spdy.CANCEL
    return sid


async def _flood(client: Session, sid: int, megabytes: int = 5) -> None:
    """What kubectl (no flow control) may send on a stream, whatever the kubelet does with it."""
    for _ in range(megabytes * 32):
        await client.write(spdy.DataFrame(sid, b"z" * 32768))


async def _round_trip(data: Stream, payload: bytes) -> bytes:
    await data.write(payload)
    await data.close()
    return await asyncio.wait_for(data.read_all(), 10)


async def test_streams_nobody_reads_do_not_stall_the_connection() -> None:
    """An error stream the client writes to, a data stream the client goes on writing to after its
    connection failed, a duplicate stream: megabytes on each, and the next request still works."""
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, forwarder() as (client, _):
        closed = [("port", str(_closed_port())), ("requestid", "0")]  # nothing listens: an error, then a reset
        error = await client.open_stream([("streamtype", "error"), *closed])
        await error.close()
        sid = await _reset_by_the_kubelet(client, [("streamtype", "data"), *closed])
        assert "error forwarding port" in (await asyncio.wait_for(error.read_all(), 10)).decode()
        await _flood(client, sid)

        error = await client.open_stream([("streamtype", "error"), ("port", str(port)), ("requestid", "1")])
        await _flood(client, error.id)  # the kubelet never reads error streams
        await error.close()
        data = await client.open_stream([("streamtype", "data"), ("port", str(port)), ("requestid", "1")])
        assert await _round_trip(data, b"one") == b"one"

        headers = [("port", str(port)), ("requestid", "2")]
        error = await client.open_stream([("streamtype", "error"), *headers])
        await error.close()
        await _flood(client, await _reset_by_the_kubelet(client, [("streamtype", "error"), *headers]))
        data = await client.open_stream([("streamtype", "data"), *headers])
        assert await _round_trip(data, b"two") == b"two"
        text = (await asyncio.wait_for(error.read_all(), 10)).decode()
        assert text == "error processing stream for request 2: error stream already assigned"

        headers = [("port", str(port)), ("requestid", "4")]
        data = await client.open_stream([("streamtype", "data"), *headers])
        await _flood(client, await _reset_by_the_kubelet(client, [("streamtype", "data"), *headers]))
        error = await client.open_stream([("streamtype", "error"), *headers])
        await error.close()
        assert await _round_trip(data, b"four") == b"four"
        assert await asyncio.wait_for(error.read_all(), 10) == b""  # (no error stream yet to say it on)

        error, data = await _request(client, port, "3")
        assert await _round_trip(data, b"three" * 100_000) == b"three" * 100_000


async def test_a_request_whose_other_stream_never_comes_is_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(portforward, "STREAM_CREATION_TIMEOUT", 0.05)
    async with forwarder() as (client, fwd):
        data = await client.open_stream([("streamtype", "data"), ("port", "80"), ("requestid", "7")])
        assert await asyncio.wait_for(data.read_all(), 10) == b"" and data.reset_status == spdy.CANCEL
        assert fwd.pairs == {}
        error = await client.open_stream([("streamtype", "error"), ("port", "80"), ("requestid", "8")])
        await error.close()
        text = await asyncio.wait_for(error.read_all(), 10)
        assert text == b"timed out waiting for streams (request 8)"


class ChannelSocket:
    """What ChannelForwarder uses of Starlette's WebSocket: messages in, messages out."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.sent: asyncio.Queue[str | bytes] = asyncio.Queue()

    async def receive(self) -> dict[str, Any]:
        return await self.inbox.get()

    async def send_text(self, text: str) -> None:
        self.sent.put_nowait(text)

    async def send_bytes(self, data: bytes) -> None:
        self.sent.put_nowait(data)

    async def close(self, code: int = 1000) -> None:
        pass


async def test_the_base64_channel_protocol_as_kubernetes_wsstream_encodes_it() -> None:
    """v4.base64.channel.k8s.io: text messages, '0' + channel then the payload in base64."""
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        ws = ChannelSocket()
        fwd = portforward.ChannelForwarder(ws, Target("", "x"), [port], base64_codec=True)  # type: ignore[arg-type]
        running = asyncio.create_task(fwd.run())
        head = base64.b64encode(port.to_bytes(2, "little")).decode()
        assert [await asyncio.wait_for(ws.sent.get(), 10) for _ in range(2)] == ["0" + head, "1" + head]
        ws.inbox.put_nowait({"type": "websocket.receive", "text": "0" + base64.b64encode(b"hello").decode()})
        assert await asyncio.wait_for(ws.sent.get(), 10) == "0aGVsbG8="
        ws.inbox.put_nowait({"type": "websocket.disconnect"})
        await asyncio.wait_for(running, 10)
    assert portforward.CHANNEL_PROTOCOLS == ("v4.channel.k8s.io", "v4.base64.channel.k8s.io")
