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
`feed` pauses (and so stops reading the transport) while one holds more than MAX_BUFFERED.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from api import spdy

CHUNK = 32 * 1024  # what client-go's io.Copy writes at a time
MAX_BUFFERED = 4 * 1024 * 1024
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
        so they must reach the peer in the order they were compressed."""
        if self.closed:
            raise StreamError("the connection is closed")
        async with self._lock:
            await self._send(self.writer.encode(frame))

    async def start(self) -> None:
        """Announce our flow control (see the module comment)."""
        await self.write(spdy.Settings({spdy.SETTINGS_INITIAL_WINDOW_SIZE: self.initial_window}))

    async def open_stream(self, headers: spdy.Headers, timeout: float = 30.0) -> Stream:
        """SYN_STREAM, then wait for the SYN_REPLY (StreamError if the peer resets it instead)."""
        if self.goaway_received:
            raise StreamError("the connection is going away")
        async with self._lock:  # ids must go out in increasing order
            stream = Stream(self, self._next_id, headers)
            self._next_id += 2
            self.streams[stream.id] = stream
            await self._send(self.writer.encode(spdy.SynStream(stream.id, headers)))
        try:
            await asyncio.wait_for(stream.replied.wait(), timeout)
        except TimeoutError:
            raise StreamError(f"timed out waiting for a reply to stream {stream.id}") from None
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
            while stream.buffered > MAX_BUFFERED and not stream.reset_status and not self.closed:
                stream._changed.clear()
                await stream._changed.wait()
            stream.recv_window.received(len(frame.data))
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
