"""Optimistic concurrency under real races: of two writers with the same expectation, one wins.

This is what makes a controller's read-modify-write safe without locks. Two controllers read a
ReplicaSet at resourceVersion N and both write: storage must accept exactly one and tell the
other "Conflict" (409 at the API), so it re-reads and tries again. The races are real: the
writes are started together with asyncio.gather and interleave inside the backend.
"""

from __future__ import annotations

import asyncio

import pytest

from apiserver.storage.interface import Conflict, KeyExists, NotFound, Storage

ROUNDS = 50


async def test_two_updates_at_the_same_revision_exactly_one_wins(store: Storage) -> None:
    key = "/registry/replicasets.apps/default/web"
    rev = await store.create(key, b"replicas=1")
    for round_ in range(ROUNDS):
        a, b = f"a{round_}".encode(), f"b{round_}".encode()
        results = await asyncio.gather(
            store.update(key, a, rev), store.update(key, b, rev), return_exceptions=True
        )
        winners = [r for r in results if isinstance(r, int)]
        losers = [r for r in results if isinstance(r, BaseException)]
        assert len(winners) == 1, results
        assert len(losers) == 1 and isinstance(losers[0], Conflict), results
        kv = await store.get(key)
        assert kv.revision == winners[0] > rev
        # The stored value is the winner's, never a mix and never the loser's.
        assert kv.value == (a if results[0] == winners[0] else b)
        rev = winners[0]


async def test_update_racing_delete_at_the_same_revision_exactly_one_wins(store: Storage) -> None:
    for round_ in range(ROUNDS // 2):
        key = f"/registry/pods/default/p{round_}"
        rev = await store.create(key, b"v1")
        update, delete = await asyncio.gather(
            store.update(key, b"v2", rev), store.delete(key, expected_revision=rev), return_exceptions=True
        )
        if isinstance(update, int):
            assert isinstance(delete, Conflict), (update, delete)
            assert (await store.get(key)).revision == update
        else:
            assert isinstance(delete, int), (update, delete)
            # Whether the update saw a conflict or an already-deleted key depends on timing.
            assert isinstance(update, Conflict | NotFound), (update, delete)
            with pytest.raises(NotFound):
                await store.get(key)


async def test_concurrent_creates_of_one_key_exactly_one_wins(store: Storage) -> None:
    for round_ in range(ROUNDS // 2):
        key = f"/registry/namespaces/ns{round_}"
        results = await asyncio.gather(
            *(store.create(key, f"writer{i}".encode()) for i in range(4)), return_exceptions=True
        )
        winners = [i for i, r in enumerate(results) if isinstance(r, int)]
        assert len(winners) == 1, results
        assert all(isinstance(r, KeyExists) for i, r in enumerate(results) if i != winners[0]), results
        assert (await store.get(key)).value == f"writer{winners[0]}".encode()


async def test_concurrent_creates_of_different_keys_get_distinct_revisions(store: Storage) -> None:
    keys = [f"/registry/configmaps/default/c{i:03d}" for i in range(64)]
    revisions = await asyncio.gather(*(store.create(k, k.encode()) for k in keys))
    assert len(set(revisions)) == len(keys)
    listed = await store.list("/registry/configmaps/")
    assert {kv.key: kv.revision for kv in listed.items} == dict(zip(keys, revisions, strict=True))
    assert await store.current_revision() == max(revisions)
