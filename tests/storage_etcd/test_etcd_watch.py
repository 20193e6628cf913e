"""Watches on etcd: event types, previous values, ordering, and resuming from a revision."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from apiserver.storage.etcd import EtcdStorage
from apiserver.storage.interface import Unavailable, WatchEvent

PODS = "/registry/pods/"
KEY = "/registry/pods/default/web"


async def _take(watch: AsyncIterator[WatchEvent], n: int, within: float = 5.0) -> list[WatchEvent]:
    async with asyncio.timeout(within):
        return [await anext(watch) for _ in range(n)]


async def test_watch_reports_added_modified_deleted_with_previous_values(etcd_storage: EtcdStorage) -> None:
    start = await etcd_storage.current_revision() + 1
    created = await etcd_storage.create(KEY, b"v1")
    updated = await etcd_storage.update(KEY, b"v2", created)
    deleted = await etcd_storage.delete(KEY)

    watch = etcd_storage.watch(PODS, start)
    try:
        events = await _take(watch, 3)
    finally:
        await watch.aclose()
    assert events == [
        WatchEvent("ADDED", KEY, b"v1", created, None),
        WatchEvent("MODIFIED", KEY, b"v2", updated, b"v1"),
        WatchEvent("DELETED", KEY, b"v2", deleted, b"v2"),  # DELETED carries the last value
    ]


async def test_watch_from_a_revision_includes_that_revision(etcd_storage: EtcdStorage) -> None:
    first = await etcd_storage.create(f"{PODS}a", b"a")
    second = await etcd_storage.create(f"{PODS}b", b"b")
    watch = etcd_storage.watch(PODS, second)
    try:
        (event,) = await _take(watch, 1)
    finally:
        await watch.aclose()
    assert event.revision == second > first


async def test_watch_only_sees_keys_under_its_prefix(etcd_storage: EtcdStorage) -> None:
    start = await etcd_storage.current_revision() + 1
    await etcd_storage.create("/registry/nodes/n1", b"node")
    await etcd_storage.create("/registry/pods2/x", b"other resource")
    pod = await etcd_storage.create(f"{PODS}default/p", b"pod")
    watch = etcd_storage.watch(PODS, start)
    try:
        (event,) = await _take(watch, 1)
    finally:
        await watch.aclose()
    assert (event.key, event.revision) == (f"{PODS}default/p", pod)


async def test_live_watch_delivers_later_writes_in_order(etcd_storage: EtcdStorage) -> None:
    watch = etcd_storage.watch(PODS, await etcd_storage.current_revision() + 1)
    try:
        pending = asyncio.ensure_future(_take(watch, 20))
        revisions = [await etcd_storage.create(f"{PODS}p{i:02d}", b"x") for i in range(20)]
        events = await pending
    finally:
        await watch.aclose()
    assert [e.revision for e in events] == revisions
    assert all(e.type == "ADDED" for e in events)


async def test_idle_watch_stays_open_across_heartbeats(etcd_server) -> None:
    # With a 0.2 s heartbeat, 1 s of silence spans several progress round trips: the watch must
    # neither end nor yield anything, and still deliver the next write.
    storage = await EtcdStorage.connect(etcd_server.url, prefix="/idle", timeout=0.5, watch_keepalive=0.2)
    watch = storage.watch(PODS, await storage.current_revision() + 1)
    try:
        pending = asyncio.ensure_future(anext(watch))
        done, _ = await asyncio.wait({pending}, timeout=1.0)
        assert not done, "an idle watch must not end or yield"
        rev = await storage.create(KEY, b"late")
        async with asyncio.timeout(5):
            event = await pending
        assert event.revision == rev
    finally:
        await watch.aclose()
        await storage.close()


async def test_closing_the_storage_ends_its_watch_with_unavailable_not_cancelled(etcd_server) -> None:
    storage = await EtcdStorage.connect(etcd_server.url, prefix="/closing")
    watch = storage.watch(PODS, await storage.current_revision() + 1)
    pending = asyncio.ensure_future(anext(watch))
    await asyncio.wait({pending}, timeout=0.2)  # the watch is now established and waiting
    await storage.close()
    with pytest.raises(Unavailable):
        async with asyncio.timeout(5):
            await pending
    with pytest.raises(Unavailable):
        await storage.get(KEY)  # and calls after close fail cleanly too


async def test_cancelling_the_consuming_task_still_cancels_it(etcd_storage: EtcdStorage) -> None:
    watch = etcd_storage.watch(PODS, await etcd_storage.current_revision() + 1)
    pending = asyncio.ensure_future(anext(watch))
    await asyncio.wait({pending}, timeout=0.2)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await etcd_storage.ping()  # the storage itself is unaffected
