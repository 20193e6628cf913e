"""Client-side cost of one API request: RESTClient's own HTTP/1.1 pool against plain httpx.

Run: `.venv/bin/python bench/client.py [--requests 2000]`. Prints one JSON document. It starts its
own `mini-apiserver` (embedded store in a temp dir) and GETs one ConfigMap over and over, with 1, 8
and 64 requests in flight, measuring the wall time per request and the CPU this (client) process
spent per request. The second number is the one that matters for a component: a kubelet or
controller that makes thousands of requests pays it for each, on the same cores as the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from client.rest import RESTClient  # noqa: E402
from tests.support.apiserver import APIServerProcess  # noqa: E402

PATH = "/api/v1/namespaces/default/configmaps/bench"


async def measure(n: int, in_flight: int, get: Callable[[], Awaitable[Any]]) -> dict[str, float]:
    gate = asyncio.Semaphore(in_flight)

    async def one() -> None:
        async with gate:
            await get()

    await asyncio.gather(*(one() for _ in range(50)))  # warm up: connections open, code paths hot
    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one() for _ in range(n)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall_ms_per_request": round(wall / n * 1e3, 3), "client_cpu_ms_per_request": round(cpu / n * 1e3, 3)}


async def run(url: str, n: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with RESTClient(url, qps=0, burst=1) as rest:
        await rest.create("configmaps", {"metadata": {"name": "bench"}, "data": {"k": "v"}}, "default")
        for in_flight in (1, 8, 64):
            results[f"restclient_{in_flight}_in_flight"] = await measure(
                n, in_flight, lambda: rest.get("configmaps", "bench", "default")
            )
    async with httpx.AsyncClient(base_url=url, trust_env=False, timeout=httpx.Timeout(30, pool=None)) as hx:

        async def get() -> None:
            (await hx.get(PATH)).raise_for_status()

        for in_flight in (1, 8, 64):
            results[f"httpx_{in_flight}_in_flight"] = await measure(n, in_flight, get)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    server = APIServerProcess().start()
    try:
        results = asyncio.run(run(server.url, args.requests))
    finally:
        server.cleanup()
    doc = {
        "benchmark": "client",
        "requests": args.requests,
        "results": results,
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "note": "client and server share the machine; CPU is this client process's only",
    }
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
