"""Small waiting helpers for the storage suite: every wait has a deadline, nothing sleeps blindly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from apiserver.storage.interface import Storage, WatchEvent

T = TypeVar("T")

# How long any single expected event may take to arrive. Generous for a loaded CI machine; a
# passing run never waits this long.
EVENT_DEADLINE = 5.0


async def eventually(
    op: Callable[[], Awaitable[T]], *, deadline: float = 10.0, retry_on: tuple[type[Exception], ...] = ()
) -> T:
    """Run `op` until it succeeds, retrying on `retry_on` errors, all within `deadline` seconds.

    Used after an etcd restart, when the first requests may legitimately fail with Unavailable
    until the client has reconnected.
    """

    async def attempt() -> T:
        delay = 0.02
        while True:
            try:
                return await op()
            except retry_on:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.25)

    return await asyncio.wait_for(attempt(), deadline)


async def next_event(watch: AsyncIterator[WatchEvent], deadline: float = EVENT_DEADLINE) -> WatchEvent:
    """The next event of `watch`, or TimeoutError after `deadline` seconds."""
    return await asyncio.wait_for(anext(watch), deadline)


async def collect(
    watch: AsyncIterator[WatchEvent], *, until_revision: int, deadline: float = EVENT_DEADLINE
) -> list[WatchEvent]:
    """Events of `watch` up to and including the one at `until_revision` (within `deadline`)."""
    events: list[WatchEvent] = []

    async def run() -> None:
        async for event in watch:
            events.append(event)
            if event.revision >= until_revision:
                return

    try:
        await asyncio.wait_for(run(), deadline)
    except TimeoutError as exc:
        seen = [e.revision for e in events]
        raise AssertionError(f"watch did not reach revision {until_revision}; saw {seen}") from exc
    return events


def summary(events: list[WatchEvent]) -> list[tuple[str, str, bytes | None, int]]:
    """Comparable view of events: (type, key, value, revision)."""
    return [(e.type, e.key, e.value, e.revision) for e in events]


Expected = tuple[str, str, bytes | None, int]


async def write_mix(store: Storage, prefix: str, count: int, name: str = "k") -> list[Expected]:
    """Creates, updates and deletes under `prefix`; returns the events a watch must show."""
    expected: list[Expected] = []
    revs: dict[str, int] = {}
    values: dict[str, bytes] = {}
    for i in range(count):
        key = f"{prefix}{name}{i % 7}"
        if key not in revs:
            value = f"c{i}".encode()
            rev = await store.create(key, value)
            expected.append(("ADDED", key, value, rev))
        elif i % 3 == 0:
            rev = await store.delete(key, expected_revision=revs.pop(key))
            expected.append(("DELETED", key, values.pop(key), rev))  # DELETED carries the last value
            continue
        else:
            value = f"u{i}".encode()
            rev = await store.update(key, value, revs[key])
            expected.append(("MODIFIED", key, value, rev))
        revs[key], values[key] = rev, value
    return expected


async def collect_until_key(
    watch: AsyncIterator[WatchEvent], key: str, *, deadline: float = EVENT_DEADLINE
) -> list[WatchEvent]:
    """Events of `watch` up to and including the first one for `key` (a "done" marker)."""
    events: list[WatchEvent] = []

    async def run() -> None:
        async for event in watch:
            events.append(event)
            if event.key == key:
                return

    try:
        await asyncio.wait_for(run(), deadline)
    except TimeoutError as exc:
        raise AssertionError(f"watch never saw {key!r}; saw {[e.revision for e in events]}") from exc
    return events


async def write_then_mark_done(store: Storage, prefix: str, chunks: int, done_key: str) -> list[Expected]:
    """Several `write_mix` chunks (fresh keys each), then create `done_key`; the expected events."""
    expected: list[Expected] = []
    for chunk in range(chunks):
        expected += await write_mix(store, prefix, 10, name=f"c{chunk}-")
    rev = await store.create(done_key, b"done")
    expected.append(("ADDED", done_key, b"done", rev))
    return expected
