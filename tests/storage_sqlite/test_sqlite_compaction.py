"""Compaction of the embedded log: old rows go, the newest value of every key stays, and reading
or watching below the compacted revision raises Compacted — also after a restart."""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import aclosing

import pytest

from apiserver.storage.interface import Compacted, StorageError
from apiserver.storage.sqlite import SQLiteStorage
from tests.storage_sqlite.conftest import Opener
from tests.storage_sqlite.helpers import log_rows, take, wait_until

LEASE = "/registry/leases.coordination.k8s.io/kube-node-lease/node-1"
QUIET = "/registry/namespaces/default"


async def heartbeats(store: SQLiteStorage, count: int) -> int:
    """A node Lease renewed `count` times: the write pattern that fills kine's tables."""
    try:
        rev = (await store.get(LEASE)).revision
    except Exception:  # noqa: BLE001 - first beat creates it
        rev = await store.create(LEASE, b"renew-0")
    for i in range(count):
        rev = await store.update(LEASE, b"renew-%d" % (i + 1), rev)
    return rev


async def test_compaction_deletes_superseded_rows_and_keeps_newest_values(store: SQLiteStorage) -> None:
    quiet = await store.create(QUIET, b"ns")
    gone = await store.create("/registry/pods/default/gone", b"bye")
    gone = await store.delete("/registry/pods/default/gone", expected_revision=gone)
    head = await heartbeats(store, 50)
    await store.compact(head)
    # What remains: the quiet key's only row (old, but the newest of a live key) and the lease's
    # newest row. The old lease rows and the deleted pod's rows are gone.
    assert [row[0] for row in log_rows(store.path)] == [quiet, head]
    assert (await store.get(QUIET)).revision == quiet
    lease = await store.get(LEASE)
    assert (lease.value, lease.revision) == (b"renew-50", head)
    listed = await store.list("/registry/", revision=head)
    assert [kv.key for kv in listed.items] == [LEASE, QUIET]


async def test_reads_and_watches_below_the_compacted_revision_raise_compacted(store: SQLiteStorage) -> None:
    first = await store.create(QUIET, b"ns")
    middle = await heartbeats(store, 10)
    head = await heartbeats(store, 10)
    await store.compact(middle)
    with pytest.raises(Compacted) as info:
        await store.list("/registry/", revision=middle - 1)
    assert (info.value.requested, info.value.compacted) == (middle - 1, middle)
    async with aclosing(store.watch("/registry/", first)) as watch:
        with pytest.raises(Compacted):
            await anext(watch)
    # At the compacted revision itself, the state is readable and the history replays.
    at_middle = await store.list("/registry/", revision=middle)
    assert [(kv.key, kv.revision) for kv in at_middle.items] == [(LEASE, middle), (QUIET, first)]
    async with aclosing(store.watch("/registry/", middle)) as watch:
        events = await take(watch, head - middle + 1)
    assert [e.revision for e in events] == list(range(middle, head + 1))


async def test_compacted_revision_survives_a_restart(open_store: Opener) -> None:
    store = await open_store()
    head = await heartbeats(store, 10)
    await store.compact(head - 2)
    await store.close()
    again = await open_store()
    assert await again.compacted_revision() == head - 2
    with pytest.raises(Compacted):
        await again.list("/registry/", revision=head - 3)
    assert (await again.list("/registry/", revision=head - 2)).items[0].revision == head - 2


async def test_compacting_backwards_is_a_no_op_and_forwards_of_head_is_refused(store: SQLiteStorage) -> None:
    head = await heartbeats(store, 5)
    await store.compact(head - 1)
    await store.compact(head - 3)  # below the floor: nothing to do
    assert await store.compacted_revision() == head - 1
    with pytest.raises(StorageError):
        await store.compact(head + 1)
    assert await store.compacted_revision() == head - 1


async def test_compaction_truncates_the_wal(store: SQLiteStorage) -> None:
    head = await heartbeats(store, 300)
    wal = store.path.with_name(store.path.name + "-wal")
    assert wal.stat().st_size > 0
    await store.compact(head)
    assert os.stat(wal).st_size == 0


async def test_auto_compaction_keeps_the_newest_n_revisions(open_store: Opener) -> None:
    store = await open_store(compact_keep_revisions=10, compact_min_age_seconds=0)
    head = await heartbeats(store, 30)
    assert await store.compact_auto() == head - 9
    async with aclosing(store.watch("/registry/", head - 9)) as watch:
        assert len(await take(watch, 10)) == 10, "exactly the newest 10 revisions are kept"
    assert await store.compact_auto() == head - 9, "nothing new to forget"


async def test_auto_compaction_keeps_everything_younger_than_the_time_window(open_store: Opener) -> None:
    store = await open_store(compact_keep_revisions=1, compact_min_age_seconds=1.0)
    # (when we heard back, revision) for every write: the revision existed by then.
    written: list[tuple[float, int]] = [(time.time(), await heartbeats(store, 20))]
    assert await store.compact_auto() == 0, "all history is younger than the window"
    # Keep heartbeating like a kubelet until the oldest history has aged past the window.
    started = time.time()
    compacted = 0
    while compacted == 0:
        assert time.time() - started < 8, "auto-compaction never caught up with the window"
        written.append((time.time(), await heartbeats(store, 1)))
        compacted = await store.compact_auto()
        await asyncio.sleep(0.05)
    # The compacted revision had been written a full window (less a little slack for the time
    # between a commit and our hearing of it) before compaction forgot what preceded it.
    decided_at = time.time()
    written_at = min(at for at, rev in written if rev >= compacted)
    assert written_at <= decided_at - 0.9
    assert compacted < written[-1][1], "the youngest revisions are kept"


async def test_background_auto_compaction_runs_on_its_interval(open_store: Opener) -> None:
    store = await open_store(
        compact_keep_revisions=5, compact_min_age_seconds=0, compact_interval_seconds=0.05
    )
    head = await heartbeats(store, 20)
    compacted: list[int] = []

    async def check() -> None:
        compacted.append(await store.compacted_revision())

    async def poll() -> None:
        while not compacted or compacted[-1] != head - 4:
            await check()
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), 5)
    # The newest 5 revisions stay; the row deletions follow the recorded floor.
    await wait_until(lambda: [row[0] for row in log_rows(store.path)] == list(range(head - 4, head + 1)))
