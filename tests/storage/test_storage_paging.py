"""Paging (limit/continue) at a fixed revision: a consistent snapshot, however long it takes.

`kubectl get pods --chunk-size=500` reads page after page; meanwhile controllers keep writing.
Kubernetes makes the pages one consistent list by reading every page at the revision of the
first one (the continue token carries it). So: every key that existed at that revision appears
exactly once, with its value as of then; keys created later never appear; deleted ones do not
vanish. Reading at a revision that compaction already forgot is an error (410 Gone upstairs).
"""

from __future__ import annotations

import asyncio
import random

import pytest

from apiserver.storage.interface import Compacted, ListResult, Storage

PREFIX = "/registry/pods/"


async def page_through(store: Storage, prefix: str, limit: int) -> tuple[list[ListResult], int]:
    first = await store.list(prefix, limit=limit)
    pages = [first]
    while pages[-1].continue_key is not None:
        after = pages[-1].continue_key
        page = await store.list(prefix, limit=limit, continue_key=after, revision=first.revision)
        assert page.revision == first.revision
        pages.append(page)
    return pages, first.revision


async def test_pages_split_the_list_in_key_order(store: Storage) -> None:
    keys = [f"{PREFIX}default/p{i:03d}" for i in range(25)]
    for key in keys:
        await store.create(key, key.encode())
    pages, _ = await page_through(store, PREFIX, 10)
    assert [len(p.items) for p in pages] == [10, 10, 5]
    assert [kv.key for p in pages for kv in p.items] == keys
    assert pages[0].continue_key == keys[9]
    assert pages[-1].continue_key is None
    assert pages[0].remaining in (0, 15)  # best effort: exact when the backend knows


async def test_limit_equal_to_the_count_leaves_nothing_to_continue(store: Storage) -> None:
    for i in range(5):
        await store.create(f"{PREFIX}default/p{i}", b"x")
    exact = await store.list(PREFIX, limit=5)
    assert len(exact.items) == 5
    if exact.continue_key is not None:  # allowed to not know; then the next page must be empty
        after = await store.list(PREFIX, limit=5, continue_key=exact.continue_key, revision=exact.revision)
        assert after.items == [] and after.continue_key is None


async def test_list_at_a_past_revision_shows_the_state_then(store: Storage) -> None:
    a = await store.create(f"{PREFIX}default/a", b"a1")
    await store.create(f"{PREFIX}default/b", b"b1")
    snapshot = await store.current_revision()
    await store.update(f"{PREFIX}default/a", b"a2", a)
    await store.delete(f"{PREFIX}default/b")
    await store.create(f"{PREFIX}default/c", b"c1")
    then = await store.list(PREFIX, revision=snapshot)
    assert then.revision == snapshot
    assert [(kv.key, kv.value) for kv in then.items] == [
        (f"{PREFIX}default/a", b"a1"), (f"{PREFIX}default/b", b"b1"),
    ]
    now = await store.list(PREFIX)
    assert [(kv.key, kv.value) for kv in now.items] == [
        (f"{PREFIX}default/a", b"a2"), (f"{PREFIX}default/c", b"c1"),
    ]


async def test_paging_during_concurrent_writes_returns_every_preexisting_key_once(store: Storage) -> None:
    original: dict[str, tuple[bytes, int]] = {}
    for i in range(150):
        key = f"{PREFIX}ns{i % 3}/p{i:03d}"
        original[key] = (f"orig{i}".encode(), await store.create(key, f"orig{i}".encode()))
    rng = random.Random(7)
    stop = asyncio.Event()
    writes = 0

    async def churn() -> None:
        nonlocal writes
        live = {k: rev for k, (_, rev) in original.items()}
        n = 0
        while not stop.is_set():
            n += 1
            choice = rng.random()
            if choice < 0.35 and live:  # update an existing key
                key = rng.choice(sorted(live))
                live[key] = await store.update(key, b"changed", live[key])
            elif choice < 0.65 and live:  # delete an existing key
                key = rng.choice(sorted(live))
                await store.delete(key, expected_revision=live.pop(key))
            else:  # create a key that sorts anywhere, including between the pages
                key = f"{PREFIX}ns{rng.randrange(3)}/p{rng.randrange(150):03d}-new{n}"
                live[key] = await store.create(key, b"new")
            writes += 1
            await asyncio.sleep(0)

    async def _until_writes(target: int) -> None:
        while writes < target:
            await asyncio.sleep(0)

    first = await store.list(PREFIX, limit=7)
    assert first.revision == max(rev for _, rev in original.values())
    pages = [first]
    writer = asyncio.create_task(churn())  # from now on every page races with writes
    try:
        while pages[-1].continue_key is not None:
            # Make sure writes really interleave with the paging.
            await asyncio.wait_for(_until_writes(writes + 3), 5)
            after = pages[-1].continue_key
            pages.append(await store.list(PREFIX, limit=7, continue_key=after, revision=first.revision))
    finally:
        stop.set()
        await asyncio.wait_for(writer, 10)
    seen = [(kv.key, kv.value, kv.revision) for page in pages for kv in page.items]
    assert [k for k, _, _ in seen] == sorted(original), "every pre-existing key exactly once, in order"
    assert {k: (v, r) for k, v, r in seen} == original, "values as of the first page's revision"
    assert writes >= 3 * (len(pages) - 1)
    assert await store.current_revision() > first.revision



async def test_list_below_the_compacted_revision_raises_compacted(store: Storage) -> None:
    rev = await store.create(f"{PREFIX}default/a", b"v1")
    old = rev
    for i in range(5):
        rev = await store.update(f"{PREFIX}default/a", f"v{i + 2}".encode(), rev)
    await store.compact(rev)
    with pytest.raises(Compacted) as info:
        await store.list(PREFIX, revision=old)
    assert info.value.requested == old
    assert info.value.compacted == rev
    # The newest value of every key survives compaction and stays readable.
    assert [kv.value for kv in (await store.list(PREFIX, revision=rev)).items] == [b"v6"]
    assert (await store.get(f"{PREFIX}default/a")).value == b"v6"


async def test_compaction_keeps_the_newest_value_of_untouched_keys(store: Storage) -> None:
    quiet = await store.create(f"{PREFIX}default/quiet", b"untouched")
    rev = await store.create(f"{PREFIX}default/busy", b"0")
    for i in range(20):
        rev = await store.update(f"{PREFIX}default/busy", str(i + 1).encode(), rev)
    gone = await store.create(f"{PREFIX}default/gone", b"bye")
    rev = await store.delete(f"{PREFIX}default/gone", expected_revision=gone)
    await store.compact(rev)
    listed = await store.list(PREFIX)
    assert [(kv.key, kv.value) for kv in listed.items] == [
        (f"{PREFIX}default/busy", b"20"),
        (f"{PREFIX}default/quiet", b"untouched"),
    ]
    assert (await store.get(f"{PREFIX}default/quiet")).revision == quiet
    nxt = await store.create(f"{PREFIX}default/after", b"x")
    assert nxt > rev, "compaction never moves the revision counter back"
