"""Container logs of the process runtime: the CRI log files the shim writes, read back.

Each line of `<root-dir>/containers/<id>/log` is `<RFC 3339 nano time> <stream> <P|F> <text>`
(P: a part of a longer line, F: the line ends here), the format containerd writes and the real
kubelet reads. /containerLogs turns it back into the container's output, with the same query
parameters as logs.py (follow, tailLines, timestamps, previous, sinceSeconds, limitBytes);
`previous` is the run before the newest one of the same pod and container.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from kubelet.logs import LogError

if TYPE_CHECKING:
    from kubelet.process import ProcessRuntime

FOLLOW_POLL = 0.1


def parse_time(text: str) -> float:
    head, _, frac = text.rstrip("Z").partition(".")
    base = datetime.fromisoformat(head + "+00:00").timestamp()
    return base + (float("0." + frac) if frac else 0.0)


def read_complete_lines(path: Path, offset: int) -> tuple[bytes, int, bool]:
    """The complete lines of the log at `path` after `offset`, the offset after them, and whether
    that was all there was (no line still being written)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        data = b""
    end = data.rfind(b"\n") + 1
    return data[:end], offset + end, end == len(data)


def parse_lines(data: bytes) -> list[tuple[str, float, bytes]]:
    """Complete records of `data` -> (timestamp text, time, text with its newline)."""
    out: list[tuple[str, float, bytes]] = []
    pending = b""
    for raw in data.split(b"\n"):
        parts = raw.split(b" ", 3)
        if len(parts) < 4:
            continue
        ts, _stream, tag, text = parts
        if tag == b"P":
            pending += text
            continue
        stamp = ts.decode()
        out.append((stamp, parse_time(stamp), pending + text + b"\n"))
        pending = b""
    return out


class ProcessLogs:
    def __init__(self, runtime: ProcessRuntime) -> None:
        self.runtime = runtime

    def forget_pod(self, namespace: str, pod: str) -> None:
        """Nothing to do: the sweeper removes the files together with the pod's runs."""

    def _run_dir(self, key: tuple[str, str, str], previous: bool) -> Path:
        namespace, pod, container = key
        worker = self.runtime.kubelet.workers.get(f"{namespace}/{pod}")
        runs = self.runtime.runs_of(worker.uid, container) if worker is not None and worker.uid else []
        if previous:
            if len(runs) < 2:
                raise LogError(f'previous terminated container "{container}" in pod "{pod}" not found')
            return runs[-2][0]
        if not runs:
            reason = "ContainerCreating"
            if worker is not None:
                c = next((c for c in [*worker.inits, *worker.mains, *worker.ephemerals] if c.name == container), None)
                if c is None:
                    raise LogError(f"container {container} is not valid for pod {pod}")
                reason = c.reason or reason
            raise LogError(f'container "{container}" in pod "{pod}" is waiting to start: {reason}')
        return runs[-1][0]

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
        directory = self._run_dir(key, previous)  # raises LogError before the response starts
        return self._stream(directory, follow and not previous, tail_lines, timestamps, since_seconds, limit_bytes)

    async def _stream(
        self,
        directory: Path,
        follow: bool,
        tail_lines: int | None,
        timestamps: bool,
        since_seconds: float | None,
        limit_bytes: int | None,
    ) -> AsyncIterator[bytes]:
        path = directory / "log"
        budget = limit_bytes if limit_bytes and limit_bytes > 0 else None
        offset = 0
        since = time.time() - since_seconds if since_seconds is not None else None
        first = True
        while True:
            exited = (directory / "exit.json").exists()  # before reading: no line can come after
            lines, offset, drained = read_complete_lines(path, offset)
            records = parse_lines(lines)
            if since is not None:
                records = [r for r in records if r[1] >= since]
            if first and tail_lines is not None:
                records = records[-tail_lines:] if tail_lines > 0 else []
            first = False
            chunk = b"".join((f"{r[0]} ".encode() + r[2]) if timestamps else r[2] for r in records)
            if budget is not None:
                chunk = chunk[:budget]
                budget -= len(chunk)
            if chunk:
                yield chunk
            if not follow or budget == 0 or (exited and drained) or not directory.exists():
                return
            await asyncio.sleep(FOLLOW_POLL)
