"""Fixtures for the embedded (SQLite) backend's own tests: a fresh data directory per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from apiserver.storage.sqlite import SQLiteStorage

Opener = Callable[..., Awaitable[SQLiteStorage]]


@pytest.fixture
async def open_store(tmp_path: Path) -> AsyncIterator[Opener]:
    """Open stores on the test's data directory (any options); all are closed at the end."""
    opened: list[SQLiteStorage] = []

    async def opener(**options: Any) -> SQLiteStorage:
        options.setdefault("compact_interval_seconds", None)  # tests compact explicitly
        store = await SQLiteStorage.open(tmp_path / "data", **options)
        opened.append(store)
        return store

    yield opener
    for store in opened:
        await store.close()


@pytest.fixture
async def store(open_store: Opener) -> SQLiteStorage:
    return await open_store()
