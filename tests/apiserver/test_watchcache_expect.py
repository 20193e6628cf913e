"""The watch cache takes a write it was told about (`expect`) as the object, not decoded again.

On the embedded store the bytes a write hands in come back in its event as the very same object,
so the cache can take the object the writer already had (ResourceQuota admission's status
charges): the test checks that it does, that what it then holds is exactly what decoding those
bytes gives (resourceVersion set, in the same place), and that bytes which are only equal are
decoded as before.
"""

from __future__ import annotations

from pathlib import Path

from api import registry
from apiserver.genericstore import ResourceStore
from apiserver.storage.sqlite import SQLiteStorage
from apiserver.watchcache import WatchCache


async def test_an_announced_write_is_taken_as_the_object_it_encodes(tmp_path: Path) -> None:
    rt = registry.by_key("resourcequotas")
    assert rt is not None
    store = await SQLiteStorage.open(tmp_path, compact_interval_seconds=None)
    resources = ResourceStore(rt, store)
    cache = WatchCache(rt, store, resources.root, 100)
    try:
        await cache.start()
        key = resources.key("ns", "q")
        quota = {"apiVersion": "v1", "kind": "ResourceQuota",
                 "metadata": {"name": "q", "namespace": "ns", "resourceVersion": "7", "uid": "u"},
                 "spec": {"hard": {"pods": "2"}}, "status": {"hard": {"pods": "2"}, "used": {"pods": "0"}}}  # fmt: skip
        revision = await store.create(key, ResourceStore.encode(quota))
        # The cache's storage watch reads the table until it has caught up and only then follows the
        # live broadcast, whose events carry the writer's own bytes: write until one is taken.
        for used in range(1, 50):
            quota = {**quota, "status": {"hard": {"pods": "2"}, "used": {"pods": str(used)}}}
            value = ResourceStore.encode(quota)
            cache.expect(key, value, quota)
            revision = await store.update(key, value, revision)
            assert await cache.wait_fresh(revision, 5)
            held = cache.peek(key)
            assert held is not None
            if held["status"] is quota["status"]:
                break
        assert held["status"] is quota["status"], "no announced write was taken as the object"
        decoded = ResourceStore.decode(value, revision)
        assert held == decoded and list(held["metadata"]) == list(decoded["metadata"])
        assert quota["metadata"]["resourceVersion"] == "7"  # what it was handed is left as it was

        charged = {**quota, "status": {"hard": {"pods": "2"}, "used": {"pods": "2"}}}
        cache.expect(key, ResourceStore.encode(charged), charged)
        equal_bytes = bytes(bytearray(ResourceStore.encode(charged)))  # the same content, another object
        later = await store.update(key, equal_bytes, revision)
        assert await cache.wait_fresh(later, 5)
        held = cache.peek(key)
        assert held == ResourceStore.decode(equal_bytes, later) and held["status"] is not charged["status"]
    finally:
        await cache.stop()
        await store.close()
