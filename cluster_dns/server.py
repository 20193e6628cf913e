"""The DNS server: UDP and TCP on one port, the wire format from dnslib (never hand-written).

A question in the cluster zone is answered from `ClusterRecords` (authoritative, TTL `--ttl`);
anything else is passed as it came to the upstream resolver (`--upstream`, as CoreDNS's
`forward . /etc/resolv.conf`) and its reply relayed, or REFUSED when no upstream is set. UDP
replies that do not fit 512 bytes are truncated (TC bit) so the client retries over TCP, as the
protocol asks.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import sys
from typing import cast

from dnslib import CNAME, QTYPE, RCODE, RR, SRV, A, DNSRecord

from cluster_dns.records import ClusterRecords

log = logging.getLogger("cluster_dns")
UDP_LIMIT = 512
IP_FREEBIND = 15  # <linux/in.h>; the socket module names it only from Python 3.12


class Resolver:
    def __init__(self, records: ClusterRecords, ttl: int, upstream: tuple[str, int] | None) -> None:
        self.records, self.ttl, self.upstream = records, ttl, upstream
        self.queries = 0

    async def resolve(self, packet: bytes) -> bytes | None:
        """The reply to one query packet (None: not a query we can even parse; drop it)."""
        try:
            request = DNSRecord.parse(packet)
        except Exception:  # noqa: BLE001 - dnslib raises several kinds on garbage
            return None
        self.queries += 1
        reply = request.reply()
        if not request.questions:
            reply.header.rcode = RCODE.FORMERR
            return reply.pack()
        question = request.q
        qname, qtype = str(question.qname), QTYPE.get(question.qtype)
        if not self.records.in_zone(qname):
            return await self._forward(packet, reply)
        answer = self.records.answer(qname, str(qtype))
        reply.header.aa = 1
        if not answer.exists:
            reply.header.rcode = RCODE.NXDOMAIN
        for record in answer.records:
            reply.add_answer(RR(record.name, getattr(QTYPE, record.rtype), rdata=_rdata(record.rtype, record.value),
                                ttl=self.ttl))
        return reply.pack()

    async def _forward(self, packet: bytes, reply: DNSRecord) -> bytes:
        if self.upstream is None:
            reply.header.rcode = RCODE.REFUSED
            return reply.pack()
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[bytes] = loop.create_future()

        class Relay(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: object) -> None:
                if not answered.done():
                    answered.set_result(data)

        transport, _ = await loop.create_datagram_endpoint(Relay, remote_addr=self.upstream)
        try:
            transport.sendto(packet)
            return await asyncio.wait_for(answered, timeout=2.0)
        except TimeoutError:
            reply.header.rcode = RCODE.SERVFAIL
            return reply.pack()
        finally:
            transport.close()


def _rdata(rtype: str, value: object) -> object:
    if rtype == "A":
        return A(str(value))
    if rtype == "CNAME":
        return CNAME(str(value))
    priority, weight, port, target = cast(tuple[int, int, int, str], value)
    return SRV(priority=priority, weight=weight, port=port, target=target)


def _truncated(reply: bytes) -> bytes:
    """Header and question only, with TC set: 'ask me again over TCP'."""
    record = DNSRecord.parse(reply)
    short = DNSRecord(header=record.header, questions=record.questions)
    short.header.tc = 1
    return short.pack()


class _UDP(asyncio.DatagramProtocol):
    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        asyncio.get_running_loop().create_task(self._answer(data, addr))

    async def _answer(self, data: bytes, addr: tuple[str, int]) -> None:
        reply = await self.resolver.resolve(data)
        if reply is not None and self.transport is not None:
            self.transport.sendto(reply if len(reply) <= UDP_LIMIT else _truncated(reply), addr)


async def _tcp_client(resolver: Resolver, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            size = struct.unpack("!H", await reader.readexactly(2))[0]
            reply = await resolver.resolve(await reader.readexactly(size))
            if reply is None:
                break
            writer.write(struct.pack("!H", len(reply)) + reply)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def _socket(address: str, port: int, kind: socket.SocketKind) -> socket.socket:
    """A socket bound even to an address the host does not have yet (IP_FREEBIND): a node's bridge
    address appears when its kubelet starts, which may be after us."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, kind)
    try:
        if kind == socket.SOCK_STREAM:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if sys.platform == "linux":
            sock.setsockopt(socket.SOL_IP, getattr(socket, "IP_FREEBIND", IP_FREEBIND), 1)
        sock.bind((address, port))
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


async def serve(resolver: Resolver, addresses: list[str], port: int) -> list[asyncio.BaseTransport | asyncio.Server]:
    """UDP and TCP on `port` of every address; what to close when done."""
    loop = asyncio.get_running_loop()
    out: list[asyncio.BaseTransport | asyncio.Server] = []
    try:
        for address in addresses:
            udp, _ = await loop.create_datagram_endpoint(
                lambda: _UDP(resolver), sock=_socket(address, port, socket.SOCK_DGRAM)
            )
            out.append(udp)
            out.append(await asyncio.start_server(
                lambda r, w: _tcp_client(resolver, r, w), sock=_socket(address, port, socket.SOCK_STREAM)
            ))  # fmt: skip
    except OSError:
        for item in out:
            item.close()
        raise
    return out
