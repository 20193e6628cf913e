"""API server benchmark: what a client sees over HTTP, end to end, on each storage backend.

Run: `.venv/bin/python bench/apiserver.py [--backends sqlite,etcd] [--quick]`. Prints one JSON
document. It starts its own `mini-apiserver` process per backend (embedded store in a temp dir; for
etcd, its own etcd via the test-support `EtcdProcess`), so it never touches a real cluster.

What is measured, per backend (pods of ~1 KB, in namespaces of their own):
- creates/s and gets/s with 1 client (latency-bound: one controller working through its queue)
  and with 16 concurrent clients (each its own connection: many components at once); the clients
  are the project's RESTClient, as components use it (client CPU per request: bench/client.py);
- listing all pods of a namespace (5,000 of them; 1,000 with --quick): wall time and response
  bytes, as JSON read from storage (a `limit` above the count: paged lists are read from storage),
  as the latest JSON (no resourceVersion: from the watch cache once it caught up), as JSON from
  the watch cache (`resourceVersion=0`, what informers ask for), and as the Table `kubectl get`
  asks for;
- watch fan-out: 100 concurrent watchers stream `?watch=1&resourceVersion=N`; pods are then
  created at a modest steady rate, and for each event we record create-sent -> delivered-to-each-
  watcher latency: p50/p99 over all deliveries, and p99 of "delivered to all watchers";
- raw storage creates/s in this process, with no HTTP (SQLiteStorage in a temp dir; EtcdStorage on
  the same etcd), and the ratio api/raw: how much of the store's speed survives the API server.

Goals (reported, not asserted): >= 800 creates/s with 16 clients on the embedded store, fan-out
p99 <= 50 ms with 100 watchers, a 5,000-pod list <= 500 ms. Client and server share the machine:
on 2 cores the client's own CPU use is part of every number, so treat them as lower bounds.

What security costs (issue 12 asks it of this benchmark: HTTPS + token + RBAC against the same
server without them, in one run) is bench/security.py's: it needs one server with both ports, a
token file and RBAC, and a run long enough to tell a 15 % goal from this machine's noise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from client.rest import RESTClient  # noqa: E402
from tests.support.apiserver import APIServerProcess  # noqa: E402

CONCURRENCY = 16
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
GOALS = {"creates_per_s_16_clients_sqlite": 800, "fanout_p99_ms": 50, "list_5000_ms": 500}


def pod(name: str) -> dict[str, Any]:
    """A pod of about 1 KB on the wire once the server has added its metadata and defaults."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app": "bench", "tier": "web", "release": "stable"},
            "annotations": {"bench.mini-k8s.io/padding": "p" * 200},
        },
        "spec": {
            "containers": [{
                "name": "web",
                "image": "nginx:1.25",
                "ports": [{"containerPort": 80, "name": "http"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                "env": [{"name": "MODE", "value": "bench"}],
            }],
        },
    }


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


async def ensure_namespace(c: httpx.AsyncClient, name: str) -> None:
    r = await c.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert r.status_code in (201, 409), r.text


async def rate(n: int, op: Callable[[RESTClient, int], Awaitable[None]], url: str, clients: int) -> float:
    """Run op(client, 0..n-1) over `clients` connections, one worker each; operations per second.
    Each client is the project's own RESTClient (what every component uses) with one connection."""
    counter = iter(range(n))
    pool = [RESTClient(url, qps=0, burst=1, max_inflight=1, timeout=30.0) for _ in range(clients)]

    async def worker(c: RESTClient) -> None:
        for i in counter:  # workers share one iterator: each index runs exactly once
            await op(c, i)

    try:
        await asyncio.gather(*(c.raw("GET", "/readyz") for c in pool))  # open every connection first
        start = time.perf_counter()
        await asyncio.gather(*(worker(c) for c in pool))
        return round(n / (time.perf_counter() - start), 1)
    finally:
        await asyncio.gather(*(c.aclose() for c in pool))


async def crud(url: str, ns: str, n_seq: int, n_conc: int) -> dict[str, float]:
    def create(prefix: str) -> Callable[[RESTClient, int], Awaitable[None]]:
        async def op(c: RESTClient, i: int) -> None:
            await c.create("pods", pod(f"{prefix}-{i:05d}"), ns)

        return op

    def get(prefix: str) -> Callable[[RESTClient, int], Awaitable[None]]:
        async def op(c: RESTClient, i: int) -> None:
            await c.get("pods", f"{prefix}-{i:05d}", ns)

        return op

    return {
        "creates_per_s_1_client": await rate(n_seq, create("seq"), url, 1),
        "creates_per_s_16_clients": await rate(n_conc, create("conc"), url, CONCURRENCY),
        "gets_per_s_1_client": await rate(n_seq, get("seq"), url, 1),
        "gets_per_s_16_clients": await rate(n_conc, get("conc"), url, CONCURRENCY),
    }


async def listing(c: httpx.AsyncClient, ns: str, expect: int, rounds: int = 3) -> dict[str, Any]:
    """Best and median of a few full lists, each variant; bytes of the response body."""
    out: dict[str, Any] = {"pods": expect}
    variants = {
        "json_from_storage": ({"limit": str(expect + 1)}, {}),
        "json_latest": ({}, {}),
        "json_from_watch_cache_rv0": ({"resourceVersion": "0"}, {}),
        "table": ({}, {"accept": TABLE}),
    }
    for label, (params, headers) in variants.items():
        times, size = [], 0
        for _ in range(rounds):
            start = time.perf_counter()
            r = await c.get(f"/api/v1/namespaces/{ns}/pods", params=params, headers=headers)
            times.append(time.perf_counter() - start)
            assert r.status_code == 200, r.text[:300]
            body = r.json()
            count = len(body.get("items") or body.get("rows") or [])
            assert count == expect, f"{label}: listed {count} pods, expected {expect}"
            size = len(r.content)
        out[label] = {"best_ms": ms(min(times)), "median_ms": ms(statistics.median(times)), "bytes": size}
    return out


async def fanout(url: str, ns: str, watchers: int, events: int, per_second: float) -> dict[str, Any]:
    """Open `watchers` streams, create `events` pods at a steady rate, time every delivery."""
    async with httpx.AsyncClient(base_url=url, timeout=30.0) as c:
        await ensure_namespace(c, ns)
        rv = (await c.get(f"/api/v1/namespaces/{ns}/pods")).json()["metadata"]["resourceVersion"]
    sent: dict[str, float] = {}
    delivered: dict[str, list[float]] = {}
    connected = 0
    all_connected = asyncio.Event()
    done = asyncio.Event()
    limits = httpx.Limits(max_connections=watchers + 4, max_keepalive_connections=watchers + 4)
    wc = httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(30.0, read=None), limits=limits)

    async def watch() -> None:
        nonlocal connected
        params = {"watch": "1", "resourceVersion": rv}
        async with wc.stream("GET", f"/api/v1/namespaces/{ns}/pods", params=params) as r:
            assert r.status_code == 200
            connected += 1
            if connected == watchers:
                all_connected.set()
            async for line in r.aiter_lines():
                now = time.perf_counter()
                if not line:
                    continue
                ev = json.loads(line)
                if ev["type"] == "ADDED":
                    delivered.setdefault(ev["object"]["metadata"]["name"], []).append(now)
                    if len(delivered) == events and all(len(v) == watchers for v in delivered.values()):
                        done.set()

    tasks = [asyncio.create_task(watch()) for _ in range(watchers)]
    try:
        await asyncio.wait_for(all_connected.wait(), 30)
        async with httpx.AsyncClient(base_url=url, timeout=30.0) as c:
            start = time.perf_counter()
            for i in range(events):
                name = f"fan-{i:05d}"
                # Steady rate: sleep until this event's slot (a schedule, not a guess).
                await asyncio.sleep(max(0.0, start + i / per_second - time.perf_counter()))
                sent[name] = time.perf_counter()
                r = await c.post(f"/api/v1/namespaces/{ns}/pods", json=pod(name))
                assert r.status_code == 201, r.text
        await asyncio.wait_for(done.wait(), 60)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await wc.aclose()
    each = [t - sent[name] for name, times in delivered.items() for t in times]
    to_all = [max(times) - sent[name] for name, times in delivered.items()]
    return {
        "watchers": watchers,
        "events": events,
        "create_rate_per_s": per_second,
        "deliveries": len(each),
        "p50_ms": ms(statistics.median(each)),
        "p99_ms": ms(percentile(each, 99)),
        "max_ms": ms(max(each)),
        "delivered_to_all_p50_ms": ms(statistics.median(to_all)),
        "delivered_to_all_p99_ms": ms(percentile(to_all, 99)),
    }


