"""WorkQueue: client-go's contract - dedup, one worker per key, rate-limited retries."""

from __future__ import annotations

import asyncio
import random

import pytest

from client.workqueue import ItemExponentialFailureRateLimiter, ShutDown, WorkQueue


async def test_duplicates_collapse_into_one_queued_key() -> None:
    q: WorkQueue[str] = WorkQueue()
    for key in ["a", "a", "b", "a", "b"]:
        q.add(key)
    assert len(q) == 2
    assert [await q.get(), await q.get()] == ["a", "b"]
    assert len(q) == 0


async def test_a_key_added_while_processing_comes_back_only_after_done() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    assert await q.get() == "a"
    q.add("a")
    q.add("a")
    assert len(q) == 0  # not handed out again while a worker holds it
    q.done("a")
    assert len(q) == 1  # ...but not lost either: once, after done
    assert await q.get() == "a"
    q.done("a")
    assert len(q) == 0


async def test_no_key_is_ever_processed_by_two_workers_at_once() -> None:
    q: WorkQueue[int] = WorkQueue()
    in_progress: set[int] = set()
    overlaps: list[int] = []
    processed: list[int] = []
    rng = random.Random(7)

    async def worker() -> None:
        while True:
            try:
                key = await q.get()
            except ShutDown:
                return
            if key in in_progress:
                overlaps.append(key)
            in_progress.add(key)
            for _ in range(rng.randint(0, 3)):
                await asyncio.sleep(0)  # let other workers and producers run mid-processing
            in_progress.discard(key)
            processed.append(key)
            q.done(key)

    async def producer() -> None:
        for _ in range(2000):
            q.add(rng.randint(0, 9))
            if rng.random() < 0.3:
                await asyncio.sleep(0)

    workers = [asyncio.create_task(worker()) for _ in range(8)]
    await producer()
    while len(q) or q.processing:
        await asyncio.sleep(0.001)
    q.shutdown()
    await asyncio.wait_for(asyncio.gather(*workers), 5)
    assert overlaps == []
    assert set(processed) == set(range(10))
    assert len(processed) < 2000  # duplicates collapsed


async def test_backoff_grows_exponentially_and_forget_resets_it() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    assert [limiter.when("k") for _ in range(4)] == [0.005, 0.01, 0.02, 0.04]
    assert limiter.num_requeues("k") == 4
    assert limiter.when("other") == 0.005  # per item
    limiter.forget("k")
    assert limiter.num_requeues("k") == 0
    assert limiter.when("k") == 0.005
    capped = ItemExponentialFailureRateLimiter[str](base_delay=0.005, max_delay=1000.0)
    assert [capped.when("x") for _ in range(40)][-1] == 1000.0


async def test_add_rate_limited_delays_the_key_and_counts_requeues() -> None:
    q: WorkQueue[str] = WorkQueue(rate_limiter=ItemExponentialFailureRateLimiter(base_delay=0.1))
    q.add_rate_limited("k")
    assert len(q) == 0 and q.num_requeues("k") == 1  # waiting out its backoff, not queued yet
    assert await asyncio.wait_for(q.get(), 2) == "k"
    q.done("k")
    q.add_rate_limited("k")  # second failure: 0.2 s
    assert q.num_requeues("k") == 2
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(q.get(), 0.05)
    assert await asyncio.wait_for(q.get(), 2) == "k"
    q.done("k")
    q.forget("k")
    assert q.num_requeues("k") == 0


async def test_add_after_keeps_the_earliest_time() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add_after("k", 60)
    q.add_after("k", 0.01)
    assert await asyncio.wait_for(q.get(), 2) == "k"
    q.done("k")
    q.shutdown()  # cancels the remaining timers


async def test_shutdown_drains_queued_keys_then_stops_workers() -> None:
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    waiting = asyncio.create_task(q.get())
    assert await asyncio.wait_for(waiting, 1) == "a"
    idle = asyncio.create_task(q.get())
    q.add("b")
    assert await asyncio.wait_for(idle, 1) == "b"
    q.add("c")
    q.shutdown()
    q.add("d")  # ignored after shutdown
    assert await q.get() == "c"
    with pytest.raises(ShutDown):
        await q.get()
    blocked_before: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(blocked_before.get())
    await asyncio.sleep(0)
    blocked_before.shutdown()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, 1)
