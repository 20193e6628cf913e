"""A server's own CPU time, read from /proc, and waiting until it is idle.

The benchmarks that judge a server by "requests per second of its CPU" share the machine's two
cores with their client, so wall-clock throughput mixes the client's cost in. Reading the
server's utime + stime around a chunk of requests counts only the server. Much of a request's
cost comes after its answer (the watch cache decodes the write, the store checkpoints, a garbage
collection runs): `settle()` before and after a chunk charges that work to the chunk that caused
it, not to whatever runs next.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
IDLE_CPU_S = 0.01  # at most this much CPU in a sampling period counts as idle
SAMPLE_S = 0.1


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


async def settle(pid: int, limit_s: float = 5.0) -> None:
    """Return once the process spent at most IDLE_CPU_S in one SAMPLE_S (or after `limit_s`)."""
    for _ in range(int(limit_s / SAMPLE_S)):
        before = cpu_seconds(pid)
        await asyncio.sleep(SAMPLE_S)  # the sampling period of a wait-for-condition
        if cpu_seconds(pid) - before <= IDLE_CPU_S:
            return
