"""Helpers for the SQLite backend tests: look at the log table itself, wait with deadlines."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from apiserver.storage.interface import WatchEvent


def log_rows(db: Path, key: str | None = None) -> list[tuple[int, str, int, int, int]]:
    """(id, name, created, deleted, prev_revision) of every row (of `key`), oldest first.

    A separate read-only connection: the test sees what is really on disk.
    """
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        query = "SELECT id, name, created, deleted, prev_revision FROM kv"
        if key is None:
            return conn.execute(query + " ORDER BY id").fetchall()
        return conn.execute(query + " WHERE name = ? ORDER BY id", (key,)).fetchall()
    finally:
        conn.close()


async def take(watch: AsyncIterator[WatchEvent], count: int, deadline: float = 10.0) -> list[WatchEvent]:
    """Exactly the next `count` events of `watch`, or TimeoutError after `deadline` seconds."""

    async def run() -> list[WatchEvent]:
        return [await anext(watch) for _ in range(count)]

    return await asyncio.wait_for(run(), deadline)


async def wait_until(condition: Callable[[], bool], deadline: float = 5.0) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), deadline)
