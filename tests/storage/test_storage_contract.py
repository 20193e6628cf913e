"""The basic key-value contract, identical on both backends.

What the API server relies on: create-if-absent, compare-and-swap update and delete, one global
revision that every write bumps (and that becomes an object's resourceVersion), lists in key
order, and prefixes that mean "this directory" — `/registry/pods/` must not see
`/registry/podsx/`, the way Kubernetes' keys for one resource never leak into another's list.
"""

from __future__ import annotations

import pytest

from apiserver.storage.interface import (
    MAX_VALUE_BYTES,
    Conflict,
    KeyExists,
    NotFound,
    Storage,
    TooLarge,
    Update,
)


async def test_empty_store_lists_nothing_and_answers_ping(store: Storage) -> None:
    # The interface says 0 for a never-written store; etcd itself starts at revision 1 (and the
    # suite shares one etcd between tests), so we only require it to be below the first write.
    empty = await store.current_revision()
    result = await store.list("/registry/pods/")
    assert result.items == []
    assert result.continue_key is None
    assert result.revision == empty
    with pytest.raises(NotFound):
        await store.get("/registry/pods/default/nope")
    await store.ping()
    assert await store.create("/registry/pods/default/a", b"x") > empty


async def test_create_then_get_returns_value_and_revision(store: Storage) -> None:
    rev = await store.create("/registry/pods/default/a", b'{"name":"a"}')
    assert rev > 0
    kv = await store.get("/registry/pods/default/a")
    assert kv.key == "/registry/pods/default/a"
    assert kv.value == b'{"name":"a"}'
    assert kv.revision == rev
    assert kv.create_revision == rev
    assert await store.current_revision() == rev


async def test_create_of_existing_key_raises_key_exists_and_changes_nothing(store: Storage) -> None:
    rev = await store.create("/registry/pods/default/a", b"one")
    with pytest.raises(KeyExists):
        await store.create("/registry/pods/default/a", b"two")
    kv = await store.get("/registry/pods/default/a")
    assert (kv.value, kv.revision) == (b"one", rev)
    assert await store.current_revision() == rev


async def test_update_at_expected_revision_bumps_revision_and_keeps_create_revision(store: Storage) -> None:
    created = await store.create("/registry/pods/default/a", b"v1")
    updated = await store.update("/registry/pods/default/a", b"v2", created)
    assert updated > created
    kv = await store.get("/registry/pods/default/a")
    assert (kv.value, kv.revision, kv.create_revision) == (b"v2", updated, created)


async def test_update_with_stale_revision_raises_conflict_and_keeps_value(store: Storage) -> None:
    created = await store.create("/registry/pods/default/a", b"v1")
    updated = await store.update("/registry/pods/default/a", b"v2", created)
    with pytest.raises(Conflict):
        await store.update("/registry/pods/default/a", b"stale", created)
    kv = await store.get("/registry/pods/default/a")
    assert (kv.value, kv.revision) == (b"v2", updated)
    assert await store.current_revision() == updated


async def test_update_of_missing_key_raises_not_found(store: Storage) -> None:
    before = await store.current_revision()
    with pytest.raises(NotFound):
        await store.update("/registry/pods/default/ghost", b"x", 1)
    assert await store.current_revision() == before


async def test_update_each_judges_every_update_on_its_own(store: Storage) -> None:
    # ResourceQuota admission charges a namespace's quotas in one call: one lost compare-and-swap,
    # a vanished quota or an oversized value must fail only itself, never the others.
    a = await store.create("/registry/resourcequotas/ns/a", b"a1")
    b = await store.create("/registry/resourcequotas/ns/b", b"b1")
    c = await store.create("/registry/resourcequotas/ns/c", b"c1")
    b = await store.update("/registry/resourcequotas/ns/b", b"b2", b)
    huge = b"x" * (MAX_VALUE_BYTES + 1)
    outcomes = await store.update_each([
        Update("/registry/resourcequotas/ns/a", b"a2", a),
        Update("/registry/resourcequotas/ns/b", b"stale", b - 1),
        Update("/registry/resourcequotas/ns/ghost", b"g", a),
        Update("/registry/resourcequotas/ns/c", huge, c),
    ])  # fmt: skip
    assert [type(o) for o in outcomes[1:]] == [Conflict, NotFound, TooLarge]
    written = outcomes[0]
    assert isinstance(written, int) and written > b
    assert (await store.get("/registry/resourcequotas/ns/a")).revision == written
    stored = (await store.list("/registry/resourcequotas/ns/")).items
    assert [(kv.key.rsplit("/", 1)[1], kv.value) for kv in stored] == [("a", b"a2"), ("b", b"b2"), ("c", b"c1")]
    assert await store.current_revision() == written


async def test_delete_removes_key_and_returns_a_new_revision(store: Storage) -> None:
    created = await store.create("/registry/pods/default/a", b"v1")
    deleted = await store.delete("/registry/pods/default/a")
    assert deleted > created
    assert await store.current_revision() == deleted
    with pytest.raises(NotFound):
        await store.get("/registry/pods/default/a")
    assert (await store.list("/registry/pods/")).items == []
    with pytest.raises(NotFound):
        await store.delete("/registry/pods/default/a")
    with pytest.raises(NotFound):
        await store.update("/registry/pods/default/a", b"v2", created)


