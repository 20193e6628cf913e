"""A SPDY/3.1 connection over any byte pipe, for asyncio: streams, replies, pings, flow control.

Both ends of mini-k8s' port-forward use it: the kubelet (server: even stream ids, answers each
SYN_STREAM with SYN_REPLY or RST_STREAM) and mini-kubectl (client: odd ids, waits for the reply
as spdystream's CreateStream does). The transport is the caller's: it gives `send` (one call per
encoded frame, e.g. one WebSocket binary message, as client-go's tunneling connection writes
them) and feeds what it receives to `feed`, then calls `connection_lost` at the end.

Flow control: kubectl and Kubernetes' kubelet (spdystream) never send WINDOW_UPDATE and ignore
ours, so a sender that waited for the window would stall after 64 KiB. We announce our own flow
control with a SETTINGS frame (INITIAL_WINDOW_SIZE) at the start, send WINDOW_UPDATE as the
application consumes data, and hold our sends to the peer's window only once the peer has shown
it does the same (SETTINGS with INITIAL_WINDOW_SIZE, or any WINDOW_UPDATE): between two mini-k8s
ends the windows hold, with kubectl nothing stalls. Received data waits in a per-stream buffer;
`feed` pauses (and so stops reading the transport) while one holds more than MAX_BUFFERED: that
is the only back-pressure a peer without flow control gets, so it must only ever wait for a
stream somebody reads. A stream the application will not read is reset (`reset`) or, if it must
stay open for writing, marked with `discard_input`: data for it is dropped (and its window
re-opened), never waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from api import spdy

CHUNK = 32 * 1024  # what client-go's io.Copy writes at a time
MAX_BUFFERED = 4 * 1024 * 1024
# The WebSocket subprotocol of SPDY tunneled in a WebSocket (KEP-4006), both ends of port-forward
TUNNEL_PROTOCOL = "SPDY/3.1+portforward.k8s.io"
Send = Callable[[bytes], Awaitable[None]]


class StreamError(Exception):
    """The stream was refused or reset, or the connection is gone."""


class Stream:
    def __init__(self, session: Session, stream_id: int, headers: spdy.Headers) -> None:
        self.session = session
        self.id = stream_id
        self.headers = headers
        self.send_window = spdy.SendWindow(session.peer_initial_window)
        self.recv_window = spdy.ReceiveWindow(session.initial_window)
        self.replied = asyncio.Event()
        self.reset_status = 0  # RST_STREAM's status, ours or the peer's
        self.remote_closed = False  # the peer sent FIN (or reset, or the connection is gone)
        self.local_closed = False  # we sent FIN
        self.discarding = False  # the application will not read it: data for it is dropped
        self._buffer = bytearray()
        self._changed = asyncio.Event()

    def header(self, name: str) -> str:
        return spdy.header(self.headers, name)

    def _wake(self) -> None:
        self._changed.set()

    async def read(self, limit: int = CHUNK) -> bytes:
        """Up to `limit` bytes; b"" once the peer has finished the stream (FIN, reset, gone)."""
        while not self._buffer and not self.remote_closed:
            self._changed.clear()
            await self._changed.wait()
        data = bytes(self._buffer[:limit])
        del self._buffer[:limit]
        self._wake()
        if not data:
            self.session._forget_if_done(self)
        if data and not self.remote_closed and not self.reset_status:
            delta = self.recv_window.consumed(len(data))
            if delta:
                await self.session.write(spdy.WindowUpdate(self.id, delta))
        return data

    async def read_all(self) -> bytes:
        out = bytearray()
        while data := await self.read():
            out += data
        return bytes(out)

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if self.reset_status or self.local_closed or self.session.closed:
                raise StreamError(f"stream {self.id} is closed")
            if self.session.peer_flow_control:
                n = self.send_window.take(min(len(view), CHUNK))
                if n == 0:
                    self._changed.clear()
                    await self._changed.wait()
                    continue
            else:
                n = min(len(view), CHUNK)
            await self.session.write(spdy.DataFrame(self.id, bytes(view[:n])))
            view = view[n:]

    def discard_input(self) -> None:
        """The application will never read this stream: what arrives for it is dropped, so it
        cannot hold up the connection (see the module comment). Writing and closing still work."""
        self.discarding = True
        self._buffer.clear()
        self._wake()
        self.session._forget_if_done(self)

    async def close(self) -> None:
        """Half-close: FIN (an empty DATA frame), as spdystream's Close does."""
        if self.local_closed or self.reset_status or self.session.closed:
            return
        self.local_closed = True
        await self.session.write(spdy.DataFrame(self.id, b"", fin=True))
        self.session._forget_if_done(self)

    async def reset(self, status: int = spdy.CANCEL) -> None:
        if self.reset_status or self.session.closed:
            return
        self._mark_reset(status)
        await self.session.write(spdy.RstStream(self.id, status))

    def _mark_reset(self, status: int) -> None:
        self.reset_status = status
        self.remote_closed = True
        self._buffer.clear()
        self._wake()
        self.replied.set()
        self.session.streams.pop(self.id, None)

    @property
    def buffered(self) -> int:
        return len(self._buffer)


