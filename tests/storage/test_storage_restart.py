"""Durability: a restart loses nothing, and a dead etcd is reported, not waited on forever.

`mini-k8s up` on the same data directory must find its objects again, and resourceVersions must
keep growing — an informer that remembered revision N and sees a smaller one after a restart
would silently miss or replay events. For etcd the server is a separate process that can crash:
an open watch must end with Unavailable (the reflector then backs off and re-watches from its
last revision + 1), and that re-watch must miss nothing written before or after the crash.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest

from apiserver.storage.interface import NotFound, Storage, Unavailable, WatchEvent
from tests.storage.conftest import EtcdHarness, Harness
from tests.storage.helpers import collect, next_event, summary, write_mix


async def snapshot(store: Storage) -> list[tuple[str, bytes, int, int]]:
    listed = await store.list("/registry/")
    return [(kv.key, kv.value, kv.revision, kv.create_revision) for kv in listed.items]


async def test_restart_keeps_every_object_and_the_revision_counter(backend: Harness) -> None:
    store = await backend.open()
    for i in range(60):
        await store.create(f"/registry/pods/ns{i % 4}/p{i:02d}", f"pod{i}".encode())
    await write_mix(store, "/registry/configmaps/default/", 30)
    before, rev = await snapshot(store), await store.current_revision()
    store = await backend.restart()
    assert await snapshot(store) == before
    assert await store.current_revision() == rev
    nxt = await store.create("/registry/pods/ns0/after-restart", b"x")
    assert nxt > rev
    # Optimistic concurrency still works with revisions read before the restart.
    key, value, kv_rev, _ = before[0]
    assert await store.update(key, value + b"!", kv_rev) > nxt


async def test_history_survives_restart_and_a_watch_replays_across_it(backend: Harness) -> None:
    store = await backend.open()
    start = await store.current_revision() + 1
    expected = await write_mix(store, "/registry/pods/default/", 20)
    store = await backend.restart()
    expected += await write_mix(store, "/registry/pods/other/", 10)
    async with aclosing(store.watch("/registry/pods/", start)) as watch:
        events = await collect(watch, until_revision=expected[-1][3])
    assert summary(events) == expected


async def test_revision_never_goes_back_after_compacting_deleted_tail_and_restart(backend: Harness) -> None:
    store = await backend.open()
    first = await store.create("/registry/pods/default/a", b"x")
    await store.create("/registry/pods/default/b", b"x")
    await store.delete("/registry/pods/default/b")
    last = await store.delete("/registry/pods/default/a")
    # The newest rows are deletions: compaction may drop them, but not the counter.
    await store.compact(last)
    assert await store.create("/registry/pods/default/c", b"x") > last
    store = await backend.restart()
    rev = await store.current_revision()
    assert rev > last
    assert await store.create("/registry/pods/default/d", b"x") > rev > first
    with pytest.raises(NotFound):
        await store.get("/registry/pods/default/a")


async def test_a_killed_etcd_ends_the_watch_and_a_rewatch_misses_nothing(etcd_backend: EtcdHarness) -> None:
    store = await etcd_backend.open()
    prefix = "/registry/pods/default/"
    start = await store.current_revision() + 1
    expected = await write_mix(store, prefix, 10)
    seen: list[WatchEvent] = []
    watch = store.watch("/registry/pods/", start)
    seen += await collect(watch, until_revision=expected[-1][3])
    # Acknowledged writes right before the crash: the watch may or may not deliver them.
    expected += await write_mix(store, "/registry/pods/crash/", 6)
    await etcd_backend.kill()

    async def drain() -> None:
        async for event in watch:
            seen.append(event)

    with pytest.raises(Unavailable):
        await asyncio.wait_for(drain(), 15)  # it ends: it does not hang on a dead server
    await watch.aclose()  # type: ignore[attr-defined]

    await etcd_backend.start()
    await etcd_backend.wait_ready(store)  # the same client reconnects
    expected += await write_mix(store, "/registry/pods/after/", 8)
    assert summary(seen) == expected[: len(seen)], "what the dead watch delivered was right"
    resume = seen[-1].revision + 1
    async with aclosing(store.watch("/registry/pods/", resume)) as rewatch:
        rest = await collect(rewatch, until_revision=expected[-1][3], deadline=10)
    assert summary(seen + rest) == expected


async def test_requests_to_a_stopped_etcd_raise_unavailable_and_recover(etcd_backend: EtcdHarness) -> None:
    store = await etcd_backend.open()
    rev = await store.create("/registry/nodes/n1", b"ready")
    await etcd_backend.stop()
    for op in (store.ping(), store.get("/registry/nodes/n1"), store.create("/registry/nodes/n2", b"x")):
        with pytest.raises(Unavailable):
            await asyncio.wait_for(op, 15)
    await etcd_backend.start()
    await etcd_backend.wait_ready(store)
    assert (await store.get("/registry/nodes/n1")).revision == rev
    assert await store.create("/registry/nodes/n2", b"x") > rev


async def test_a_watch_started_while_etcd_is_down_raises_unavailable(etcd_backend: EtcdHarness) -> None:
    store = await etcd_backend.open()
    start = await store.create("/registry/nodes/n1", b"ready")
    await etcd_backend.stop()
    async with aclosing(store.watch("/registry/nodes/", start)) as watch:
        with pytest.raises(Unavailable):
            await next_event(watch, deadline=15)
