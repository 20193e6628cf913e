"""Watch on the embedded store: replay from the log, hand over to the live broadcast without a gap
or a duplicate, survive a slow consumer, and release everything on aclose()/close()."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest

from apiserver.storage.interface import Compacted, Unavailable
from apiserver.storage.sqlite import SQLiteStorage
from tests.storage_sqlite.conftest import Opener
from tests.storage_sqlite.helpers import take, wait_until

PREFIX = "/registry/pods/"


async def test_replay_hands_over_to_live_events_without_gap_or_duplicate(store: SQLiteStorage) -> None:
    # Enough history for several replay pages, then writers that keep going while the watch
    # replays, subscribes and goes live: every revision must come exactly once, in order.
    for i in range(1200):
        await store.create(f"{PREFIX}default/old-{i:04d}", b"old")
    stop = asyncio.Event()

    async def writer(name: str) -> None:
        n = 0
        while not stop.is_set():
            await store.create(f"{PREFIX}{name}/new-{n:05d}", b"new")
            n += 1
            await asyncio.sleep(0)

    writers = [asyncio.create_task(writer(f"w{i}")) for i in range(4)]
    try:
        async with aclosing(store.watch(PREFIX, 1)) as watch:
            events = await take(watch, 1200)
            while store.live_watchers == 0:  # replaying until caught up, then it subscribes
                events.extend(await take(watch, 1))
            target = await store.current_revision() + 200  # and now well into the live part
            while events[-1].revision < target:
                events.extend(await take(watch, 1))
    finally:
        stop.set()
        await asyncio.gather(*writers)
    assert [e.revision for e in events] == list(range(1, events[-1].revision + 1))
    assert all(e.type == "ADDED" for e in events)


async def test_watch_from_now_then_writes_are_seen_even_before_first_iteration(store: SQLiteStorage) -> None:
    await store.create(f"{PREFIX}default/before", b"x")
    async with aclosing(store.watch(PREFIX, 0)) as watch:
        rev = await store.create(f"{PREFIX}default/after", b"y")
        event = (await take(watch, 1))[0]
    assert (event.type, event.key, event.revision) == ("ADDED", f"{PREFIX}default/after", rev)


async def test_events_carry_values_and_previous_values(store: SQLiteStorage) -> None:
    key = f"{PREFIX}default/p"
    async with aclosing(store.watch(PREFIX, 0)) as live:
        rev = await store.create(key, b"v1")
        rev = await store.update(key, b"v2", rev)
        await store.delete(key, expected_revision=rev)
        seen_live = await take(live, 3)
    async with aclosing(store.watch(PREFIX, seen_live[0].revision)) as replay:
        replayed = await take(replay, 3)
    expected = [("ADDED", b"v1", None), ("MODIFIED", b"v2", b"v1"), ("DELETED", b"v2", b"v2")]
    assert [(e.type, e.value, e.prev_value) for e in seen_live] == expected
    assert replayed == seen_live, "the log replays exactly what the broadcast delivered"


async def test_a_slow_watcher_falls_back_to_the_log_instead_of_growing_memory(open_store: Opener) -> None:
    store = await open_store(watch_queue_size=5)
    async with aclosing(store.watch(PREFIX, 0)) as watch:
        first = await store.create(f"{PREFIX}default/p-000", b"x")
        assert (await take(watch, 1))[0].revision == first  # live now
        for i in range(1, 100):  # 99 events while nobody reads: the inbox overflows
            await store.create(f"{PREFIX}default/p-{i:03d}", b"x")
        rest = await take(watch, 99)
    assert [e.revision for e in rest] == list(range(first + 1, first + 100))


async def test_a_slow_watcher_overtaken_by_compaction_gets_compacted(open_store: Opener) -> None:
    store = await open_store(watch_queue_size=5)
    async with aclosing(store.watch(PREFIX, 0)) as watch:
        rev = await store.create(f"{PREFIX}default/p", b"0")
        assert (await take(watch, 1))[0].revision == rev
        for i in range(20):
            rev = await store.update(f"{PREFIX}default/p", b"%d" % (i + 1), rev)
        await store.compact(rev)  # the revisions the watcher still needs are gone
        with pytest.raises(Compacted):
            await take(watch, 20)


async def test_aclose_releases_the_watch(store: SQLiteStorage) -> None:
    watch = store.watch(PREFIX, 0)
    pending = asyncio.ensure_future(anext(watch))
    await wait_until(lambda: store.live_watchers == 1)
    await store.create(f"{PREFIX}default/a", b"x")
    assert (await asyncio.wait_for(pending, 5)).key == f"{PREFIX}default/a"
    await watch.aclose()
    assert store.live_watchers == 0
    await store.create(f"{PREFIX}default/b", b"x")  # nobody left to deliver to; no error


async def test_cancelling_a_waiting_watch_releases_it(store: SQLiteStorage) -> None:
    watch = store.watch(PREFIX, 0)
    pending = asyncio.ensure_future(anext(watch))
    await wait_until(lambda: store.live_watchers == 1)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert store.live_watchers == 0


async def test_closing_the_store_ends_a_waiting_watch_with_unavailable(store: SQLiteStorage) -> None:
    watch = store.watch(PREFIX, 0)
    pending = asyncio.ensure_future(anext(watch))
    await wait_until(lambda: store.live_watchers == 1)
    await store.close()
    with pytest.raises(Unavailable):
        await asyncio.wait_for(pending, 5)
    with pytest.raises(Unavailable):
        await anext(store.watch(PREFIX, 1))


async def test_a_commit_reaches_exactly_the_watches_whose_prefix_holds_each_key(store: SQLiteStorage) -> None:
    # The broadcast routes events by their resource root: nested, broader, unrelated and
    # look-alike prefixes must each get exactly their keys, in commit order, from commits that
    # mix resources (writes queued together share one transaction). The end markers, written
    # last, prove nothing else was delivered before them.
    prefixes = ["/registry/pods/", "/registry/pods/ns1/", "/registry/", "", "/registry/podsx/", "/registry/po"]
    watches = [store.watch(p, 0) for p in prefixes]
    firsts = [asyncio.ensure_future(anext(w)) for w in watches]
    await wait_until(lambda: store.live_watchers == len(prefixes))
    keys = ["/registry/pods/ns1/a", "/registry/podsx/ns1/b", "/registry/services/ns1/c", "/registry/pods/ns2/d",
            "/other/e", "compact_rev_key", "/registry/pods/ns1/f"]  # fmt: skip
    await asyncio.gather(*(store.create(k, b"v") for k in keys))
    markers = ["/registry/pods/ns1/zz-end", "/registry/podsx/zz-end"]
    await asyncio.gather(*(store.create(k, b"end") for k in markers))
    try:
        for prefix, watch, first in zip(prefixes, watches, firsts, strict=True):
            wanted = [k for k in keys + markers if k.startswith(prefix)]
            got = [await asyncio.wait_for(first, 10), *await take(watch, len(wanted) - 1)]
            assert sorted(e.key for e in got) == sorted(wanted), prefix
            assert [e.revision for e in got] == sorted(e.revision for e in got), prefix
    finally:
        for first in firsts:  # a watch still waiting for its first event cannot be closed under it
            first.cancel()
        await asyncio.gather(*firsts, return_exceptions=True)
        for w in watches:
            await w.aclose()