async def raw_storage(backend: str, etcd_url: str | None, n_seq: int, n_conc: int) -> dict[str, float]:
    """The store's own create rate in this process, with a value the size of a stored pod."""
    value = json.dumps(pod("raw") | {"status": {"phase": "Pending", "qosClass": "Burstable"}}).encode()
    tmp = tempfile.TemporaryDirectory(prefix="mini-k8s-bench-raw-")
    if backend == "sqlite":
        from apiserver.storage.sqlite import SQLiteStorage

        store: Any = await SQLiteStorage.open(tmp.name)
    else:
        from apiserver.storage.etcd import EtcdStorage

        store = await EtcdStorage.connect(etcd_url or "", prefix=f"/bench-raw-{os.getpid()}")

    async def timed(n: int, key: str, concurrency: int) -> float:
        counter = iter(range(n))

        async def worker() -> None:
            for i in counter:
                await store.create(f"/registry/pods/{key}/p{i:06d}", value)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return round(n / (time.perf_counter() - start), 1)

    try:
        return {
            "raw_creates_per_s_1": await timed(n_seq, "seq", 1),
            "raw_creates_per_s_16": await timed(n_conc, "conc", CONCURRENCY),
        }
    finally:
        await store.close()
        tmp.cleanup()


async def bench_backend(backend: str, quick: bool) -> dict[str, Any]:
    n_seq, n_conc = (300, 700) if quick else (1000, 4000)
    watchers, events, per_second = 100, (60 if quick else 200), 20.0
    etcd = None
    if backend == "etcd":
        from tests.support.etcd import EtcdProcess

        etcd = EtcdProcess().start()
    server = APIServerProcess(etcd_url=etcd.url if etcd else None).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60.0) as c:
            await ensure_namespace(c, "bench")
            result: dict[str, Any] = {"api": await crud(server.url, "bench", n_seq, n_conc)}
            result["list"] = await listing(c, "bench", n_seq + n_conc)
        result["watch_fanout"] = await fanout(server.url, "bench-watch", watchers, events, per_second)
        result["raw_storage"] = await raw_storage(backend, etcd.url if etcd else None, n_seq, n_conc)
        api, raw = result["api"], result["raw_storage"]
        result["ratio_api_to_raw"] = {
            "creates_1": round(api["creates_per_s_1_client"] / raw["raw_creates_per_s_1"], 3),
            "creates_16": round(api["creates_per_s_16_clients"] / raw["raw_creates_per_s_16"], 3),
        }
        return result
    finally:
        server.cleanup()
        if etcd is not None:
            etcd.cleanup()


def goals(results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    sqlite = results.get("sqlite")
    if sqlite:
        got = sqlite["api"]["creates_per_s_16_clients"]
        out["creates_per_s_16_clients_sqlite"] = {"goal": ">= 800", "got": got, "met": got >= 800}
    for name, r in results.items():
        p99 = r["watch_fanout"]["p99_ms"]
        out[f"fanout_p99_ms_{name}"] = {"goal": "<= 50", "got": p99, "met": p99 <= 50}
        if r["list"]["pods"] >= 5000:
            t = r["list"]["json_from_storage"]["best_ms"]
            out[f"list_5000_ms_{name}"] = {"goal": "<= 500", "got": t, "met": t <= 500}
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="sqlite,etcd", help="comma separated: sqlite, etcd")
    parser.add_argument("--quick", action="store_true", help="fewer objects and events (a smoke run)")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        results[backend] = await bench_backend(backend, args.quick)
    print(json.dumps({
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "quick": args.quick,
        "results": results,
        "goals": goals(results),
        "note": "client and server share the machine; numbers include the client's CPU use",
    }, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
