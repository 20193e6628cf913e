"""The embedded store as a log: one row per write, the row id is the revision, CAS in the schema."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from apiserver.storage.interface import (
    MAX_VALUE_BYTES,
    Conflict,
    KeyExists,
    NotFound,
    TooLarge,
    Unavailable,
)
from apiserver.storage.sqlite import SQLiteStorage
from tests.storage_sqlite.conftest import Opener
from tests.storage_sqlite.helpers import log_rows

KEY = "/registry/configmaps/default/cfg"


async def test_every_write_appends_one_row_whose_id_is_the_revision(store: SQLiteStorage) -> None:
    created = await store.create(KEY, b"v1")
    updated = await store.update(KEY, b"v2", created)
    deleted = await store.delete(KEY, expected_revision=updated)
    recreated = await store.create(KEY, b"v3")
    # (id, name, created, deleted, prev_revision): each row points at the row it follows.
    assert log_rows(store.path, KEY) == [
        (created, KEY, 1, 0, 0),
        (updated, KEY, 0, 0, created),
        (deleted, KEY, 0, 1, updated),
        (recreated, KEY, 1, 0, deleted),
    ]
    kv = await store.get(KEY)
    assert (kv.value, kv.revision, kv.create_revision) == (b"v3", recreated, recreated)


async def test_update_and_delete_are_compare_and_swap_on_the_revision(store: SQLiteStorage) -> None:
    first = await store.create(KEY, b"v1")
    with pytest.raises(KeyExists):
        await store.create(KEY, b"again")
    second = await store.update(KEY, b"v2", first)
    with pytest.raises(Conflict):
        await store.update(KEY, b"stale", first)
    with pytest.raises(Conflict):
        await store.delete(KEY, expected_revision=first)
    kv = await store.get(KEY)
    assert (kv.value, kv.revision, kv.create_revision) == (b"v2", second, first)
    gone = await store.delete(KEY)  # no expected revision: unconditional
    assert gone > second
    with pytest.raises(NotFound):
        await store.get(KEY)
    with pytest.raises(NotFound):
        await store.update(KEY, b"v3", gone)
    with pytest.raises(NotFound):
        await store.delete(KEY)
    assert len(log_rows(store.path, KEY)) == 3, "refused writes leave no row"


async def test_unique_name_prev_revision_index_refuses_a_second_successor(store: SQLiteStorage) -> None:
    first = await store.create(KEY, b"v1")
    await store.update(KEY, b"v2", first)
    # Another writer that skipped our check (say a second process) tries to follow `first` too:
    # the database itself refuses it. This is the compare-and-swap kine relies on.
    conn = sqlite3.connect(store.path)
    try:
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("INSERT INTO kv (name, prev_revision, value) VALUES (?, ?, ?)", (KEY, first, b"x"))
    finally:
        conn.close()


async def test_value_over_the_limit_raises_too_large_and_writes_no_row(store: SQLiteStorage) -> None:
    rev = await store.create(KEY, b"small")
    with pytest.raises(TooLarge):
        await store.create("/registry/configmaps/default/big", b"x" * (MAX_VALUE_BYTES + 1))
    with pytest.raises(TooLarge):
        await store.update(KEY, b"x" * (MAX_VALUE_BYTES + 1), rev)
    assert await store.current_revision() == rev
    assert [row[0] for row in log_rows(store.path)] == [rev]
    exactly = await store.update(KEY, b"x" * MAX_VALUE_BYTES, rev)  # the limit itself is allowed
    assert len((await store.get(KEY)).value) == MAX_VALUE_BYTES
    assert exactly == rev + 1


async def test_revision_never_goes_back_across_reopen_even_after_compaction(open_store: Opener) -> None:
    store = await open_store()
    rev = await store.create(KEY, b"v1")
    rev = await store.delete(KEY, expected_revision=rev)
    await store.compact(rev)  # the newest rows can be deleted; AUTOINCREMENT still remembers
    await store.close()
    assert log_rows(store.path) == [(rev, KEY, 0, 1, rev - 1)], "tombstone at the floor stays"
    again = await open_store()
    assert await again.current_revision() == rev
    assert await again.compacted_revision() == rev
    assert await again.create(KEY, b"v2") == rev + 1


async def test_data_written_before_close_is_there_after_reopen(open_store: Opener) -> None:
    store = await open_store(sync="full")
    revs = {f"/registry/pods/default/p{i}": await store.create(f"/registry/pods/default/p{i}", b"%d" % i)
            for i in range(20)}
    await store.close()
    again = await open_store(sync="full")
    listed = await again.list("/registry/pods/")
    assert {kv.key: kv.revision for kv in listed.items} == revs
    assert listed.revision == max(revs.values())


async def test_a_second_store_on_the_same_data_dir_is_refused(open_store: Opener) -> None:
    store = await open_store()
    with pytest.raises(Unavailable):
        await open_store()
    await store.close()
    await open_store()  # the lock went with the first store


async def test_operations_after_close_raise_unavailable(store: SQLiteStorage) -> None:
    await store.create(KEY, b"v1")
    await store.close()
    for call in (store.get(KEY), store.create(KEY + "2", b"x"), store.list("/"), store.ping()):
        with pytest.raises(Unavailable):
            await call
    await store.close()  # closing twice is harmless


async def test_concurrent_writes_are_group_committed_with_distinct_revisions(store: SQLiteStorage) -> None:
    revs = await asyncio.gather(*(store.create(f"/registry/pods/default/p{i}", b"x") for i in range(200)))
    assert sorted(revs) == list(range(1, 201))
    results = await asyncio.gather(
        *(store.update("/registry/pods/default/p0", b"y", revs[0]) for _ in range(10)), return_exceptions=True
    )
    assert sum(isinstance(r, int) for r in results) == 1
    assert all(isinstance(r, Conflict) for r in results if not isinstance(r, int))


async def test_invalid_sync_mode_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        await SQLiteStorage.open(str(tmp_path), sync="sometimes")  # type: ignore[arg-type]


async def test_unusable_data_dir_or_corrupt_database_raises_unavailable(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(Unavailable):
        await SQLiteStorage.open(not_a_dir)
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "state.db").write_bytes(b"this is not a sqlite database, just some bytes" * 100)
    with pytest.raises(Unavailable):
        await SQLiteStorage.open(corrupt, compact_interval_seconds=None)
    # The failed open let go of the directory: a fixed one opens.
    (corrupt / "state.db").unlink()
    store = await SQLiteStorage.open(corrupt, compact_interval_seconds=None)
    await store.close()
