"""Filling a priority level of a real mini-apiserver by hand, for the flow-control tests.

A POST whose body never finishes holds its seat (the handler waits for the body); more requests of
the same flow then wait in its queues. The server's flowcontrol gauges say when each step is done,
so nothing sleeps and hopes. Start the server with `--max-requests-inflight 1
--max-mutating-requests-inflight 0`: every priority level then has one seat.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable

import httpx

from tests.support.apiserver import APIServerProcess

HAND_SIZE, QUEUE_LENGTH = 6, 50  # global-default's hand size and queue length limit


def metric(server: APIServerProcess, name: str, **labels: str) -> float:
    """The sum of a metric's samples whose labels include `labels`."""
    text = httpx.get(server.url + "/metrics", timeout=5).text
    total = 0.0
    for m in re.finditer(rf"^{name}{{([^}}]*)}} (\S+)$", text, re.M):
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m.group(2))
    return total


async def until(check: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(check):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


class Raw:
    """One HTTP/1.1 connection driven by hand."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, server: APIServerProcess) -> Raw:
        return cls(*await asyncio.open_connection("127.0.0.1", server.port))

    def send(self, method: str, path: str, agent: str, body: bytes = b"", length: int | None = None) -> None:
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {agent}\r\n"
        if body or length is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body) if length is None else length}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)

    async def response(self) -> tuple[int, dict[str, str], bytes]:
        status = int((await self.reader.readline()).split()[1])
        headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            k, _, v = line.decode().partition(":")
            headers[k.strip().lower()] = v.strip()
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, headers, body

    def close(self) -> None:
        self.writer.close()


class Hog:
    """One flow that holds global-default's seat and fills every queue of its hand."""

    def __init__(self, server: APIServerProcess, agent: str, namespace: str = "default") -> None:
        self.server, self.agent, self.ns = server, agent, namespace
        self.body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"held-{agent[:8]}"}})
        self.holder: Raw | None = None
        self.queued: list[Raw] = []

    def executing(self) -> float:
        return metric(self.server, "apiserver_flowcontrol_current_executing_seats", priority_level="global-default")

    def waiting(self) -> float:
        return metric(self.server, "apiserver_flowcontrol_current_inqueue_requests", priority_level="global-default")

    async def hold(self) -> None:
        self.holder = await Raw.open(self.server)
        body = self.body.encode()
        self.holder.send("POST", f"/api/v1/namespaces/{self.ns}/configmaps", self.agent, body[:5], length=len(body))
        await until(lambda: self.executing() == 1, "the hog to hold the seat")

    async def fill(self) -> None:
        for _ in range(HAND_SIZE * QUEUE_LENGTH):
            c = await Raw.open(self.server)
            c.send("GET", f"/api/v1/namespaces/{self.ns}/configmaps", self.agent)
            self.queued.append(c)
        await until(lambda: self.waiting() >= HAND_SIZE * QUEUE_LENGTH, "the hog's queues to fill")

    async def release(self) -> int:
        """Finish the held body; the seat frees and the queued requests run. The POST's code."""
        assert self.holder is not None
        self.holder.writer.write(self.body.encode()[5:])
        return (await asyncio.wait_for(self.holder.response(), 10))[0]

    def close(self) -> None:
        for c in [self.holder, *self.queued]:
            if c is not None:
                c.close()
