"""The SPDY/3.1 framer (api/spdy.py) and session (api/spdy_session.py) that port-forward runs on.

The reference bytes are what kubectl v1.32.4 sent as its first frame for a forwarded connection
(captured from its WebSocket): a SYN_STREAM whose header block is compressed with the SPDY/3
dictionary — decoding it proves the dictionary byte-exact and the framing compatible.
"""

from __future__ import annotations

import asyncio
import hashlib
import zlib

import pytest

from api import spdy
from api.spdy_session import Session, Stream, StreamError

KUBECTL_SYN_STREAM = bytes.fromhex(
    "800300010000003d0000000100000000000078f9e3c6a7c202253a703a2b294a4dcc851625aca9a0808614cb45a024cc6461c0c0c0c0"
    "590489c44c50e2663400000000ffff"
)


def test_dictionary_is_the_spdy3_constant() -> None:
    assert len(spdy.DICTIONARY) == 1423
    assert zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2  # the dictionary id in every SPDY/3 zlib header
    assert hashlib.sha256(spdy.DICTIONARY).hexdigest() == (
        "51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02"
    )
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b"charset=iso-8859-1,utf-,*,enq=0.")


def test_kubectls_syn_stream_decodes() -> None:
    frames = spdy.FrameReader().feed(KUBECTL_SYN_STREAM)
    assert frames == [spdy.SynStream(1, [("streamtype", "error"), ("port", "80"), ("requestid", "0")])]


def test_our_header_block_has_kubectls_zlib_header_and_sync_flush() -> None:
    """Go's deflate and zlib's differ in their bytes, not in their framing: the same zlib header
    (best compression, preset dictionary 0xe3c6a7c2), the same sync-flush tail, names lowercased."""
    ours = spdy.FrameWriter().encode(spdy.SynStream(1, [("streamType", "error"), ("port", "80"), ("requestID", "0")]))
    assert ours[:18] == KUBECTL_SYN_STREAM[:4] + ours[4:8] + KUBECTL_SYN_STREAM[8:18]  # all but the length
    assert ours[18:24] == KUBECTL_SYN_STREAM[18:24] == bytes.fromhex("78f9e3c6a7c2")
    assert ours.endswith(b"\x00\x00\xff\xff")
    assert spdy.FrameReader().feed(ours) == spdy.FrameReader().feed(KUBECTL_SYN_STREAM)


def test_every_frame_round_trips_through_one_compression_context() -> None:
    frames: list[spdy.Frame] = [
        spdy.Settings({spdy.SETTINGS_INITIAL_WINDOW_SIZE: 65536}),
        spdy.SynStream(1, [("streamtype", "data"), ("port", "8080"), ("requestid", "7")], priority=3),
        spdy.SynReply(1, []),
        spdy.SynStream(3, [("x", "a"), ("x", "b")], fin=True, unidirectional=True),
        spdy.HeadersFrame(3, [("status", "200 OK")], fin=True),
        spdy.DataFrame(1, b"hello" * 1000),
        spdy.DataFrame(1, b"", fin=True),
        spdy.WindowUpdate(1, 32768),
        spdy.Ping(2),
        spdy.RstStream(3, spdy.CANCEL),
        spdy.GoAway(3, spdy.GOAWAY_OK),
    ]
    writer = spdy.FrameWriter()
    wire = b"".join(writer.encode(f) for f in frames)
    reader = spdy.FrameReader()
    got: list[spdy.Frame] = []
    for i in range(0, len(wire), 7):  # any split of the byte stream (WebSocket messages are arbitrary)
        got += reader.feed(wire[i : i + 7])
    assert got == frames


def test_unknown_control_frames_are_skipped_and_bad_versions_refused() -> None:
    unknown = bytes.fromhex("8003000a00000004") + b"abcd"  # type 10 (CREDENTIAL): ignored
    assert spdy.FrameReader().feed(unknown + spdy.FrameWriter().encode(spdy.Ping(1))) == [spdy.Ping(1)]
    with pytest.raises(spdy.ProtocolError):
        spdy.FrameReader().feed(bytes.fromhex("8002000600000004") + b"\x00\x00\x00\x01")


