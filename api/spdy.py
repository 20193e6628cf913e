"""SPDY/3.1 framing: what `kubectl port-forward` speaks inside its WebSocket.

kubectl 1.32 forwards ports over a WebSocket whose subprotocol is `SPDY/3.1+portforward.k8s.io`
(KEP-4006): the WebSocket is only a pipe (the byte stream is the concatenation of the binary
messages) and inside it runs the same SPDY/3.1 connection kubectl used to open with an HTTP
`Upgrade: SPDY/3.1`. Kubernetes speaks it with moby/spdystream; this module is the frame layer
of mini-k8s' side (the kubelet, mini-kubectl): pure, no I/O, so it is tested byte for byte.

    control frame   |1| version=3 (15) | type (16) | flags (8) | length (24) | payload
    data frame      |0| stream id (31)             | flags (8) | length (24) | payload

Header blocks (SYN_STREAM, SYN_REPLY, HEADERS) are a count, then length-prefixed lowercase names
and values (several values of a name joined by NUL), zlib-compressed with the SPDY/3 dictionary
below and a sync flush after each block; one compression context per direction per connection,
so blocks must be encoded in the order they are sent and decoded in the order they arrive.

Flow control (SPDY/3.1): each side may send a stream at most its window (64 KiB at first) and
re-opens the peer's window with WINDOW_UPDATE as it consumes data. spdystream (hence kubectl and
Kubernetes' kubelet) sends none and ignores ours, so `SendWindow` is only enforced against a peer
that has shown it does flow control (api/spdy_session.py decides).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
FLAG_UNIDIRECTIONAL = 0x02  # SYN_STREAM only
FLAG_CLEAR_SETTINGS = 0x01  # SETTINGS only
# RST_STREAM status codes
PROTOCOL_ERROR, INVALID_STREAM, REFUSED_STREAM, UNSUPPORTED_VERSION, CANCEL = 1, 2, 3, 4, 5
INTERNAL_ERROR, FLOW_CONTROL_ERROR, STREAM_IN_USE, STREAM_ALREADY_CLOSED = 6, 7, 8, 9
# GOAWAY status codes
GOAWAY_OK, GOAWAY_PROTOCOL_ERROR, GOAWAY_INTERNAL_ERROR = 0, 1, 2
SETTINGS_INITIAL_WINDOW_SIZE = 7
INITIAL_WINDOW = 64 * 1024
MAX_WINDOW = 2**31 - 1
MAX_DATA_LENGTH = 2**24 - 1
# The most a header block may decompress to: a few hundred bytes carry a port-forward's headers, and
# a SPDY control frame (at most 16 MiB) of zlib could otherwise inflate to gigabytes (a zip bomb).
MAX_HEADER_BLOCK = 1024 * 1024

Headers = list[tuple[str, str]]

# The SPDY/3 header compression dictionary (a protocol constant, 1423 bytes): 65 length-prefixed
# words, then status lines, dates and common values.
_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding accept-language accept-ranges "
    "age allow authorization cache-control connection content-base content-encoding content-language "
    "content-length content-location content-md5 content-range content-type date etag expect expires from "
    "host if-match if-modified-since if-none-match if-range if-unmodified-since last-modified location "
    "max-forwards pragma proxy-authenticate proxy-authorization range referer retry-after server te trailer "
    "transfer-encoding upgrade user-agent vary via warning www-authenticate method get status 200|OK version "
    "HTTP/1.1 url public set-cookie keep-alive origin"
)
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
DICTIONARY = (
    b"".join(struct.pack(">I", len(w)) + w.encode() for w in (w.replace("|", " ") for w in _WORDS.split()))
    + _TAIL.encode()
)


class ProtocolError(Exception):
    """The peer broke SPDY: the connection cannot go on (GOAWAY with PROTOCOL_ERROR)."""


@dataclass(frozen=True)
class DataFrame:
    stream_id: int
    data: bytes
    fin: bool = False


@dataclass(frozen=True)
class SynStream:
    stream_id: int
    headers: Headers
    fin: bool = False
    unidirectional: bool = False
    associated_to: int = 0
    priority: int = 0


@dataclass(frozen=True)
class SynReply:
    stream_id: int
    headers: Headers
    fin: bool = False


@dataclass(frozen=True)
class RstStream:
    stream_id: int
    status: int


@dataclass(frozen=True)
class Settings:
    values: dict[int, int] = field(default_factory=dict)  # id -> value (per-entry flags are not kept)
    clear: bool = False


@dataclass(frozen=True)
class Ping:
    id: int


@dataclass(frozen=True)
class GoAway:
    last_good_stream_id: int
    status: int = GOAWAY_OK


@dataclass(frozen=True)
class HeadersFrame:
    stream_id: int
    headers: Headers
    fin: bool = False


@dataclass(frozen=True)
class WindowUpdate:
    stream_id: int
    delta: int


Frame = DataFrame | SynStream | SynReply | RstStream | Settings | Ping | GoAway | HeadersFrame | WindowUpdate


def header(headers: Headers, name: str) -> str:
    """The first value of `name` ("" when absent); names are compared lowercased, as SPDY sends them."""
    name = name.lower()
    return next((v for k, v in headers if k == name), "")


def encode_header_block(headers: Headers) -> bytes:
    """The uncompressed block: values of one name joined by NUL, names lowercased."""
    merged: dict[str, list[str]] = {}
    for name, value in headers:
        merged.setdefault(name.lower(), []).append(value)
    out = [struct.pack(">I", len(merged))]
    for name, values in merged.items():
        raw_name, raw_value = name.encode(), "\x00".join(values).encode()
        out += [struct.pack(">I", len(raw_name)), raw_name, struct.pack(">I", len(raw_value)), raw_value]
    return b"".join(out)


def decode_header_block(raw: bytes) -> Headers:
    try:
        (count,) = struct.unpack_from(">I", raw, 0)
        at, headers = 4, []
        for _ in range(count):
            (n,) = struct.unpack_from(">I", raw, at)
            name = raw[at + 4 : at + 4 + n].decode()
            at += 4 + n
            (n,) = struct.unpack_from(">I", raw, at)
            value = raw[at + 4 : at + 4 + n].decode()
            if at + 4 + n > len(raw):
                raise ProtocolError("truncated header block")
            at += 4 + n
            headers += [(name.lower(), v) for v in value.split("\x00")]
    except (struct.error, UnicodeDecodeError) as exc:
        raise ProtocolError(f"invalid header block: {exc}") from None
    if at != len(raw):
        raise ProtocolError("trailing bytes after the header block")
    return headers


class HeaderCompressor:
    """One direction's compression context (what spdystream's Framer keeps: best compression)."""

    def __init__(self) -> None:
        self._z = zlib.compressobj(9, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY, DICTIONARY)

    def compress(self, headers: Headers) -> bytes:
        return self._z.compress(encode_header_block(headers)) + self._z.flush(zlib.Z_SYNC_FLUSH)


class HeaderDecompressor:
    def __init__(self) -> None:
        self._z = zlib.decompressobj(15, DICTIONARY)

    def decompress(self, block: bytes) -> Headers:
        try:
            raw = self._z.decompress(block, MAX_HEADER_BLOCK)
        except zlib.error as exc:
            raise ProtocolError(f"header block does not decompress: {exc}") from None
        if self._z.unconsumed_tail:
            raise ProtocolError(f"header block inflates past the limit of {MAX_HEADER_BLOCK} bytes")
        return decode_header_block(raw)


def _control(kind: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload


class FrameWriter:
    """Frames to bytes, with this direction's header compression context."""

    def __init__(self) -> None:
        self.compressor = HeaderCompressor()

    def encode(self, frame: Frame) -> bytes:
        if isinstance(frame, DataFrame):
            if len(frame.data) > MAX_DATA_LENGTH:
                raise ValueError("data frame too long")
            word = (FLAG_FIN if frame.fin else 0) << 24 | len(frame.data)
            return struct.pack(">II", frame.stream_id & MAX_WINDOW, word) + frame.data
        if isinstance(frame, SynStream):
            flags = (FLAG_FIN if frame.fin else 0) | (FLAG_UNIDIRECTIONAL if frame.unidirectional else 0)
            head = struct.pack(">IIBB", frame.stream_id, frame.associated_to, (frame.priority & 7) << 5, 0)
            return _control(SYN_STREAM, flags, head + self.compressor.compress(frame.headers))
        if isinstance(frame, SynReply):
            block = self.compressor.compress(frame.headers)
            return _control(SYN_REPLY, FLAG_FIN if frame.fin else 0, struct.pack(">I", frame.stream_id) + block)
        if isinstance(frame, HeadersFrame):
            block = self.compressor.compress(frame.headers)
            return _control(HEADERS, FLAG_FIN if frame.fin else 0, struct.pack(">I", frame.stream_id) + block)
        if isinstance(frame, RstStream):
            return _control(RST_STREAM, 0, struct.pack(">II", frame.stream_id, frame.status))
        if isinstance(frame, Settings):
            entries = b"".join(struct.pack(">II", k & 0xFFFFFF, v) for k, v in frame.values.items())
            flags = FLAG_CLEAR_SETTINGS if frame.clear else 0
            return _control(SETTINGS, flags, struct.pack(">I", len(frame.values)) + entries)
        if isinstance(frame, Ping):
            return _control(PING, 0, struct.pack(">I", frame.id))
        if isinstance(frame, GoAway):
            return _control(GOAWAY, 0, struct.pack(">II", frame.last_good_stream_id, frame.status))
        if isinstance(frame, WindowUpdate):
            return _control(WINDOW_UPDATE, 0, struct.pack(">II", frame.stream_id, frame.delta))
        raise TypeError(f"not a SPDY frame: {frame!r}")