class Session:
    def __init__(self, send: Send, *, client: bool, validate: Callable[[Stream], str | None] | None = None,
                 initial_window: int = spdy.INITIAL_WINDOW) -> None:  # fmt: skip
        """`validate` (server side): None to accept a new stream, else why it is refused (RST_STREAM)."""
        self._send = send
        self.client = client
        self.validate = validate
        self.initial_window = initial_window
        self.peer_initial_window = spdy.INITIAL_WINDOW
        self.peer_flow_control = False
        self.writer = spdy.FrameWriter()
        self.reader = spdy.FrameReader()
        self.streams: dict[int, Stream] = {}
        self.incoming: asyncio.Queue[Stream | None] = asyncio.Queue()
        self.closed = False
        self.goaway_received = False
        self._next_id = 1 if client else 2
        self._next_ping = 1 if client else 2
        self._pings: dict[int, asyncio.Future[None]] = {}
        self._lock = asyncio.Lock()
        self._last_peer_stream = 0

    async def write(self, frame: spdy.Frame) -> None:
        """Encode and send in one critical section: header blocks share one compression context,
        so they must reach the peer in the order they were compressed. Whatever the transport
        raises (its connection is gone: websockets' ConnectionClosed, Starlette's
        WebSocketDisconnect, OSError, ...) comes out as StreamError."""
        if self.closed:
            raise StreamError("the connection is closed")
        async with self._lock:
            await self._transmit(self.writer.encode(frame))

    async def _transmit(self, data: bytes) -> None:
        try:
            await self._send(data)
        except Exception as exc:  # noqa: BLE001 - any transport's failure: the connection is lost
            raise StreamError(f"the connection is lost: {exc or type(exc).__name__}") from exc

    async def start(self) -> None:
        """Announce our flow control (see the module comment)."""
        await self.write(spdy.Settings({spdy.SETTINGS_INITIAL_WINDOW_SIZE: self.initial_window}))

    async def open_stream(self, headers: spdy.Headers, timeout: float = 30.0) -> Stream:
        """SYN_STREAM, then wait for the SYN_REPLY (StreamError if the peer resets it instead)."""
        if self.goaway_received:
            raise StreamError("the connection is going away")
        if self.closed:
            raise StreamError("the connection is closed")
        async with self._lock:  # ids must go out in increasing order
            stream = Stream(self, self._next_id, headers)
            self._next_id += 2
            self.streams[stream.id] = stream
            try:
                await self._transmit(self.writer.encode(spdy.SynStream(stream.id, headers)))
            except BaseException:
                self.streams.pop(stream.id, None)
                raise
        try:
            await asyncio.wait_for(stream.replied.wait(), timeout)
        except BaseException as exc:  # a timeout, or our caller gave up: the stream is abandoned
            stream._mark_reset(spdy.CANCEL)  # forgotten at once, even if the RST_STREAM cannot be sent
            with contextlib.suppress(Exception):
                await self.write(spdy.RstStream(stream.id, spdy.CANCEL))
            if isinstance(exc, TimeoutError):
                raise StreamError(f"timed out waiting for a reply to stream {stream.id}") from None
            raise
        if stream.reset_status or self.closed:
            raise StreamError(f"stream {stream.id} was refused (status {stream.reset_status})")
        return stream

    async def ping(self, timeout: float = 30.0) -> None:
        pid = self._next_ping
        self._next_ping += 2
        waiter = asyncio.get_running_loop().create_future()
        self._pings[pid] = waiter
        try:
            await self.write(spdy.Ping(pid))
            await asyncio.wait_for(waiter, timeout)
        finally:
            self._pings.pop(pid, None)

    async def goaway(self) -> None:
        with contextlib.suppress(StreamError, OSError):
            await self.write(spdy.GoAway(self._last_peer_stream))

    async def feed(self, data: bytes) -> None:
        """What the transport received (any split). Raises spdy.ProtocolError on garbage."""
        for frame in self.reader.feed(data):
            await self._handle(frame)

    def connection_lost(self) -> None:
        self.closed = True
        for stream in list(self.streams.values()):
            stream.remote_closed = True
            stream.replied.set()
            stream._wake()
        self.streams.clear()
        for waiter in self._pings.values():
            if not waiter.done():
                waiter.set_exception(StreamError("the connection is closed"))
        self.incoming.put_nowait(None)

    def _forget_if_done(self, stream: Stream) -> None:
        if stream.local_closed and stream.remote_closed and not stream.buffered:
            self.streams.pop(stream.id, None)

    async def _handle(self, frame: spdy.Frame) -> None:
        if isinstance(frame, spdy.DataFrame):
            stream = self.streams.get(frame.stream_id)
            if stream is None or stream.remote_closed:
                return  # late data for a stream we reset or forgot: ignored, as spdystream does
            # a stream being read: wait for its reader to catch up (see the module comment)
            while stream.buffered > MAX_BUFFERED and not (stream.reset_status or stream.discarding or self.closed):
                stream._changed.clear()
                await stream._changed.wait()
            if stream.reset_status or self.closed:
                return
            stream.recv_window.received(len(frame.data))
            if stream.discarding:  # nobody reads it: dropped, and the window re-opened as if read
                delta = stream.recv_window.consumed(len(frame.data)) if frame.data else 0
                if delta and not frame.fin:
                    await self.write(spdy.WindowUpdate(stream.id, delta))
            else:
                stream._buffer += frame.data
            if frame.fin:
                stream.remote_closed = True
                self._forget_if_done(stream)
            stream._wake()
        elif isinstance(frame, spdy.SynStream):
            await self._new_stream(frame)
        elif isinstance(frame, spdy.SynReply):
            stream = self.streams.get(frame.stream_id)
            if stream is not None:
                stream.replied.set()
                if frame.fin:
                    stream.remote_closed = True
                    stream._wake()
        elif isinstance(frame, spdy.RstStream):
            stream = self.streams.get(frame.stream_id)
            if stream is not None:
                stream._mark_reset(frame.status)
        elif isinstance(frame, spdy.Settings):
            size = frame.values.get(spdy.SETTINGS_INITIAL_WINDOW_SIZE)
            if size is not None:
                self.peer_flow_control = True
                for stream in self.streams.values():  # SPDY/3: open streams' windows move by the difference
                    stream.send_window.grant(size - self.peer_initial_window)
                    stream._wake()
                self.peer_initial_window = size
        elif isinstance(frame, spdy.WindowUpdate):
            self.peer_flow_control = True
            stream = self.streams.get(frame.stream_id)
            if stream is not None:
                stream.send_window.grant(frame.delta)
                stream._wake()
        elif isinstance(frame, spdy.Ping):
            if frame.id % 2 != self._next_ping % 2:
                await self.write(frame)  # the peer's ping: echoed
            elif (waiter := self._pings.get(frame.id)) is not None and not waiter.done():
                waiter.set_result(None)
        elif isinstance(frame, spdy.GoAway):
            self.goaway_received = True

    async def _new_stream(self, frame: spdy.SynStream) -> None:
        if frame.stream_id % 2 == self._next_id % 2 or frame.stream_id <= self._last_peer_stream:
            await self.write(spdy.RstStream(frame.stream_id, spdy.PROTOCOL_ERROR))
            return
        self._last_peer_stream = frame.stream_id
        stream = Stream(self, frame.stream_id, frame.headers)
        refusal = self.validate(stream) if self.validate is not None else None
        if refusal is not None:
            stream.reset_status = spdy.REFUSED_STREAM
            await self.write(spdy.RstStream(stream.id, spdy.CANCEL))  # what Kubernetes' Reset sends
            return
        self.streams[stream.id] = stream
        stream.replied.set()
        if frame.fin:
            stream.remote_closed = True
        await self.write(spdy.SynReply(stream.id, []))
        self.incoming.put_nowait(stream)