async def test_delete_with_expected_revision_is_compare_and_swap(store: Storage) -> None:
    created = await store.create("/registry/pods/default/a", b"v1")
    updated = await store.update("/registry/pods/default/a", b"v2", created)
    with pytest.raises(Conflict):
        await store.delete("/registry/pods/default/a", expected_revision=created)
    assert (await store.get("/registry/pods/default/a")).value == b"v2"
    deleted = await store.delete("/registry/pods/default/a", expected_revision=updated)
    assert deleted > updated


async def test_recreate_after_delete_starts_a_new_life(store: Storage) -> None:
    first = await store.create("/registry/pods/default/a", b"old")
    await store.delete("/registry/pods/default/a")
    again = await store.create("/registry/pods/default/a", b"new")
    kv = await store.get("/registry/pods/default/a")
    assert (kv.value, kv.revision, kv.create_revision) == (b"new", again, again)
    assert again > first


async def test_every_write_gets_a_strictly_greater_revision(store: Storage) -> None:
    revisions = []
    for i in range(10):
        revisions.append(await store.create(f"/registry/configmaps/default/c{i}", b"x"))
    revisions.append(await store.update("/registry/configmaps/default/c3", b"y", revisions[3]))
    revisions.append(await store.delete("/registry/configmaps/default/c5"))
    revisions.append(await store.create("/registry/configmaps/default/c5", b"z"))
    assert revisions == sorted(set(revisions)), revisions
    assert await store.current_revision() == revisions[-1]


async def test_failed_writes_do_not_bump_the_revision(store: Storage) -> None:
    rev = await store.create("/registry/pods/default/a", b"v1")
    for failing in (
        store.create("/registry/pods/default/a", b"again"),
        store.update("/registry/pods/default/a", b"x", rev + 100),
        store.update("/registry/pods/default/missing", b"x", rev),
        store.delete("/registry/pods/default/missing"),
        store.delete("/registry/pods/default/a", expected_revision=rev + 100),
    ):
        with pytest.raises((KeyExists, Conflict, NotFound)):
            await failing
    assert await store.current_revision() == rev


async def test_list_returns_keys_in_key_order_with_their_revisions(store: Storage) -> None:
    names = ["b", "a", "c/x", "a-1", "B", "a0"]
    written = {}
    for name in names:
        key = f"/registry/pods/default/{name}"
        written[key] = await store.create(key, name.encode())
    result = await store.list("/registry/pods/")
    assert [kv.key for kv in result.items] == sorted(written)
    assert {kv.key: kv.revision for kv in result.items} == written
    assert all(kv.value == kv.key.rsplit("/default/", 1)[1].encode() for kv in result.items)
    assert result.revision == await store.current_revision()
    assert result.continue_key is None


async def test_prefix_does_not_match_sibling_resources(store: Storage) -> None:
    await store.create("/registry/pods/default/a", b"pod")
    await store.create("/registry/podsx/default/a", b"podsx")
    await store.create("/registry/pod/default/a", b"pod-singular")
    await store.create("/registry/pods", b"the-bare-key")
    result = await store.list("/registry/pods/")
    assert [kv.key for kv in result.items] == ["/registry/pods/default/a"]
    namespaced = await store.list("/registry/pods/default/")
    assert [kv.key for kv in namespaced.items] == ["/registry/pods/default/a"]
    assert (await store.list("/registry/pods/other/")).items == []


async def test_value_over_max_bytes_is_refused_and_nothing_is_written(store: Storage) -> None:
    rev = await store.create("/registry/configmaps/default/small", b"small")
    huge = b"x" * (MAX_VALUE_BYTES + 1)
    with pytest.raises(TooLarge):
        await store.create("/registry/configmaps/default/huge", huge)
    with pytest.raises(NotFound):
        await store.get("/registry/configmaps/default/huge")
    with pytest.raises(TooLarge):
        await store.update("/registry/configmaps/default/small", huge, rev)
    assert (await store.get("/registry/configmaps/default/small")).value == b"small"
    assert await store.current_revision() == rev
    assert [kv.key for kv in (await store.list("/registry/configmaps/")).items] == [
        "/registry/configmaps/default/small"
    ]


async def test_a_one_mebibyte_value_round_trips(store: Storage) -> None:
    value = bytes(range(256)) * 4096  # 1 MiB, every byte value
    rev = await store.create("/registry/secrets/default/big", value)
    kv = await store.get("/registry/secrets/default/big")
    assert (kv.value, kv.revision) == (value, rev)


async def test_binary_and_unicode_keys_and_values_round_trip(store: Storage) -> None:
    value = "名前 ✓".encode() + b"\x00\xff"
    key = "/registry/configmaps/kube-system/näme.with-dots_1"
    rev = await store.create(key, value)
    assert (await store.get(key)).value == value
    assert [(kv.key, kv.revision) for kv in (await store.list("/registry/configmaps/")).items] == [(key, rev)]