class FrameReader:
    """Bytes (in whatever pieces they come) to frames, with the peer's compression context.
    Unknown control frame types are skipped, as SPDY/3 says."""

    def __init__(self) -> None:
        self.decompressor = HeaderDecompressor()
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames: list[Frame] = []
        while len(self._buffer) >= 8:
            first, word = struct.unpack_from(">II", self._buffer, 0)
            length = word & 0xFFFFFF
            if len(self._buffer) < 8 + length:
                break
            payload = bytes(self._buffer[8 : 8 + length])
            del self._buffer[: 8 + length]
            flags = word >> 24
            if not first & 0x80000000:
                if first == 0:
                    raise ProtocolError("data frame on stream 0")
                frames.append(DataFrame(first, payload, bool(flags & FLAG_FIN)))
                continue
            version, kind = (first >> 16) & 0x7FFF, first & 0xFFFF
            if version != VERSION:
                raise ProtocolError(f"unsupported SPDY version {version}")
            frame = self._control(kind, flags, payload)
            if frame is not None:
                frames.append(frame)
        return frames

    def _control(self, kind: int, flags: int, payload: bytes) -> Frame | None:
        fin = bool(flags & FLAG_FIN)
        try:
            if kind == SYN_STREAM:
                sid, assoc, prio, _slot = struct.unpack_from(">IIBB", payload, 0)
                headers = self.decompressor.decompress(payload[10:])
                return SynStream(sid & MAX_WINDOW, headers, fin, bool(flags & FLAG_UNIDIRECTIONAL),
                                 assoc & MAX_WINDOW, prio >> 5)  # fmt: skip
            if kind in (SYN_REPLY, HEADERS):
                (sid,) = struct.unpack_from(">I", payload, 0)
                headers = self.decompressor.decompress(payload[4:])
                return (SynReply if kind == SYN_REPLY else HeadersFrame)(sid & MAX_WINDOW, headers, fin)
            if kind == RST_STREAM:
                sid, status = struct.unpack(">II", payload)
                return RstStream(sid & MAX_WINDOW, status)
            if kind == SETTINGS:
                (count,) = struct.unpack_from(">I", payload, 0)
                values = {}
                for i in range(count):
                    key, value = struct.unpack_from(">II", payload, 4 + 8 * i)
                    values[key & 0xFFFFFF] = value
                return Settings(values, bool(flags & FLAG_CLEAR_SETTINGS))
            if kind == PING:
                return Ping(struct.unpack(">I", payload)[0])
            if kind == GOAWAY:
                last, status = struct.unpack(">II", payload[:8])
                return GoAway(last & MAX_WINDOW, status)
            if kind == WINDOW_UPDATE:
                sid, delta = struct.unpack(">II", payload)
                return WindowUpdate(sid & MAX_WINDOW, delta & MAX_WINDOW)
        except struct.error as exc:
            raise ProtocolError(f"malformed control frame (type {kind}): {exc}") from None
        return None


