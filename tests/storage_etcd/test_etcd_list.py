"""Reads on etcd: paging at one revision, prefix ranges, and compaction surfacing as Compacted."""

from __future__ import annotations

import pytest
from aetcd.rpc import KVStub, insecure_channel, rpc_pb2

from apiserver.storage.etcd import EtcdStorage
from apiserver.storage.interface import Compacted, StorageError

PODS = "/registry/pods/"


async def _fill(storage: EtcdStorage, names: list[str]) -> list[int]:
    return [await storage.create(f"{PODS}default/{n}", n.encode()) for n in names]


async def test_list_returns_keys_in_order_only_under_the_prefix(etcd_storage: EtcdStorage) -> None:
    await _fill(etcd_storage, ["c", "a", "b"])
    await etcd_storage.create("/registry/pods2/x", b"not a pod")  # shares the string prefix "pods"
    await etcd_storage.create("/registry/nodes/n1", b"node")
    result = await etcd_storage.list(PODS)
    assert [kv.key for kv in result.items] == [f"{PODS}default/{n}" for n in "abc"]
    assert result.continue_key is None and result.remaining == 0
    assert result.revision == await etcd_storage.current_revision()


async def test_pages_are_read_at_the_revision_of_the_first_page(etcd_storage: EtcdStorage) -> None:
    await _fill(etcd_storage, ["a", "b", "c", "d", "e"])
    first = await etcd_storage.list(PODS, limit=2)
    assert [kv.value for kv in first.items] == [b"a", b"b"]
    assert first.continue_key == f"{PODS}default/b" and first.remaining == 3

    # Changes after the first page must not show up in later pages of the same list.
    await etcd_storage.create(f"{PODS}default/bb", b"bb")
    await etcd_storage.delete(f"{PODS}default/d")

    seen = [kv.value for kv in first.items]
    page = first
    while page.continue_key is not None:
        page = await etcd_storage.list(PODS, limit=2, continue_key=page.continue_key, revision=first.revision)
        assert page.revision == first.revision
        seen += [kv.value for kv in page.items]
    assert seen == [b"a", b"b", b"c", b"d", b"e"]

    now = await etcd_storage.list(PODS)
    assert [kv.value for kv in now.items] == [b"a", b"b", b"bb", b"c", b"e"]


async def test_last_page_has_no_continue_key(etcd_storage: EtcdStorage) -> None:
    await _fill(etcd_storage, ["a", "b", "c", "d"])
    first = await etcd_storage.list(PODS, limit=2)
    second = await etcd_storage.list(PODS, limit=2, continue_key=first.continue_key, revision=first.revision)
    assert [kv.value for kv in second.items] == [b"c", b"d"]
    assert second.continue_key is None and second.remaining == 0


async def test_list_at_an_old_revision_shows_the_old_values(etcd_storage: EtcdStorage) -> None:
    (rev,) = await _fill(etcd_storage, ["a"])
    await etcd_storage.update(f"{PODS}default/a", b"new", rev)
    old = await etcd_storage.list(PODS, revision=rev)
    assert [kv.value for kv in old.items] == [b"a"] and old.revision == rev


async def test_list_and_watch_below_the_compacted_revision_raise_compacted(etcd_storage: EtcdStorage) -> None:
    revs = await _fill(etcd_storage, ["a", "b", "c"])
    await etcd_storage.compact(revs[1])
    assert await etcd_storage.compacted_revision() == revs[1]

    with pytest.raises(Compacted) as info:
        await etcd_storage.list(PODS, revision=revs[0])
    assert (info.value.requested, info.value.compacted) == (revs[0], revs[1])

    watch = etcd_storage.watch(PODS, revs[0])
    with pytest.raises(Compacted) as info:
        await anext(watch)
    assert (info.value.requested, info.value.compacted) == (revs[0], revs[1])

    # The compacted revision itself is still readable, and every current value survives.
    assert [kv.value for kv in (await etcd_storage.list(PODS, revision=revs[1])).items] == [b"a", b"b"]
    assert [kv.value for kv in (await etcd_storage.list(PODS)).items] == [b"a", b"b", b"c"]


async def test_compacted_revision_sees_a_compaction_done_by_another_client(
    etcd_server, etcd_storage: EtcdStorage
) -> None:
    revs = await _fill(etcd_storage, ["a", "b", "c", "d"])
    channel = insecure_channel(etcd_server.url.removeprefix("http://"))
    try:
        await KVStub(channel).Compact(rpc_pb2.CompactionRequest(revision=revs[2]))
    finally:
        await channel.close()
    assert await etcd_storage.compacted_revision() == revs[2]


async def test_compacting_below_an_earlier_compaction_is_a_no_op(etcd_storage: EtcdStorage) -> None:
    revs = await _fill(etcd_storage, ["a", "b", "c"])
    await etcd_storage.compact(revs[2])
    await etcd_storage.compact(revs[0])
    assert await etcd_storage.compacted_revision() == revs[2]


async def test_list_at_a_future_revision_is_an_error(etcd_storage: EtcdStorage) -> None:
    future = await etcd_storage.current_revision() + 1000
    with pytest.raises(StorageError, match="newer"):
        await etcd_storage.list(PODS, revision=future)