async def splice(stream: Stream, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 until_remote_done: bool = False) -> None:  # fmt: skip
    """Copy a stream and a TCP connection both ways: the stream's data to `writer` (its FIN
    becomes a half-close), what `reader` gives to the stream (its EOF becomes our FIN).

    Returns once both directions are over (the kubelet's side: the pod's connection and the
    client's stream each end on their own), or with `until_remote_done` once the stream's data
    is over (client-go's handleConnection: kubectl's side stops there); and at once when either
    direction fails (a reset stream, a broken socket). The caller closes `writer`."""

    async def inbound() -> None:
        while chunk := await stream.read():
            writer.write(chunk)
            await writer.drain()
        if stream.reset_status:
            raise StreamError(f"stream {stream.id} was reset")
        if writer.can_write_eof():
            writer.write_eof()

    async def outbound() -> None:
        while chunk := await reader.read(CHUNK):
            await stream.write(chunk)
        await stream.close()

    remote, local = asyncio.create_task(inbound()), asyncio.create_task(outbound())
    pending: set[asyncio.Task[None]] = {remote, local}
    try:
        while pending and not (until_remote_done and remote.done()):
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if any(not t.cancelled() and t.exception() is not None for t in done):
                break  # a reset, or a broken socket: the connection is over
    finally:
        for task in (remote, local):
            task.cancel()
        await asyncio.gather(remote, local, return_exceptions=True)