def test_windows() -> None:
    send = spdy.SendWindow()
    assert send.take(100_000) == spdy.INITIAL_WINDOW and send.take(1) == 0
    send.grant(10)
    assert send.take(100) == 10
    send.grant(1)
    with pytest.raises(spdy.ProtocolError):
        send.grant(spdy.MAX_WINDOW)
    recv = spdy.ReceiveWindow()
    recv.received(40_000)
    assert recv.consumed(20_000) == 0  # less than half the window: no update yet
    assert recv.consumed(20_000) == 40_000  # half or more: re-open it all
    assert recv.available == spdy.INITIAL_WINDOW


class Pipe:
    """Two sessions wired back to back (what the WebSocket carries), counting WINDOW_UPDATEs."""

    def __init__(self, *, client_flow_control: bool = True) -> None:
        self.updates = 0
        self.server = Session(self._to_client, client=False, validate=lambda s: None if s.header("port") else "no port")
        self.client = Session(self._to_server, client=True)
        self.client_flow_control = client_flow_control

    async def _to_server(self, data: bytes) -> None:
        await self.server.feed(data)

    async def _to_client(self, data: bytes) -> None:
        self.updates += data[:4] == b"\x80\x03\x00\x09"  # one frame per call: is it a WINDOW_UPDATE?
        await self.client.feed(data)

    async def start(self) -> None:
        await self.server.start()
        if self.client_flow_control:
            await self.client.start()


async def _echo(server: Session) -> None:
    stream = await server.incoming.get()
    assert stream is not None
    while data := await stream.read():
        await stream.write(data)
    await stream.close()


async def test_megabytes_flow_both_ways_within_the_windows() -> None:
    pipe = Pipe()
    await pipe.start()
    echo = asyncio.create_task(_echo(pipe.server))
    stream = await pipe.client.open_stream([("port", "80")])
    assert pipe.client.peer_flow_control and pipe.server.peer_flow_control
    payload = bytes(range(256)) * 12_000  # ~3 MB

    async def send() -> None:
        await stream.write(payload)
        await stream.close()

    sender = asyncio.create_task(send())
    back = await asyncio.wait_for(stream.read_all(), 30)
    await sender
    await echo
    assert back == payload
    assert pipe.updates > 0  # the server re-opened the client's window as it consumed


async def test_a_peer_without_flow_control_is_not_waited_for() -> None:
    """kubectl (spdystream) announces nothing and never sends WINDOW_UPDATE: sending must not stall."""
    sent: list[spdy.Frame] = []
    reader = spdy.FrameReader()

    async def collect(data: bytes) -> None:
        sent.extend(reader.feed(data))

    session = Session(collect, client=False)
    await session.feed(spdy.FrameWriter().encode(spdy.SynStream(1, [("port", "80")])))
    stream = await session.incoming.get()
    assert isinstance(stream, Stream)
    await asyncio.wait_for(stream.write(b"x" * (3 * spdy.INITIAL_WINDOW)), 5)
    assert sum(len(f.data) for f in sent if isinstance(f, spdy.DataFrame)) == 3 * spdy.INITIAL_WINDOW
    assert isinstance(sent[0], spdy.SynReply)


async def test_pings_are_answered_and_invalid_streams_reset() -> None:
    pipe = Pipe()
    await pipe.start()
    await asyncio.wait_for(pipe.client.ping(), 5)  # the server echoes the client's ping
    with pytest.raises(StreamError):
        await pipe.client.open_stream([("streamtype", "data")])  # no port: reset instead of a reply


async def test_reset_and_connection_loss_end_reads() -> None:
    pipe = Pipe()
    await pipe.start()
    opened = asyncio.create_task(pipe.client.open_stream([("port", "80")]))
    theirs = await pipe.server.incoming.get()
    ours = await opened
    assert theirs is not None
    await ours.reset()
    assert await asyncio.wait_for(theirs.read(), 5) == b"" and theirs.reset_status == spdy.CANCEL
    other = asyncio.create_task(pipe.client.open_stream([("port", "81")]))
    theirs2 = await pipe.server.incoming.get()
    await other
    pipe.server.connection_lost()
    assert theirs2 is not None and await asyncio.wait_for(theirs2.read(), 5) == b""


