"""Watch: every change after a revision, in order, exactly once — across the replay→live seam.

An informer lists at revision R and then watches from R+1. If the watch dropped or repeated one
event its cache would be wrong forever (level-triggered controllers would act on a ghost). The
hard part for a backend is the handover: it first replays history from its log, then switches
to live notifications, and writes that land *while* it switches must appear once, not zero or
two times. The tests below write continuously while a watch starts from the past.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest

from apiserver.storage.interface import Compacted, Storage, WatchEvent
from tests.storage.conftest import Harness, SQLiteHarness
from tests.storage.helpers import (
    collect,
    collect_until_key,
    next_event,
    summary,
    write_mix,
    write_then_mark_done,
)


async def test_watch_from_a_past_revision_replays_every_event_in_order(store: Storage) -> None:
    start = await store.current_revision() + 1
    expected = await write_mix(store, "/registry/pods/default/", 40)
    async with aclosing(store.watch("/registry/pods/", start)) as watch:
        events = await collect(watch, until_revision=expected[-1][3])
    assert summary(events) == expected


async def test_watch_from_the_middle_starts_exactly_at_that_revision(store: Storage) -> None:
    expected = await write_mix(store, "/registry/pods/default/", 20)
    middle = expected[10][3]
    async with aclosing(store.watch("/registry/pods/", middle)) as watch:
        events = await collect(watch, until_revision=expected[-1][3])
    assert summary(events) == expected[10:]


async def test_deleted_event_carries_the_last_value_as_prev_value(store: Storage) -> None:
    key = "/registry/secrets/default/s"
    created = await store.create(key, b"v1")
    updated = await store.update(key, b"v2", created)
    deleted = await store.delete(key)
    async with aclosing(store.watch("/registry/secrets/", created)) as watch:
        added, modified, gone = await collect(watch, until_revision=deleted)
    assert (added.type, added.value, added.revision) == ("ADDED", b"v1", created)
    assert (modified.type, modified.value, modified.revision) == ("MODIFIED", b"v2", updated)
    assert modified.prev_value in (None, b"v1")  # optional for MODIFIED, but never wrong
    assert (gone.type, gone.key, gone.revision) == ("DELETED", key, deleted)
    assert gone.value == b"v2"
    assert gone.prev_value == b"v2"


async def test_live_events_arrive_after_replay_exactly_once(store: Storage) -> None:
    """Writes keep landing while the watch replays history and switches to live mode."""
    await write_mix(store, "/registry/pods/default/", 30)  # older history under a sibling prefix
    for round_ in range(4):
        prefix = f"/registry/pods/r{round_}/"
        done = f"{prefix}zz-done"
        start = await store.current_revision() + 1
        expected = await write_mix(store, prefix, 15)  # history the watch must replay first
        async with aclosing(store.watch(prefix, start)) as watch:
            # Watcher and writer run together: the watch catches up on the history and goes
            # live while writes keep coming. Who starts first varies by round.
            tasks = [collect_until_key(watch, done), write_then_mark_done(store, prefix, 6, done)]
            if round_ % 2:
                tasks.reverse()
            results = await asyncio.gather(*tasks)
        events, written = (results[0], results[1]) if round_ % 2 == 0 else (results[1], results[0])
        assert summary(events) == expected + written, f"round {round_}"


async def test_a_caught_up_watch_gets_new_writes_live(store: Storage) -> None:
    start = await store.current_revision() + 1
    async with aclosing(store.watch("/registry/pods/", start)) as watch:
        pending = asyncio.ensure_future(anext(watch))
        # Let the watch go idle on the live path. The embedded store lets us observe that; for
        # etcd a short pause makes it likely. Correctness of the assertions does not depend on it.
        if hasattr(store, "live_watchers"):
            async with asyncio.timeout(5):
                while store.live_watchers < 1:
                    await asyncio.sleep(0.001)
        else:
            await asyncio.sleep(0.05)
        assert not pending.done()
        expected = await write_then_mark_done(store, "/registry/pods/default/", 5, "/registry/pods/zz-done")
        first = await asyncio.wait_for(pending, 5)
        rest = await collect_until_key(watch, "/registry/pods/zz-done")
    assert summary([first, *rest]) == expected


async def test_watch_sees_only_its_prefix(store: Storage) -> None:
    start = await store.current_revision() + 1
    await store.create("/registry/podsx/default/a", b"x")
    await store.create("/registry/services/default/a", b"x")
    last = await store.create("/registry/pods/default/a", b"mine")
    async with aclosing(store.watch("/registry/pods/", start)) as watch:
        event = await next_event(watch)
    assert (event.key, event.revision) == ("/registry/pods/default/a", last)


async def test_two_watchers_see_the_same_stream(store: Storage) -> None:
    start = await store.current_revision() + 1
    done = "/registry/leases/zz-done"
    async with (
        aclosing(store.watch("/registry/leases/", start)) as w1,
        aclosing(store.watch("/registry/leases/", start)) as w2,
    ):
        one, two, expected = await asyncio.gather(
            collect_until_key(w1, done),
            collect_until_key(w2, done),
            write_then_mark_done(store, "/registry/leases/kube-node-lease/", 4, done),
        )
    assert summary(one) == summary(two) == expected


async def test_watch_from_now_does_not_replay_history(store: Storage) -> None:
    old = await store.create("/registry/pods/default/old", b"old")
    async with aclosing(store.watch("/registry/pods/", 0)) as watch:
        pending = asyncio.ensure_future(anext(watch))
        # "From now on" starts when the backend sets the watch up, which we cannot observe; keep
        # writing (bounded) until the first event shows up, then check it is not history.
        written: list[int] = []
        try:
            async with asyncio.timeout(5):
                while not pending.done():
                    written.append(await store.create(f"/registry/pods/default/new{len(written)}", b"n"))
                    await asyncio.wait({pending}, timeout=0.02)
            event: WatchEvent = pending.result()
        finally:
            pending.cancel()
    assert event.revision > old
    assert event.revision in written


async def test_watch_below_the_compacted_revision_raises_compacted(store: Storage) -> None:
    first = await store.create("/registry/pods/default/a", b"v1")
    rev = first
    for i in range(5):
        rev = await store.update("/registry/pods/default/a", f"v{i + 2}".encode(), rev)
    await store.compact(rev)
    assert await store.compacted_revision() == rev
    async with aclosing(store.watch("/registry/pods/", first)) as watch:
        with pytest.raises(Compacted):
            await next_event(watch)
    # At the compacted revision itself history is still there: the newest write replays.
    async with aclosing(store.watch("/registry/pods/", rev)) as watch:
        event = await next_event(watch)
    assert (event.type, event.value, event.revision) == ("MODIFIED", b"v6", rev)


async def test_closing_the_store_ends_its_watches(store: Storage) -> None:
    """A watch never hangs on a store that went away: it ends, or raises Unavailable."""
    from apiserver.storage.interface import Unavailable

    start = await store.current_revision() + 1
    created = await store.create("/registry/pods/default/a", b"v1")
    watch = store.watch("/registry/pods/", start)
    assert (await next_event(watch)).revision == created
    pending = asyncio.ensure_future(anext(watch))
    await asyncio.sleep(0)  # let the watch block waiting for the next event
    await store.close()
    with pytest.raises((StopAsyncIteration, Unavailable)):
        await asyncio.wait_for(pending, 10)


async def test_a_watcher_that_falls_far_behind_still_gets_every_event(backend: Harness) -> None:
    """A slow consumer must not lose events: the backend buffers, or re-reads its log."""
    if isinstance(backend, SQLiteHarness):
        backend.options["watch_queue_size"] = 8  # force the overflow → re-read-the-table path
    store = await backend.open()
    start = await store.current_revision() + 1
    async with aclosing(store.watch("/registry/events/", start)) as watch:
        pending = asyncio.ensure_future(anext(watch))
        if isinstance(backend, SQLiteHarness):
            # Wait until the watch follows the live broadcast, so the burst overflows its inbox.
            async with asyncio.timeout(5):
                while store.live_watchers < 1:
                    await asyncio.sleep(0.001)
        expected = await write_mix(store, "/registry/events/default/", 300, name="burst")
        first = await asyncio.wait_for(pending, 5)
        rest = await collect(watch, until_revision=expected[-1][3], deadline=15)
    assert summary([first, *rest]) == expected
