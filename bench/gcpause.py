"""Stalls as the watch cache grows: how long a tiny request can wait while the API server fills up.

Run: `.venv/bin/python bench/gcpause.py [--pods 16000] [--source DIR]`. Prints one JSON document.
It starts its own `mini-apiserver` (embedded store), and creates `--pods` pods with 16 clients
while a probe (a separate process, so the creates' CPU does not skew its clock) GETs `/livez`
every 20 ms. `/livez` does no work, so its latency is the time the server's event loop was busy
with something else: mostly other requests, and, without api/gcfreeze.py, a full garbage
collection that visits every object of the cache (0.4 s at 16,000 pods, growing with the cache).

Reported per quarter of the run (by pods stored): the probe's p50/p99/max, and the server's RSS at
the end. `--source DIR` runs the server from another checkout (e.g. the commit before), for a
before/after comparison on the same machine.

No goal from an issue: reported, not asserted (issue 11 asks that health checks and Lease renewals
never wait behind user traffic; a stop-the-world pass is the one wait no priority level avoids).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere
sys.path.insert(0, str(Path(__file__).resolve().parent))

from overload import SourceServer, pod, rss_mb, summary  # noqa: E402

from client.http1 import ConnectionPool  # noqa: E402
from client.rest import RESTClient  # noqa: E402

NAMESPACE = "gcpause"
PROBE_INTERVAL = 0.02


async def probe(url: str, stop: Any, out: Any) -> None:
    """(when, latency) of a /livez due every PROBE_INTERVAL until `stop` is set.

    The GETs are due on a fixed schedule and each latency counts from when it was due, not when
    it could be sent: a 300 ms stall then shows as the 15 probes it held up, not as one. `when`
    is the due time on the monotonic clock, which every process of the machine shares."""
    samples: list[tuple[float, float]] = []
    pool = ConnectionPool(url, max_connections=1, timeout=60)
    due = time.monotonic()
    while not stop.is_set():
        ahead = due - time.monotonic()
        if ahead > 0:
            await asyncio.sleep(ahead)
        resp = await pool.request("GET", "/livez")
        if resp.status_code == 200:
            samples.append((due, time.monotonic() - due))
        due += PROBE_INTERVAL
    await pool.aclose()
    out.put(samples)


def _probe_process(url: str, stop: Any, out: Any) -> None:
    asyncio.run(probe(url, stop, out))


async def fill(url: str, pods: int) -> list[float]:
    """Create the pods with 16 clients; returns when each quarter of them was stored (monotonic)."""
    marks: list[float] = []
    quarters = {pods * k // 4 for k in range(1, 5)}
    done = 0
    async with RESTClient(url, qps=0, burst=1, max_inflight=16) as c:
        await c.create("namespaces", {"metadata": {"name": NAMESPACE}})
        sem = asyncio.Semaphore(16)

        async def one(i: int) -> None:
            nonlocal done
            async with sem:
                await c.create("pods", pod(f"p-{i:06d}"), NAMESPACE)
            done += 1
            if done in quarters:
                marks.append(time.monotonic())

        await asyncio.gather(*(one(i) for i in range(pods)))
    return marks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=16000)
    parser.add_argument("--source", default=None, help="run the API server from this checkout")
    args = parser.parse_args()
    server = SourceServer(args.source).start()
    assert server.proc is not None
    ctx = multiprocessing.get_context("spawn")
    stop, out = ctx.Event(), ctx.Queue()
    prober = ctx.Process(target=_probe_process, args=(server.url, stop, out))
    try:
        prober.start()
        time.sleep(1.0)  # let the probe start and connect
        began = time.monotonic()
        marks = asyncio.run(fill(server.url, args.pods))
        stop.set()
        samples = out.get(timeout=60)
        prober.join(10)
        rss = rss_mb(server.proc.pid)
    finally:
        server.cleanup()
    bounds = [began, *marks]
    quarters = []
    for i in range(1, len(bounds)):
        lo, hi = bounds[i - 1], bounds[i]
        quarters.append({
            "pods_stored_up_to": args.pods * i // 4,
            "livez": summary([lat for at, lat in samples if lo <= at < hi]),
        })  # fmt: skip
    print(json.dumps({
        "benchmark": "gcpause", "pods": args.pods, "source": args.source or "this checkout",
        "fill_s": round(marks[-1] - began, 1) if marks else None, "by_quarter": quarters,
        "livez_during_fill": summary([lat for at, lat in samples if began <= at]), "server_rss_mb": rss,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
