"""Fixtures for the storage conformance suite: one set of tests, every backend.

Why a harness and not just a store: several contract points are about what happens *around* the
store — a restart of the embedded database, an etcd server that is stopped or killed and comes
back. A `Harness` owns the backend's durable part (the SQLite data directory, or a real etcd
process with its data directory) and hands out `Storage` clients on top of it, so a test can say
"restart the backend" and get a fresh client over the same data, whichever backend it runs on.

Fixtures: `store` is an empty store (SQLite in a new directory, or a fresh key prefix on one
etcd shared by the session); `backend` is a harness with a backend of its own that can be
restarted; `etcd_backend` is a private etcd process for the kill/stop tests.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import inspect
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from apiserver.storage.interface import Storage, Unavailable
from tests.storage.helpers import eventually

BACKENDS = ["sqlite", "etcd"]

async def maybe_await(value: Any) -> Any:
    """Support helpers whose methods may be sync or async (the test-support API allows both)."""
    if inspect.isawaitable(value):
        return await value
    return value


class Harness(abc.ABC):
    """The durable part of one backend plus the clients opened on it."""

    name: str

    def __init__(self) -> None:
        self._stores: list[Storage] = []

    @abc.abstractmethod
    async def _open(self) -> Storage: ...

    async def open(self) -> Storage:
        """A new client over the backend's data."""
        store = await self._open()
        self._stores.append(store)
        return store

    async def close_all(self) -> None:
        stores, self._stores = self._stores, []
        for store in stores:
            try:
                await asyncio.wait_for(store.close(), 10)
            except Exception:  # noqa: BLE001 - closing twice or after a kill may complain
                pass

    @abc.abstractmethod
    async def restart(self) -> Storage:
        """Close every client, restart the backend on the same data, return a new client."""

    async def cleanup(self) -> None:
        await self.close_all()


class SQLiteHarness(Harness):
    name = "sqlite"

    def __init__(self, data_dir: Path, **options: Any) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.options = options

    async def _open(self) -> Storage:
        from apiserver.storage.sqlite import SQLiteStorage

        return await SQLiteStorage.open(self.data_dir, **self.options)

    async def restart(self) -> Storage:
        # The embedded store lives in the API server process: "restart" is close + reopen.
        await self.close_all()
        return await self.open()


class EtcdHarness(Harness):
    name = "etcd"

    def __init__(self, process: Any, **options: Any) -> None:
        super().__init__()
        self.process = process
        self.options = options  # passed to EtcdStorage.connect (timeout, watch_keepalive, ...)

    @property
    def url(self) -> str:
        return str(self.process.url)

    async def _open(self) -> Storage:
        from apiserver.storage.etcd import EtcdStorage

        return await EtcdStorage.connect(self.url, **self.options)

    async def stop(self) -> None:
        await maybe_await(self.process.stop())

    async def kill(self) -> None:
        await maybe_await(self.process.kill())

    async def start(self) -> None:
        await maybe_await(self.process.start())

    async def restart(self) -> Storage:
        await self.close_all()
        await self.stop()
        await self.start()
        return await self.open()

    async def wait_ready(self, store: Storage, deadline: float = 15.0) -> None:
        """Wait until `store` answers again after the server came back."""
        await eventually(store.ping, deadline=deadline, retry_on=(Unavailable,))

    async def cleanup(self) -> None:
        await super().cleanup()
        await maybe_await(self.process.cleanup())


def start_etcd() -> Any:
    """Start a real etcd for one test (skips, or fails with REQUIRE_ETCD=1, when it is missing)."""
    from tests.support.etcd import EtcdProcess, etcd_binary

    process = EtcdProcess(etcd_binary())
    process.start()
    return process


async def make_harness(name: str, tmp_path: Path) -> Harness:
    if name == "sqlite":
        return SQLiteHarness(tmp_path / "sqlite")
    if name == "etcd":
        return EtcdHarness(start_etcd())
    raise ValueError(name)


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    """A fresh, empty store: a new SQLite directory, or a fresh key prefix on a shared etcd.

    Sharing one etcd keeps the suite fast (an etcd takes about a second to elect itself leader)
    while the prefix keeps tests apart. Revisions are global to that etcd, which the contract
    allows: tests only compare revisions they observed themselves.
    """
    if request.param == "sqlite":
        from apiserver.storage.sqlite import SQLiteStorage

        opened: Storage = await SQLiteStorage.open(tmp_path / "sqlite")
    else:
        from apiserver.storage.etcd import EtcdStorage

        etcd = request.getfixturevalue("etcd_server")  # the worker's (tests/conftest.py)
        opened = await EtcdStorage.connect(etcd.url, prefix=f"/t-{uuid.uuid4().hex[:12]}")
    try:
        yield opened
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(opened.close(), 10)


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Harness]:
    """A backend of its own that a test may restart (SQLite directory or a private etcd)."""
    harness = await make_harness(request.param, tmp_path)
    try:
        yield harness
    finally:
        await harness.cleanup()


@pytest.fixture
async def etcd_backend() -> AsyncIterator[EtcdHarness]:
    """Only etcd: for tests about a server process that can be killed."""
    harness = EtcdHarness(start_etcd())
    try:
        yield harness
    finally:
        await harness.cleanup()
