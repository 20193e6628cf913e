"""Synthetic container logs: stable text, computed from what the fake runtime did and when.

Nothing writes log files. A run of a container (one start, until it exits) is remembered as
"started at t0 with plan P, ended at t1 with code n"; its log is a pure function of that and of
the clock:

    Starting container web with image nginx:1.25
    container web is running: runs until stopped
    container web is alive (1)            one "probe" line every --log-line-interval seconds
    container web is alive (2)
    container web exited with code 0      when the run ends

so the same pod always prints the same lines, a thousand idle containers cost nothing, and
`follow` simply waits for the next line to become due (or for the run to end).

What the kubelet's /containerLogs endpoint accepts, as in Kubernetes: `follow`, `tailLines`,
`timestamps` (RFC 3339 with nanoseconds before each line), `previous` (the run before the
current one), `sinceSeconds`, `limitBytes`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime


def rfc3339_nano(ts: float) -> str:
    dt = datetime.fromtimestamp(ts, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int((ts % 1) * 1e9):09d}Z"


@dataclass
class Run:
    """One run of a container: the log is derived from these facts."""

    container: str
    image: str
    description: str
    started: float  # wall clock
    interval: float
    ended: float | None = None
    exit_code: int | None = None
    stop_reason: str = ""  # "SIGTERM" when the kubelet stopped it
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def finish(self, at: float, exit_code: int, stop_reason: str = "") -> None:
        self.ended, self.exit_code, self.stop_reason = at, exit_code, stop_reason
        self.changed.set()

    def lines(self, now: float) -> list[tuple[float, str]]:
        c = self.container
        out = [
            (self.started, f"Starting container {c} with image {self.image}"),
            (self.started, f"container {c} is running: {self.description}"),
        ]
        until = now if self.ended is None else min(now, self.ended)
        if self.interval > 0:
            ticks = max(0, math.floor((until - self.started) / self.interval + 1e-9))
            if self.ended is not None and ticks and self.started + ticks * self.interval >= self.ended:
                ticks -= 1  # the run ended at that instant: no "alive" line at the very end
            out += [(self.started + k * self.interval, f"container {c} is alive ({k})") for k in range(1, ticks + 1)]
        if self.ended is not None and now >= self.ended:
            if self.stop_reason:
                out.append((self.ended, f"container {c} received {self.stop_reason}, shutting down"))
            out.append((self.ended, f"container {c} exited with code {self.exit_code}"))
        return out

    def next_line_at(self, now: float) -> float | None:
        """When the next line becomes due (None: the run has ended, no more lines)."""
        if self.ended is not None:
            return None if now >= self.ended else self.ended
        if self.interval <= 0:
            return None
        k = math.floor((now - self.started) / self.interval) + 1
        return self.started + k * self.interval


class LogError(Exception):
    """A request the kubelet answers with 400 (message as Kubernetes words it)."""


class LogStore:
    """Runs per container, keyed (namespace, pod, container). Only current and previous are kept."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str, str], list[Run]] = {}

    def start(self, key: tuple[str, str, str], run: Run) -> None:
        runs = self._runs.setdefault(key, [])
        runs.append(run)
        del runs[:-2]

    def forget_pod(self, namespace: str, pod: str) -> None:
        for key in [k for k in self._runs if k[0] == namespace and k[1] == pod]:
            del self._runs[key]

    def run(self, key: tuple[str, str, str], previous: bool) -> Run:
        runs = self._runs.get(key) or []
        ns, pod, container = key
        if previous:
            if len(runs) < 2:
                raise LogError(f'previous terminated container "{container}" in pod "{pod}" not found')
            return runs[-2]
        if not runs:
            raise LogError(f'container "{container}" in pod "{pod}" is waiting to start: ContainerCreating')
        return runs[-1]

    async def read(
        self,
        key: tuple[str, str, str],
        *,
        follow: bool = False,
        tail_lines: int | None = None,
        timestamps: bool = False,
        previous: bool = False,
        since_seconds: float | None = None,
        limit_bytes: int | None = None,
    ) -> AsyncIterator[bytes]:
        """The log as chunks of bytes; with `follow`, keeps going until the run ends."""
        run = self.run(key, previous)  # raises LogError before the response starts
        return self._stream(run, follow and not previous, tail_lines, timestamps, since_seconds, limit_bytes)

    async def _stream(
        self,
        run: Run,
        follow: bool,
        tail_lines: int | None,
        timestamps: bool,
        since_seconds: float | None,
        limit_bytes: int | None,
    ) -> AsyncIterator[bytes]:
        now = time.time()
        lines = run.lines(now)
        if since_seconds is not None:
            lines = [ln for ln in lines if ln[0] >= now - since_seconds]
        sent = len(run.lines(now))
        if tail_lines is not None:
            lines = lines[-tail_lines:] if tail_lines > 0 else []
        budget = limit_bytes if limit_bytes and limit_bytes > 0 else None

        def encode(batch: list[tuple[float, str]]) -> bytes:
            text = "".join((f"{rfc3339_nano(ts)} {s}\n" if timestamps else f"{s}\n") for ts, s in batch)
            return text.encode()

        chunk = encode(lines)
        while True:
            if budget is not None:
                chunk = chunk[:budget]
                budget -= len(chunk)
            if chunk:
                yield chunk
            if not follow or budget == 0:
                return
            # the same instant as the lines just sent: judged at a later one, a run that ends in
            # between would stop the stream before its last line ("exited with code …") is sent
            due = run.next_line_at(now)
            if due is None:
                return
            try:
                await asyncio.wait_for(run.changed.wait(), timeout=max(due - time.time(), 0.0) + 0.001)
            except TimeoutError:
                pass
            now = time.time()
            all_lines = run.lines(now)
            chunk = encode(all_lines[sent:])
            sent = len(all_lines)
