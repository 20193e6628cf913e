"""The secure port decrypts into one buffer per connection, not into a fresh 256 KiB one per record.

uvloop's TLS layer has two ways to hand decrypted bytes to the protocol above it. To a plain
`asyncio.Protocol` (uvicorn's are) it calls `SSLObject.read(256 KiB)`, which allocates a bytes
object of that size for every read and shrinks it to what arrived. glibc serves an allocation
that large with `mmap`, and the shrink and the free cost a `mremap` and a `munmap`: three system
calls and fresh pages for each request (counted with `strace -c` on a bare uvicorn app: 3,200
GETs, 3,216 of each). To an `asyncio.BufferedProtocol` it decrypts straight into the buffer the
protocol offers, with no allocation. On a bare uvicorn app (16 keep-alive httpx clients, 1.2 KB
answers, four alternating runs each way) what TLS adds to a request's server CPU went from
96-131 µs to 54-78 µs, and the three system calls are gone.

uvicorn's protocol cannot be made a BufferedProtocol (it is an `asyncio.Protocol`, and uvloop
takes the copying path for those), so `BufferedReads` stands in front of it: it owns the buffer,
gives the protocol a copy of what was decrypted, and passes the connection's other events
through. uvicorn only ever sees its own protocol; a WebSocket upgrade replaces this one on the
transport with the websocket protocol, as it would replace uvicorn's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from apiserver.tls_writes import CoalescingHttpToolsProtocol

BUFFER_BYTES = 64 * 1024  # a TLS record carries at most 16 KiB; a longer read comes in turns


class BufferedReads(asyncio.BufferedProtocol):
    """uvicorn's secure-port protocol behind a buffer that uvloop's TLS layer decrypts into."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.protocol = CoalescingHttpToolsProtocol(*args, **kwargs)
        self._buffer = memoryview(bytearray(BUFFER_BYTES))

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.protocol.data_received(bytes(self._buffer[:nbytes]))  # the next read overwrites the buffer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.protocol.connection_made(transport)  # type: ignore[arg-type]

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.connection_lost(exc)

    def eof_received(self) -> None:  # uvicorn's keeps nothing open after the client's end
        self.protocol.eof_received()

    def pause_writing(self) -> None:
        self.protocol.pause_writing()

    def resume_writing(self) -> None:
        self.protocol.resume_writing()
