"""A server's own CPU time, read from /proc, waiting until it is idle, and chunks of requests measured by both.

The benchmarks that judge a server by "requests per second of its CPU" share the machine's two
cores with their client, so wall-clock throughput mixes the client's cost in. Reading the
server's CPU time around a chunk of requests counts only the server. Much of a request's
cost comes after its answer (the watch cache decodes the write, the store checkpoints, a garbage
collection runs): `settle()` before and after a chunk charges that work to the chunk that caused
it, not to whatever runs next.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

CLK_TCK = os.sysconf("SC_CLK_TCK")
IDLE_CPU_S = 0.01  # at most this much CPU in a sampling period counts as idle
SAMPLE_S = 0.1


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds (fields 14 and 15 of /proc/<pid>/stat): every thread
    it ever ran, ended ones too, in clock ticks (10 ms)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def threads_cpu_seconds(pid: int) -> float:
    """CPU time of a process's live threads, in seconds, to the nanosecond.

    From each thread's /proc/<pid>/task/<tid>/schedstat (its first field is the time it ran, in
    ns). `cpu_seconds` counts in ticks of 10 ms: ±4 % of a chunk of 500 GETs. A thread that ended
    between two readings takes its time with it, so this is for a process that keeps its threads,
    as the API server does (the store's writer, the executor's pool)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # the thread ended while we looked
            continue
    return total / 1e9


async def settle(pid: int, limit_s: float = 5.0) -> None:
    """Return once the process spent at most IDLE_CPU_S in one SAMPLE_S (or after `limit_s`), read
    with the same clock as the chunk it brackets (`threads_cpu_seconds`; in ticks of 10 ms, the
    threshold itself was one tick)."""
    for _ in range(int(limit_s / SAMPLE_S)):
        before = threads_cpu_seconds(pid)
        await asyncio.sleep(SAMPLE_S)  # the sampling period of a wait-for-condition
        if threads_cpu_seconds(pid) - before <= IDLE_CPU_S:
            return


Chunk = dict[str, float]  # requests, s (wall clock), cpu_s (the server's, idle to idle)


class Answer(Protocol):
    """What `chunk` reads of a response: httpx's and bench/rawhttp.py's alike."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...


C = TypeVar("C")


async def chunk(
    clients: Sequence[C], total: int, make: Callable[[C, str], Awaitable[Answer]], server_pid: int, expected: int,
) -> Chunk:  # fmt: skip
    """`total` requests, `make(client, "n")` for n in 0..total-1; each must answer `expected`.

    The clients take the next number as each finishes its last request, so all of them keep the
    server busy until the last few requests. (Until 2026-11-28 each made total/clients requests
    of its own: the ones that finished early left a tail with fewer clients, which judged the
    server at a lower concurrency than the chunk's.)"""
    numbers = iter(range(total))

    async def worker(c: C) -> None:
        for n in numbers:
            r = await make(c, str(n))
            if r.status_code != expected:
                raise RuntimeError(f"{r.status_code}: {r.text[:200]}")

    await settle(server_pid)
    cpu = threads_cpu_seconds(server_pid)
    started = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in clients))
    seconds = time.perf_counter() - started
    await settle(server_pid)  # what the requests set going after their answers is theirs
    return {"requests": total, "s": seconds, "cpu_s": threads_cpu_seconds(server_pid) - cpu}


def rates(chunks: list[Chunk]) -> tuple[float, float]:
    """(requests per second, requests per second of server CPU) over `chunks`."""
    requests = sum(c["requests"] for c in chunks)
    return requests / sum(c["s"] for c in chunks), requests / sum(c["cpu_s"] for c in chunks)


def fastest_quarter(chunks: list[Chunk]) -> float:
    """Requests per second of server CPU in the quarter of `chunks` that cost the least a request.

    Why not only the totals: on a shared machine, identical chunks of 1,000 GETs cost the server
    147-335 ms of CPU (30 in a row, 2026-11-28), never less than the floor but often far above it:
    another tenant's load, a full garbage collection of the whole cache, a compaction. None of that
    depends on what the chunk measured, and one such chunk moves a total of eight by 10 %. The
    cheapest quarter is what the requests themselves cost. Reported beside the totals, not
    instead of them: the totals are what the server sustained."""
    per_request = sorted(c["cpu_s"] / c["requests"] for c in chunks)
    quarter = per_request[: max(1, round(len(per_request) / 4))]
    return len(quarter) / sum(quarter)


def spread(chunks: list[Chunk], baseline: list[Chunk], figure: int) -> dict[str, float]:
    """Min, median and max over the cycles of one chunk's rate over its baseline's, the chunks of
    both taken in turns (`figure` 0: per second, 1: per second of server CPU)."""
    single = sorted(rates([c])[figure] / rates([b])[figure] for c, b in zip(chunks, baseline, strict=True))
    return {"min": round(single[0], 3), "median": round(statistics.median(single), 3), "max": round(single[-1], 3)}
