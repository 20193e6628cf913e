"""Storage benchmark: how fast each backend writes, reads and delivers watch events.

Run: `.venv/bin/python bench/storage.py [--n 2000] [--backends sqlite,etcd]`. Prints one JSON
document. It starts its own etcd (the test-support `EtcdProcess`, free loopback ports, temp dir)
and uses a temporary SQLite directory, so it never touches a real cluster's data.

What is measured, per backend:
- sequential create / get (ops/s): one request at a time, the latency-bound case of one
  controller working through its queue;
- 16-concurrent create / get (ops/s): many components writing at once;
- watch latency (ms, p50/p99): from just before `create()` is called to the moment the watch
  yields that event — the delay a controller sees between a write and its reaction;
- etcd only: raw `aetcd` `client.put` (puts/s) on the same server in the same run, the ceiling
  for any Python etcd client, and the ratio of our create to it (sequential and concurrent),
  from interleaved rounds (see `paired_with_raw`). Our create is a transaction ("create if
  absent"), so it does a little more work than a bare put.

- sqlite-sync: the embedded store with synchronous=NORMAL (the default) against FULL (etcd's
  durability), creates/s at 1 and 16 writers, interleaved rounds, and FULL's
  cost in percent.

Goals (reported, not asserted): embedded >= 2,000 sequential writes/s and watch p99 <= 10 ms;
etcd backend >= 80% of raw aetcd puts/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from apiserver.storage.interface import Storage  # noqa: E402

CONCURRENCY = 16
WATCH_EVENTS_MIN = 500
VALUE = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"bench"},' + b'"data":{}}'


async def timed(n: int, op: Callable[[int], Awaitable[object]], concurrency: int = 1) -> float:
    """Run op(0..n-1) with `concurrency` workers; return operations per second."""
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:  # workers share one iterator: each index runs exactly once
            await op(i)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return n / (time.perf_counter() - start)


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


async def watch_latency(store: Storage, events: int) -> dict[str, float]:
    """Put one key, wait until the watch yields it, repeat; latencies in milliseconds."""
    prefix = "/registry/bench-watch/"
    start_rev = await store.current_revision() + 1
    arrived: dict[str, float] = {}
    waiting: dict[str, asyncio.Future[None]] = {}
    watch = store.watch(prefix, start_rev)

    async def consume() -> None:
        async for event in watch:
            arrived[event.key] = time.perf_counter()
            fut = waiting.pop(event.key, None)
            if fut is not None and not fut.done():
                fut.set_result(None)

    consumer = asyncio.create_task(consume())
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    try:
        for i in range(events):
            key = f"{prefix}k{i:06d}"
            waiting[key] = loop.create_future()
            sent = time.perf_counter()
            await store.create(key, VALUE)
            if key not in arrived:
                await asyncio.wait_for(waiting[key], 10)
            latencies.append((arrived[key] - sent) * 1000)
    finally:
        consumer.cancel()
        await asyncio.gather(consumer, return_exceptions=True)
        aclose = getattr(watch, "aclose", None)
        if aclose is not None:
            await aclose()
    return {
        "events": len(latencies),
        "p50_ms": round(statistics.median(latencies), 3),
        "p99_ms": round(percentile(latencies, 99), 3),
        "max_ms": round(max(latencies), 3),
    }


async def measure(store: Storage, n: int) -> dict[str, Any]:
    def seq(i: int) -> str:
        return f"/registry/bench-seq/k{i:07d}"

    def conc(i: int) -> str:
        return f"/registry/bench-conc/k{i:07d}"

    results: dict[str, Any] = {}
    results["seq_create_per_s"] = await timed(n, lambda i: store.create(seq(i), VALUE))
    results["seq_get_per_s"] = await timed(n, lambda i: store.get(seq(i)))
    results["concurrent_create_per_s"] = await timed(n, lambda i: store.create(conc(i), VALUE), CONCURRENCY)
    results["concurrent_get_per_s"] = await timed(n, lambda i: store.get(conc(i)), CONCURRENCY)
    results["watch"] = await watch_latency(store, max(WATCH_EVENTS_MIN, n // 4))
    return {k: round(v, 1) if isinstance(v, float) else v for k, v in results.items()}


async def bench_sqlite(n: int) -> dict[str, Any]:
    from apiserver.storage.sqlite import SQLiteStorage

    with tempfile.TemporaryDirectory(prefix="mini-k8s-bench-") as data_dir:
        store = await SQLiteStorage.open(Path(data_dir))
        try:
            return await measure(store, n)
        finally:
            await store.close()


async def bench_sqlite_sync(n: int, rounds: int = 3) -> dict[str, Any]:
    """The embedded store with synchronous=NORMAL against FULL, creates/s at 1 and 16 writers.

    Each round opens a fresh store per mode, alternating modes, and we keep the medians: fsync
    speed drifts during a run (other processes, page cache), alternating keeps it out of the ratio.
    FULL fsyncs the WAL once per commit; group commit lets 16 writers share one fsync.
    """
    from apiserver.storage.sqlite import SQLiteStorage

    samples: dict[str, list[float]] = {f"{m}_{c}": [] for m in ("normal", "full") for c in ("seq", "conc")}
    for _ in range(rounds):
        for mode in ("normal", "full"):
            with tempfile.TemporaryDirectory(prefix="mini-k8s-bench-") as data_dir:
                store = await SQLiteStorage.open(Path(data_dir), sync=mode)  # type: ignore[arg-type]
                try:
                    def put(i: int, where: str, store: Storage = store) -> Awaitable[object]:
                        return store.create(f"/registry/{where}/k{i:07d}", VALUE)

                    samples[f"{mode}_seq"].append(await timed(n, lambda i, put=put: put(i, "s")))
                    samples[f"{mode}_conc"].append(await timed(n, lambda i, put=put: put(i, "c"), CONCURRENCY))
                finally:
                    await store.close()
    med = {k: statistics.median(v) for k, v in samples.items()}
    return {
        "rounds": rounds,
        **{f"{k}_create_per_s": round(v, 1) for k, v in med.items()},
        "full_cost_seq_pct": round(100 * (1 - med["full_seq"] / med["normal_seq"]), 1),
        "full_cost_concurrent_pct": round(100 * (1 - med["full_conc"] / med["normal_conc"]), 1),
    }


async def paired_with_raw(store: Storage, url: str, n: int, rounds: int = 3) -> dict[str, Any]:
    """Our create against bare `aetcd` puts, alternating, `rounds` times; medians of each.

    etcd's write speed is its disk's fsync speed, which drifts during a run (other processes,
    page cache). Alternating short runs of ours and theirs and taking medians keeps that drift
    out of the ratio.
    """
    import aetcd

    host, port = url.removeprefix("http://").rsplit(":", 1)
    client = aetcd.Client(host=host, port=int(port))
    samples: dict[str, list[float]] = {"raw_seq": [], "ours_seq": [], "raw_conc": [], "ours_conc": []}
    try:
        await client.connect()
        for r in range(rounds):

            def raw(i: int, r: int = r) -> Awaitable[object]:
                return client.put(f"/raw-{r}/k{i:07d}".encode(), VALUE)

            def ours(i: int, r: int = r) -> Awaitable[object]:
                return store.create(f"/registry/pair-{r}/k{i:07d}", VALUE)

            def raw_c(i: int, r: int = r) -> Awaitable[object]:
                return client.put(f"/raw-c{r}/k{i:07d}".encode(), VALUE)

            def ours_c(i: int, r: int = r) -> Awaitable[object]:
                return store.create(f"/registry/pair-c{r}/k{i:07d}", VALUE)

            samples["raw_seq"].append(await timed(n, raw))
            samples["ours_seq"].append(await timed(n, ours))
            samples["raw_conc"].append(await timed(n, raw_c, CONCURRENCY))
            samples["ours_conc"].append(await timed(n, ours_c, CONCURRENCY))
    finally:
        await client.close()
    med = {k: statistics.median(v) for k, v in samples.items()}
    return {
        "seq_put_per_s": round(med["raw_seq"], 1),
        "concurrent_put_per_s": round(med["raw_conc"], 1),
        "paired_backend_seq_create_per_s": round(med["ours_seq"], 1),
        "paired_backend_concurrent_create_per_s": round(med["ours_conc"], 1),
        "rounds": rounds,
        "ratio_seq_create_vs_raw_put": round(med["ours_seq"] / med["raw_seq"], 3),
        "ratio_concurrent_create_vs_raw_put": round(med["ours_conc"] / med["raw_conc"], 3),
    }


async def bench_etcd(n: int) -> dict[str, Any]:
    from apiserver.storage.etcd import EtcdStorage
    from tests.support.etcd import EtcdProcess

    process = EtcdProcess()
    process.start()
    try:
        store = await EtcdStorage.connect(process.url)
        try:
            results = await measure(store, n)
            raw = await paired_with_raw(store, process.url, n)
        finally:
            await store.close()
        results["raw_aetcd"] = raw
        results["ratio_seq_create_vs_raw_put"] = raw["ratio_seq_create_vs_raw_put"]
        results["ratio_concurrent_create_vs_raw_put"] = raw["ratio_concurrent_create_vs_raw_put"]
        return results
    finally:
        process.cleanup()


def goals(report: dict[str, Any]) -> dict[str, bool]:
    met: dict[str, bool] = {}
    if "sqlite" in report:
        met["sqlite_seq_writes_ge_2000_per_s"] = report["sqlite"]["seq_create_per_s"] >= 2000
        met["sqlite_watch_p99_le_10ms"] = report["sqlite"]["watch"]["p99_ms"] <= 10
    if "sqlite-sync" in report:
        met["sqlite_full_costs_under_20pct"] = max(
            report["sqlite-sync"]["full_cost_seq_pct"], report["sqlite-sync"]["full_cost_concurrent_pct"]
        ) < 20
    if "etcd" in report:
        met["etcd_seq_create_ge_80pct_of_raw_put"] = report["etcd"]["ratio_seq_create_vs_raw_put"] >= 0.8
    return met


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="operations per measurement")
    parser.add_argument(
        "--backends", default="sqlite,sqlite-sync,etcd", help="comma-separated: sqlite,sqlite-sync,etcd"
    )
    args = parser.parse_args(argv)
    runners = {"sqlite": bench_sqlite, "sqlite-sync": bench_sqlite_sync, "etcd": bench_etcd}
    backends: dict[str, Any] = {}
    for name in [b.strip() for b in args.backends.split(",") if b.strip()]:
        if name not in runners:
            parser.error(f"unknown backend {name!r}; choose from {', '.join(runners)}")
        backends[name] = await runners[name](args.n)
    report = {
        "n": args.n,
        "concurrency": CONCURRENCY,
        "python": platform.python_version(),
        "backends": backends,
        "goals": goals(backends),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