class SendWindow:
    """How much we may still send on a stream (the peer's receive window for it)."""

    def __init__(self, size: int = INITIAL_WINDOW) -> None:
        self.available = size

    def grant(self, delta: int) -> None:
        """A WINDOW_UPDATE (or a changed SETTINGS_INITIAL_WINDOW_SIZE: delta may be negative)."""
        if self.available + delta > MAX_WINDOW:
            raise ProtocolError("flow control window overflow")
        self.available += delta

    def take(self, wanted: int) -> int:
        """Reserve up to `wanted` bytes of the window; 0 when it is closed."""
        n = max(0, min(wanted, self.available))
        self.available -= n
        return n


class ReceiveWindow:
    """What the peer may still send us on a stream; says when to re-open it: once half of the
    window has been consumed (as HTTP/2 and SPDY implementations commonly do)."""

    def __init__(self, size: int = INITIAL_WINDOW) -> None:
        self.size = size
        self.available = size
        self._consumed = 0

    def received(self, n: int) -> None:
        self.available -= n  # a peer without flow control may go below 0: tolerated (see the module comment)

    def consumed(self, n: int) -> int:
        """The application took `n` bytes: the WINDOW_UPDATE delta to send now (0: none yet)."""
        self._consumed += n
        if self._consumed < self.size // 2:
            return 0
        delta, self._consumed = self._consumed, 0
        self.available += delta
        return delta