def test_a_header_block_that_inflates_past_the_limit_is_refused() -> None:
    """A zip bomb: a few KiB of zlib that would inflate to megabytes in one header block."""
    bomb = spdy.FrameWriter().encode(spdy.SynStream(1, [("x", "a" * (2 * spdy.MAX_HEADER_BLOCK))]))
    assert len(bomb) < 16 * 1024
    with pytest.raises(spdy.ProtocolError, match="inflates past the limit"):
        spdy.FrameReader().feed(bomb)
    big = [("x", "a" * (spdy.MAX_HEADER_BLOCK // 2))]  # under the limit: fine
    assert spdy.FrameReader().feed(spdy.FrameWriter().encode(spdy.SynStream(1, big))) == [spdy.SynStream(1, big)]


async def test_a_stream_nobody_reads_cannot_stall_the_others() -> None:
    """A peer without flow control (kubectl) sends megabytes on a stream the application will not
    read (discarded, or reset): they are dropped, and the other streams still get their data."""
    reader = spdy.FrameReader()
    sent: list[spdy.Frame] = []

    async def collect(data: bytes) -> None:
        sent.extend(reader.feed(data))

    session = Session(collect, client=False)
    peer = spdy.FrameWriter()
    for sid in (1, 3, 5):
        await session.feed(peer.encode(spdy.SynStream(sid, [("port", "80")])))
    unread, wanted, refused = [await session.incoming.get() for _ in range(3)]
    assert unread is not None and wanted is not None and refused is not None
    unread.discard_input()
    await refused.reset()
    flood = b"".join(peer.encode(spdy.DataFrame(sid, b"x" * 32768)) for _ in range(160) for sid in (1, 5))  # 10 MiB
    flood += peer.encode(spdy.DataFrame(3, b"hello", fin=True))
    await asyncio.wait_for(session.feed(flood), 10)  # did not wait for a reader that will never come
    assert await asyncio.wait_for(wanted.read_all(), 5) == b"hello"
    assert unread.buffered == 0 and refused.buffered == 0
    await unread.close()
    await session.feed(peer.encode(spdy.DataFrame(1, b"", fin=True)))
    assert set(session.streams) == {3}  # nothing kept for the other two


async def test_a_stream_being_read_is_waited_for_not_dropped() -> None:
    """Back-pressure on a stream that is read: `feed` waits for its reader, nothing is lost."""
    session = Session(lambda data: asyncio.sleep(0), client=False)
    peer = spdy.FrameWriter()
    await session.feed(peer.encode(spdy.SynStream(1, [("port", "80")])))
    stream = await session.incoming.get()
    assert stream is not None
    chunk = b"y" * 65536
    frames = b"".join(peer.encode(spdy.DataFrame(1, chunk)) for _ in range(96))  # 6 MiB
    feeding = asyncio.create_task(session.feed(frames + peer.encode(spdy.DataFrame(1, b"", fin=True))))
    got = await asyncio.wait_for(stream.read_all(), 10)
    await feeding
    assert got == chunk * 96


async def test_an_unanswered_open_stream_is_reset_and_forgotten() -> None:
    """On a timeout, or when the caller is cancelled, the stream is reset (RST_STREAM CANCEL)."""
    reader = spdy.FrameReader()
    sent: list[spdy.Frame] = []
    syn = asyncio.Event()

    async def collect(data: bytes) -> None:
        for frame in reader.feed(data):
            sent.append(frame)
            if isinstance(frame, spdy.SynStream):
                syn.set()

    session = Session(collect, client=True)
    with pytest.raises(StreamError, match="timed out"):
        await session.open_stream([("port", "80")], timeout=0.01)
    assert session.streams == {} and sent[-1] == spdy.RstStream(1, spdy.CANCEL)
    syn.clear()
    opening = asyncio.create_task(session.open_stream([("port", "81")]))
    await asyncio.wait_for(syn.wait(), 5)
    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await opening
    assert session.streams == {} and sent[-1] == spdy.RstStream(3, spdy.CANCEL)
    await session.feed(spdy.FrameWriter().encode(spdy.SynReply(3, [])))  # a late reply: ignored
    assert session.streams == {}


async def test_a_transport_error_is_a_stream_error() -> None:
    """Whatever the transport raises when its connection is gone (websockets' ConnectionClosed,
    Starlette's WebSocketDisconnect, ...) comes out of the session as StreamError."""

    class Gone(Exception):
        pass

    async def broken(data: bytes) -> None:
        raise Gone("no close frame received or sent")

    session = Session(broken, client=True)
    with pytest.raises(StreamError, match="no close frame") as info:
        await session.ping()
    assert isinstance(info.value.__cause__, Gone)
    with pytest.raises(StreamError):
        await session.open_stream([("port", "80")])
    assert session.streams == {}
