"""Informer: a cache that converges on the server's truth - through kill -9 and through 410 Gone."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from api import registry
from client.informer import (
    Informer,
    SharedInformerFactory,
    index_by_node_name,
    meta_namespace_key,
    split_key,
)
from client.rest import RESTClient
from tests.client.conftest import eventually
from tests.support.apiserver import APIServerProcess


class Recorder:
    """Handlers that only write down keys, the way real handlers only enqueue them."""

    def __init__(self, informer: Informer) -> None:
        self.adds: Counter[str] = Counter()
        self.updates: Counter[str] = Counter()
        self.deletes: Counter[str] = Counter()
        informer.add_event_handler(
            on_add=lambda o: self.adds.update([meta_namespace_key(o)]),
            on_update=lambda old, new: self.updates.update([meta_namespace_key(new)]),
            on_delete=lambda o: self.deletes.update([meta_namespace_key(o)]),
        )


async def truth(client: RESTClient, namespace: str) -> dict[str, str]:
    """key -> resourceVersion, straight from the server."""
    items = (await client.list("configmaps", namespace))["items"]
    return {meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in items}


def cached(informer: Informer) -> dict[str, str]:
    return {meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in informer.list()}


@pytest.fixture
async def own_server() -> AsyncIterator[APIServerProcess]:
    server = await asyncio.to_thread(APIServerProcess(args=["--watch-cache-size", "5"]).start)
    yield server
    await asyncio.to_thread(server.cleanup)


def test_keys_split_and_join() -> None:
    assert meta_namespace_key({"metadata": {"namespace": "ns", "name": "a"}}) == "ns/a"
    assert meta_namespace_key({"metadata": {"name": "node-1"}}) == "node-1"
    assert split_key("ns/a") == ("ns", "a")
    assert split_key("node-1") == ("", "node-1")


async def test_informer_syncs_notifies_and_indexes(client: RESTClient) -> None:
    ns = "default"
    for name, node in [("ix-a", "n1"), ("ix-b", "n2"), ("ix-c", "n1")]:
        pod = {
            "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
        }
        await client.create("pods", pod, ns)
    informer = Informer(client, "pods", namespace=ns, label_selector=None)
    informer.add_indexers({"byNode": index_by_node_name})
    rec = Recorder(informer)
    informer.start()
    try:
        assert await informer.wait_for_sync(5)
        assert informer.has_synced()
        assert [o["metadata"]["name"] for o in informer.by_index("byNode", "n1")] == ["ix-a", "ix-c"]
        assert informer.get("default/ix-b") is not None
        assert rec.adds["default/ix-a"] == 1

        await client.patch("pods", "ix-c", {"metadata": {"labels": {"moved": "yes"}}}, ns)
        await client.delete("pods", "ix-a", ns, grace_period_seconds=0)
        await eventually(lambda: rec.updates["default/ix-c"] >= 1 and rec.deletes["default/ix-a"] == 1)
        await eventually(lambda: informer.index_keys("byNode", "n1") == ["default/ix-c"], what="index update")

        late = Counter[str]()  # a handler added after sync hears about what is already cached
        informer.add_event_handler(on_add=lambda o: late.update([meta_namespace_key(o)]))
        assert set(late) == set(informer.list_keys())
    finally:
        await informer.stop()


async def test_informer_converges_after_the_server_is_killed_and_restarted(
    own_server: APIServerProcess,
) -> None:
    ns = "default"
    async with RESTClient(own_server.url, qps=0) as client:
        for name in ["a", "b", "c"]:
            await client.create("configmaps", {"metadata": {"name": name}, "data": {"v": "0"}}, ns)
        informer = Informer(client, "configmaps", namespace=ns, backoff_initial=0.05, backoff_max=0.3)
        rec = Recorder(informer)
        informer.start()
        try:
            assert await informer.wait_for_sync(5)
            assert cached(informer) == await truth(client, ns)

            own_server.kill()  # SIGKILL: the watch stream breaks without a goodbye
            await asyncio.to_thread(own_server.start)  # same data dir, same port
            await client.delete("configmaps", "a", ns)
            await client.create("configmaps", {"metadata": {"name": "d"}}, ns)
            await client.patch("configmaps", "b", {"data": {"v": "1"}}, ns)
            for i in range(6):  # overflow the 5-event watch cache so a resume may well get 410
                await client.patch("configmaps", "c", {"data": {"v": str(i)}}, ns)

            want = await truth(client, ns)
            await eventually(lambda: cached(informer) == want, what="cache == server after restart")
        finally:
            await informer.stop()
    assert rec.deletes == Counter({"default/a": 1})  # the delete was seen, exactly once
    assert rec.adds == Counter(
        {"default/a": 1, "default/b": 1, "default/c": 1, "default/d": 1}
    )  # no duplicates
    assert rec.updates["default/b"] >= 1 and rec.updates["default/c"] >= 1
    assert "default/d" not in rec.updates or rec.updates["default/d"] == 0


async def test_informer_relists_on_410_and_reports_missed_deletes(own_server: APIServerProcess) -> None:
    ns = "default"
    async with RESTClient(own_server.url, qps=0) as client:
        for name in ["a", "b", "c"]:
            await client.create("configmaps", {"metadata": {"name": name}}, ns)
        informer = Informer(client, "configmaps", namespace=ns, backoff_initial=0.05, backoff_max=0.3)
        rec = Recorder(informer)
        informer.start()
        try:
            assert await informer.wait_for_sync(5)
            assert informer.reflector.lists == 1
            await informer.stop()  # the watch is down; the cache and its resourceVersion stay

            await client.delete("configmaps", "a", ns)
            await client.create("configmaps", {"metadata": {"name": "d"}}, ns)
            await client.patch("configmaps", "b", {"data": {"v": "1"}}, ns)
            for i in range(6):  # > 5 events: the cache's resourceVersion falls out of the watch cache
                await client.create("configmaps", {"metadata": {"name": f"x{i}"}}, ns)
            assert informer.get("default/a") is not None  # nothing was seen meanwhile

            informer.start()  # resumes from the old resourceVersion -> 410 Expired -> LIST
            want = await truth(client, ns)
            await eventually(lambda: cached(informer) == want, what="cache == server after 410")
            assert informer.reflector.lists == 2
        finally:
            await informer.stop()
    assert rec.deletes == Counter({"default/a": 1})  # found by comparing the new list with the cache
    assert rec.updates == Counter({"default/b": 1})  # changed: update; unchanged c: nothing
    assert all(n == 1 for n in rec.adds.values()) and "default/d" in rec.adds


async def test_bookmarks_advance_the_resume_point_of_a_quiet_watch(client: RESTClient) -> None:
    informer = Informer(client, "configmaps", namespace="kube-public")  # nothing changes in there
    informer.start()
    try:
        assert await informer.wait_for_sync(5)
        listed_rv = int(informer.reflector.last_sync_resource_version)
        await client.create("configmaps", {"metadata": {"name": "bm-elsewhere"}}, "default")
        await eventually(
            lambda: int(informer.reflector.last_sync_resource_version) > listed_rv,
            what="a BOOKMARK past the write in another namespace",
        )
        assert len(informer) == len((await client.list("configmaps", "kube-public"))["items"])
    finally:
        await informer.stop()


async def test_shared_informer_factory_hands_out_one_informer_per_resource(client: RESTClient) -> None:
    factory = SharedInformerFactory(client, namespace="default")
    pods = factory.informer_for("pods")
    assert factory.informer_for(registry.by_key("pods")) is pods  # the scheduler and kubelet code share it
    assert factory.informer_for("po") is pods
    assert factory.informer_for("pods", label_selector="app=x") is not pods
    factory.informer_for("configmaps")
    factory.start()
    try:
        synced = await factory.wait_for_cache_sync(5)
        assert synced["pods"] and synced["configmaps"] and all(synced.values())
    finally:
        await factory.shutdown()
