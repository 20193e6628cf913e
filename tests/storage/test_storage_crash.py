"""Crashes, not polite restarts: `kill -9` of the embedded store's process, a frozen etcd.

A clean close flushes everything; a crash does not get the chance. The embedded store promises
that a write is acknowledged only after it committed, so an API server killed mid-burst loses
nothing it answered "201 Created" for. And an etcd that stops answering without closing its
socket (SIGSTOP: a hung VM, a lost network) must not freeze watches forever.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from contextlib import aclosing
from pathlib import Path

import pytest

from apiserver.storage.interface import Unavailable
from tests.storage.conftest import EtcdHarness
from tests.storage.helpers import next_event

REPO = Path(__file__).resolve().parents[2]

# A child API-server stand-in: 8 concurrent writers, each printing what was acknowledged.
WRITER = """
import asyncio, sys
from apiserver.storage.sqlite import SQLiteStorage

async def writer(store, w):
    for i in range(1_000_000):
        key = f"/registry/pods/w{w}/p{i:06d}"
        rev = await store.create(key, key.encode())
        print(key, rev, flush=True)

async def main():
    store = await SQLiteStorage.open(sys.argv[1])
    await asyncio.gather(*(writer(store, w) for w in range(8)))

asyncio.run(main())
"""


async def test_sqlite_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    from apiserver.storage.sqlite import SQLiteStorage

    data_dir = tmp_path / "sqlite"
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WRITER, str(data_dir), cwd=REPO, stdout=asyncio.subprocess.PIPE
    )
    acked: dict[str, int] = {}
    try:
        assert child.stdout is not None
        async with asyncio.timeout(20):
            while len(acked) < 400:
                line = await child.stdout.readline()
                assert line, "the writer process died early"
                key, rev = line.decode().split()
                acked[key] = int(rev)
    finally:
        os.kill(child.pid, signal.SIGKILL)  # mid-burst: writes are in flight right now
        await child.wait()
    store = await SQLiteStorage.open(data_dir)  # the lock died with the process
    try:
        stored = {kv.key: kv.revision for kv in (await store.list("/registry/pods/")).items}
        lost = {k: r for k, r in acked.items() if stored.get(k) != r}
        assert not lost, f"acknowledged writes lost or changed: {sorted(lost.items())[:5]}"
        assert await store.current_revision() >= max(acked.values())
        assert await store.create("/registry/pods/after/p", b"x") > max(stored.values())
    finally:
        await store.close()


@pytest.fixture
async def quick_etcd_backend(etcd_backend: EtcdHarness) -> EtcdHarness:
    """A private etcd whose client gives up quickly (short request timeout and watch keepalive)."""
    etcd_backend.options.update(timeout=1.0, watch_keepalive=0.5)
    return etcd_backend


async def test_a_frozen_etcd_ends_the_watch_with_unavailable(quick_etcd_backend: EtcdHarness) -> None:
    store = await quick_etcd_backend.open()
    start = await store.create("/registry/nodes/n1", b"ready")
    pid = quick_etcd_backend.process.pid
    async with aclosing(store.watch("/registry/nodes/", start)) as watch:
        assert (await next_event(watch)).revision == start
        os.kill(pid, signal.SIGSTOP)  # alive but silent: the socket stays open
        try:
            with pytest.raises(Unavailable):
                await next_event(watch, deadline=10)
            with pytest.raises(Unavailable):
                await asyncio.wait_for(store.get("/registry/nodes/n1"), 10)
        finally:
            os.kill(pid, signal.SIGCONT)
    await quick_etcd_backend.wait_ready(store)
    assert (await store.get("/registry/nodes/n1")).revision == start
