"""Paged lists: the reflector lists a page at a time, and an expired continue falls back to one full list."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from api.errors import GoneError
from client.informer import Informer, meta_namespace_key
from client.pager import ListPager
from client.rest import RESTClient
from tests.client.conftest import eventually
from tests.support.apiserver import APIServerProcess
from tests.support.etcd import EtcdProcess, etcd_process  # noqa: F401  (fixture)


async def fresh_namespace(client: RESTClient, count: int) -> str:
    ns = f"page-{uuid.uuid4().hex[:8]}"
    await client.create("namespaces", {"metadata": {"name": ns}})
    for i in range(count):
        await client.create("configmaps", {"metadata": {"name": f"cm-{i}"}}, ns)
    return ns


async def truth(client: RESTClient, namespace: str) -> dict[str, str]:
    items = (await client.list("configmaps", namespace))["items"]
    return {meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in items}


async def test_the_reflector_lists_in_pages_and_watches_from_the_lists_revision(client: RESTClient) -> None:
    ns = await fresh_namespace(client, 7)
    informer = Informer(client, "configmaps", namespace=ns, page_size=3)
    informer.start()
    try:
        assert await informer.wait_for_sync(5)
        assert informer.reflector.pager.pages == 3  # 3 + 3 + 1: the server honoured the limit
        want = await truth(client, ns)
        assert {meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in informer.list()} == want
        assert all(o["kind"] == "ConfigMap" for o in informer.list())

        await client.create("configmaps", {"metadata": {"name": "after"}}, ns)
        await client.delete("configmaps", "cm-0", ns)
        want = await truth(client, ns)
        await eventually(
            lambda: {meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in informer.list()} == want,
            what="the watch that follows the paged list",
        )
    finally:
        await informer.stop()


async def test_an_informer_lists_unpaged_unless_asked(client: RESTClient) -> None:
    """One LIST without a limit, which the server answers from its watch cache (as client-go's default)."""
    ns = await fresh_namespace(client, 7)
    informer = Informer(client, "configmaps", namespace=ns)
    informer.start()
    try:
        assert await informer.wait_for_sync(5)
        assert informer.reflector.pager.pages == 1
        assert len(informer.list()) == 7
    finally:
        await informer.stop()


async def test_the_pages_are_one_snapshot_at_the_first_pages_revision(client: RESTClient) -> None:
    ns = await fresh_namespace(client, 5)
    first = await client.list("configmaps", ns, limit=2)

    class WriteBetweenPages(RESTClient):
        """Changes the namespace after the pager's first page: later pages must not show it."""

        async def list(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            page = await super().list(*args, **kwargs)
            if not kwargs.get("continue_"):
                await self.delete("configmaps", "cm-4", ns)
                await self.create("configmaps", {"metadata": {"name": "cm-9"}}, ns)
            return page

    async with WriteBetweenPages(client.base_url, qps=0) as writer:
        listed = await ListPager(writer, "configmaps", page_size=2).list(ns)
    names = [o["metadata"]["name"] for o in listed["items"]]
    assert names == [f"cm-{i}" for i in range(5)]  # cm-4 still there, cm-9 not yet
    assert listed["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "continue" not in listed["metadata"]


@pytest.fixture
async def etcd_apiserver(etcd_process: EtcdProcess) -> AsyncIterator[APIServerProcess]:  # noqa: F811
    server = await asyncio.to_thread(APIServerProcess(etcd_url=etcd_process.url).start)
    yield server
    await asyncio.to_thread(server.cleanup)


async def test_an_expired_continue_falls_back_to_one_full_list(
    etcd_process: EtcdProcess,  # noqa: F811
    etcd_apiserver: APIServerProcess,
) -> None:
    class CompactAfterFirstPage(RESTClient):
        """After the first page: one more write, then etcd compacted past the first page's revision."""

        compacted = False

        async def list(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            page = await super().list(*args, **kwargs)
            if kwargs.get("limit") and not kwargs.get("continue_") and not self.compacted:
                await self.create("configmaps", {"metadata": {"name": "late"}}, args[1])
                await compact_etcd(etcd_process.url)
                self.compacted = True
            return page

    async with CompactAfterFirstPage(etcd_apiserver.url, qps=0) as client:
        ns = await fresh_namespace(client, 5)
        # What the pager meets: the server refuses a continue whose revision etcd no longer has.
        first = await RESTClient.list(client, "configmaps", ns, limit=2)
        await client.create("configmaps", {"metadata": {"name": "probe"}}, ns)
        await compact_etcd(etcd_process.url)
        with pytest.raises(GoneError):
            await RESTClient.list(client, "configmaps", ns, limit=2, continue_=first["metadata"]["continue"])

        pager = ListPager(client, "configmaps", page_size=2)
        listed = await pager.list(ns)
        assert client.compacted
        assert pager.pages == 2  # the first page, then one full list (the refused page is not counted)
        names = sorted(o["metadata"]["name"] for o in listed["items"])
        assert names == sorted([f"cm-{i}" for i in range(5)] + ["late", "probe"])
        assert "continue" not in listed["metadata"]
        late = next(o for o in listed["items"] if o["metadata"]["name"] == "late")
        assert int(listed["metadata"]["resourceVersion"]) >= int(late["metadata"]["resourceVersion"])


async def compact_etcd(url: str) -> None:
    """Compact etcd to its newest revision, through etcd's own HTTP gateway."""
    async with httpx.AsyncClient(base_url=url) as etcd:
        head = (await etcd.post("/v3/kv/range", json={"key": "AA=="})).json()["header"]["revision"]
        (await etcd.post("/v3/kv/compaction", json={"revision": head, "physical": True})).raise_for_status()
