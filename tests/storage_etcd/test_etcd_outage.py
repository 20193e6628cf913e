"""etcd going away and coming back: fail fast, never hang, recover by itself, lose nothing.

These tests use a private etcd (`etcd_process`) because they kill, freeze and restart it.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from apiserver.storage.etcd import EtcdStorage
from apiserver.storage.interface import Unavailable
from tests.support.etcd import EtcdProcess

PODS = "/registry/pods/"


async def _connect(etcd: EtcdProcess) -> EtcdStorage:
    return await EtcdStorage.connect(etcd.url, timeout=1.0, watch_keepalive=0.3)


async def _until_available(storage: EtcdStorage, within: float = 10.0) -> int:
    """Poll until the store answers again; return its current revision."""
    deadline = time.monotonic() + within
    while True:
        try:
            return await storage.current_revision()
        except Unavailable:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_killing_etcd_ends_a_watch_with_unavailable_quickly(etcd_process: EtcdProcess) -> None:
    storage = await _connect(etcd_process)
    watch = storage.watch(PODS, await storage.current_revision() + 1)
    try:
        await storage.create(f"{PODS}a", b"a")
        async with asyncio.timeout(5):
            assert (await anext(watch)).key == f"{PODS}a"
        pending = asyncio.ensure_future(anext(watch))
        etcd_process.kill()
        started = time.monotonic()
        with pytest.raises(Unavailable):
            async with asyncio.timeout(5):
                await pending
        assert time.monotonic() - started < 3
    finally:
        await watch.aclose()
        await storage.close()


async def test_a_frozen_etcd_ends_a_watch_with_unavailable_instead_of_hanging(
    etcd_process: EtcdProcess,
) -> None:
    # SIGSTOP keeps the sockets open but nothing answers: only the heartbeat can notice.
    storage = await _connect(etcd_process)
    watch = storage.watch(PODS, await storage.current_revision() + 1)
    try:
        pending = asyncio.ensure_future(anext(watch))
        await asyncio.wait({pending}, timeout=0.5)  # let the watch get established
        assert not pending.done()
        etcd_process.freeze()
        with pytest.raises(Unavailable):
            async with asyncio.timeout(5):  # heartbeat 0.3 s + timeout 1 s, well within 5 s
                await pending
        with pytest.raises(Unavailable):
            async with asyncio.timeout(5):
                await storage.get(f"{PODS}a")  # unary calls hit their 1 s deadline
    finally:
        etcd_process.thaw()
        await watch.aclose()
        await storage.close()


async def test_operations_fail_fast_while_etcd_is_down(etcd_process: EtcdProcess) -> None:
    storage = await _connect(etcd_process)
    try:
        etcd_process.kill()
        ops = (storage.get(f"{PODS}a"), storage.create(f"{PODS}a", b"a"), storage.list(PODS), storage.ping())
        for op in ops:
            started = time.monotonic()
            with pytest.raises(Unavailable):
                await op
            assert time.monotonic() - started < 2
        with pytest.raises(Unavailable):
            await anext(storage.watch(PODS, 0))
    finally:
        await storage.close()


async def test_restart_on_the_same_data_dir_keeps_data_and_revisions_and_watch_resumes(
    etcd_process: EtcdProcess,
) -> None:
    storage = await _connect(etcd_process)
    try:
        last = await storage.create(f"{PODS}a", b"a")
        last = await storage.update(f"{PODS}a", b"a2", last)

        etcd_process.kill()
        with pytest.raises(Unavailable):
            await storage.get(f"{PODS}a")
        etcd_process.start()

        # The same EtcdStorage works again by itself, and the revision counter did not reset.
        assert await _until_available(storage) == last
        assert (await storage.get(f"{PODS}a")).value == b"a2"
        after = [await storage.create(f"{PODS}b", b"b"), await storage.delete(f"{PODS}a")]
        assert after[0] == last + 1

        # A watch resumed from "last seen + 1" gets exactly what happened since, nothing missed.
        watch = storage.watch(PODS, last + 1)
        try:
            async with asyncio.timeout(5):
                events = [await anext(watch), await anext(watch)]
        finally:
            await watch.aclose()
        assert [(e.type, e.key, e.revision) for e in events] == [
            ("ADDED", f"{PODS}b", after[0]),
            ("DELETED", f"{PODS}a", after[1]),
        ]
    finally:
        await storage.close()


async def test_connect_uses_the_first_reachable_endpoint(etcd_process: EtcdProcess) -> None:
    dead = EtcdProcess()  # never started: its port refuses connections
    try:
        storage = await EtcdStorage.connect(f"{dead.url},{etcd_process.url}", timeout=1.0)
        try:
            assert storage.endpoint == etcd_process.url
            await storage.ping()
        finally:
            await storage.close()
    finally:
        dead.cleanup()


async def test_connect_to_no_reachable_endpoint_raises_unavailable() -> None:
    dead = EtcdProcess()
    try:
        with pytest.raises(Unavailable):
            await EtcdStorage.connect([dead.url], timeout=1.0)
    finally:
        dead.cleanup()
