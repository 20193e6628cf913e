"""Writes on etcd: create-if-absent, compare-and-swap on mod_revision, NotFound vs Conflict."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from apiserver.storage.etcd import EtcdStorage
from apiserver.storage.interface import MAX_VALUE_BYTES, Conflict, KeyExists, NotFound, TooLarge

KEY = "/registry/pods/default/web"


async def test_create_returns_the_new_revision_recorded_on_the_key(etcd_storage: EtcdStorage) -> None:
    rev = await etcd_storage.create(KEY, b"v1")
    kv = await etcd_storage.get(KEY)
    assert (kv.key, kv.value, kv.revision, kv.create_revision) == (KEY, b"v1", rev, rev)
    assert await etcd_storage.current_revision() == rev


async def test_create_of_an_existing_key_raises_key_exists_and_keeps_the_value(
    etcd_storage: EtcdStorage,
) -> None:
    rev = await etcd_storage.create(KEY, b"v1")
    with pytest.raises(KeyExists):
        await etcd_storage.create(KEY, b"v2")
    assert (await etcd_storage.get(KEY)).value == b"v1"
    assert await etcd_storage.current_revision() == rev  # a failed txn writes nothing


async def test_update_at_the_expected_revision_bumps_mod_but_not_create_revision(
    etcd_storage: EtcdStorage,
) -> None:
    created = await etcd_storage.create(KEY, b"v1")
    updated = await etcd_storage.update(KEY, b"v2", created)
    assert updated > created
    kv = await etcd_storage.get(KEY)
    assert (kv.value, kv.revision, kv.create_revision) == (b"v2", updated, created)


async def test_update_at_a_stale_revision_raises_conflict(etcd_storage: EtcdStorage) -> None:
    created = await etcd_storage.create(KEY, b"v1")
    await etcd_storage.update(KEY, b"v2", created)
    with pytest.raises(Conflict):
        await etcd_storage.update(KEY, b"v3", created)
    assert (await etcd_storage.get(KEY)).value == b"v2"


async def test_update_of_a_missing_key_raises_not_found_even_at_revision_zero(
    etcd_storage: EtcdStorage,
) -> None:
    # etcd's mod_revision of an absent key is 0, so a bare "mod == 0" compare would *create* it.
    for expected in (0, 5):
        with pytest.raises(NotFound):
            await etcd_storage.update(KEY, b"v", expected)
    with pytest.raises(NotFound):
        await etcd_storage.get(KEY)


async def test_update_after_delete_raises_not_found_not_conflict(etcd_storage: EtcdStorage) -> None:
    created = await etcd_storage.create(KEY, b"v1")
    await etcd_storage.delete(KEY)
    with pytest.raises(NotFound):
        await etcd_storage.update(KEY, b"v2", created)


async def test_delete_returns_a_new_revision_and_the_key_is_gone(etcd_storage: EtcdStorage) -> None:
    created = await etcd_storage.create(KEY, b"v1")
    deleted = await etcd_storage.delete(KEY)
    assert deleted > created
    with pytest.raises(NotFound):
        await etcd_storage.get(KEY)
    with pytest.raises(NotFound):
        await etcd_storage.delete(KEY)


async def test_delete_with_expected_revision_is_compare_and_swap(etcd_storage: EtcdStorage) -> None:
    created = await etcd_storage.create(KEY, b"v1")
    updated = await etcd_storage.update(KEY, b"v2", created)
    with pytest.raises(Conflict):
        await etcd_storage.delete(KEY, expected_revision=created)
    assert (await etcd_storage.get(KEY)).value == b"v2"
    await etcd_storage.delete(KEY, expected_revision=updated)
    with pytest.raises(NotFound):
        await etcd_storage.delete(KEY, expected_revision=updated)


async def test_recreating_a_deleted_key_starts_a_new_create_revision(etcd_storage: EtcdStorage) -> None:
    first = await etcd_storage.create(KEY, b"v1")
    await etcd_storage.delete(KEY)
    second = await etcd_storage.create(KEY, b"v2")
    kv = await etcd_storage.get(KEY)
    assert kv.create_revision == second > first


async def test_value_over_the_limit_raises_too_large_and_writes_nothing(etcd_storage: EtcdStorage) -> None:
    before = await etcd_storage.current_revision()
    with pytest.raises(TooLarge):
        await etcd_storage.create(KEY, b"x" * (MAX_VALUE_BYTES + 1))
    assert await etcd_storage.current_revision() == before
    rev = await etcd_storage.create(KEY, b"small")
    with pytest.raises(TooLarge):
        await etcd_storage.update(KEY, b"x" * (MAX_VALUE_BYTES + 1), rev)


async def test_value_at_exactly_the_limit_is_stored(etcd_storage: EtcdStorage) -> None:
    value = b"x" * MAX_VALUE_BYTES
    await etcd_storage.create(KEY, value)
    assert (await etcd_storage.get(KEY)).value == value


async def test_keys_are_namespaced_by_the_storage_prefix(etcd_server, etcd_storage: EtcdStorage) -> None:
    other = await EtcdStorage.connect(etcd_server.url, prefix="/some-other-tenant")
    try:
        await etcd_storage.create(KEY, b"mine")
        with pytest.raises(NotFound):
            await other.get(KEY)
        assert (await other.list("/registry/")).items == []
        assert [kv.key for kv in (await etcd_storage.list("/registry/")).items] == [KEY]
    finally:
        await other.close()


async def test_non_ascii_keys_round_trip_as_utf8(etcd_storage: EtcdStorage) -> None:
    key = "/registry/configmaps/default/grüße"
    await etcd_storage.create(key, b"v")
    assert (await etcd_storage.get(key)).key == key
    assert [kv.key for kv in (await etcd_storage.list("/registry/configmaps/")).items] == [key]


async def test_two_clients_racing_on_one_revision_exactly_one_wins(
    etcd_storage: EtcdStorage, etcd_storage_factory: Callable[[], Awaitable[EtcdStorage]]
) -> None:
    other = await etcd_storage_factory()
    created = await etcd_storage.create(KEY, b"v1")
    results = await asyncio.gather(
        etcd_storage.update(KEY, b"from-a", created),
        other.update(KEY, b"from-b", created),
        return_exceptions=True,
    )
    winners = [r for r in results if isinstance(r, int)]
    assert len(winners) == 1 and sum(isinstance(r, Conflict) for r in results) == 1
    assert (await other.get(KEY)).revision == winners[0]
