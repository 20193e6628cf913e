"""RESTClient against a real mini-apiserver: verbs, URL building, errors as one exception tree."""

from __future__ import annotations

import contextlib

import pytest

from api import registry
from api.errors import AlreadyExistsError, ConflictError, GoneError, NotFoundError
from client.errors import ConnectionFailed, ConnectionRefused
from client.rest import RESTClient, resource_path
from tests.support.apiserver import APIServerProcess


def test_resource_path_follows_group_version_and_scope() -> None:
    assert resource_path("pods", "default", "web", "status") == "/api/v1/namespaces/default/pods/web/status"
    assert resource_path("deployments.apps", "x") == "/apis/apps/v1/namespaces/x/deployments"
    assert resource_path("nodes", "ignored", "n1") == "/api/v1/nodes/n1"
    assert resource_path(registry.by_key("leases.coordination.k8s.io"), None) == (
        "/apis/coordination.k8s.io/v1/leases"
    )
    assert resource_path("deploy") == "/apis/apps/v1/deployments"  # kubectl's short names work too
    with pytest.raises(ValueError, match='doesn\'t have a resource type "nosuch"'):
        resource_path("nosuch")


async def test_create_get_list_update_patch_delete_round_trip(client: RESTClient) -> None:
    cm = await client.create(
        "configmaps", {"metadata": {"name": "rt-a", "labels": {"app": "x"}}, "data": {"k": "1"}}
    )
    assert cm["metadata"]["resourceVersion"]
    got = await client.get(registry.by_key("configmaps"), "rt-a", "default")
    assert got["data"] == {"k": "1"}

    listed = await client.list("configmaps", "default", label_selector="app=x")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["rt-a"]
    assert listed["metadata"]["resourceVersion"]

    got["data"]["k"] = "2"
    updated = await client.update("configmaps", got)
    assert updated["data"] == {"k": "2"}

    merged = await client.patch("configmaps", "rt-a", {"data": {"m": "3"}})
    assert merged["data"] == {"k": "2", "m": "3"}
    jsonp = await client.patch("configmaps", "rt-a", [{"op": "remove", "path": "/data/k"}], patch_type="json")
    assert jsonp["data"] == {"m": "3"}

    await client.delete("configmaps", "rt-a")
    with pytest.raises(NotFoundError, match='configmaps "rt-a" not found'):
        await client.get("configmaps", "rt-a")


async def test_strategic_merge_patch_keeps_list_items_by_merge_key(client: RESTClient) -> None:
    pod = {
        "metadata": {"name": "rt-smp"},
        "spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "busybox"}]},
    }
    await client.create("pods", pod)
    patched = await client.patch(
        "pods",
        "rt-smp",
        {"spec": {"containers": [{"name": "b", "image": "busybox:2"}]}},
        patch_type="strategic",
    )
    assert [(c["name"], c["image"]) for c in patched["spec"]["containers"]] == [
        ("a", "nginx"),
        ("b", "busybox:2"),
    ]


async def test_server_errors_become_the_matching_status_error(client: RESTClient) -> None:
    await client.create("configmaps", {"metadata": {"name": "rt-err"}})
    with pytest.raises(AlreadyExistsError) as exc:
        await client.create("configmaps", {"metadata": {"name": "rt-err"}})
    assert exc.value.code == 409 and exc.value.reason == "AlreadyExists"

    stale = await client.get("configmaps", "rt-err")
    await client.patch("configmaps", "rt-err", {"data": {"x": "1"}})
    with pytest.raises(ConflictError, match="the object has been modified"):
        await client.update("configmaps", stale)  # compare-and-swap on resourceVersion


async def test_connection_refused_says_so_in_kubectls_words() -> None:
    async with RESTClient("http://127.0.0.1:1") as c:
        with pytest.raises(ConnectionRefused) as exc:
            await c.list("pods")
    assert str(exc.value) == (
        "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?"
    )
    assert isinstance(exc.value, ConnectionFailed)


async def test_watch_streams_changes_after_a_resource_version(client: RESTClient) -> None:
    rv = (await client.list("configmaps", "default"))["metadata"]["resourceVersion"]
    await client.create("configmaps", {"metadata": {"name": "rt-w"}})
    await client.patch("configmaps", "rt-w", {"data": {"a": "b"}})
    await client.delete("configmaps", "rt-w")
    seen: list[tuple[str, str]] = []
    async with contextlib.aclosing(
        client.watch("configmaps", "default", resource_version=rv, timeout_seconds=5)
    ) as w:
        async for ev in w:
            if ev.type != "BOOKMARK" and ev.object["metadata"]["name"] == "rt-w":
                seen.append((ev.type, ev.resource_version))
            if len(seen) == 3:
                break
    assert [t for t, _ in seen] == ["ADDED", "MODIFIED", "DELETED"]
    assert [int(v) for _, v in seen] == sorted(int(v) for _, v in seen)


async def test_watch_from_a_too_old_resource_version_raises_gone() -> None:
    server = APIServerProcess(args=["--watch-cache-size", "2"]).start()
    try:
        async with RESTClient(server.url, qps=0) as c:
            rv = (await c.list("configmaps", "default"))["metadata"]["resourceVersion"]
            for i in range(4):
                await c.create("configmaps", {"metadata": {"name": f"old-{i}"}})
            with pytest.raises(GoneError) as exc:
                async with contextlib.aclosing(
                    c.watch("configmaps", resource_version=rv, timeout_seconds=5)
                ) as w:
                    async for _ in w:
                        pass
            assert exc.value.code == 410
    finally:
        server.cleanup()


async def test_bind_sets_the_pods_node(client: RESTClient) -> None:
    await client.create(
        "pods", {"metadata": {"name": "rt-bind"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    )
    await client.bind("default", "rt-bind", "node-1")
    assert (await client.get("pods", "rt-bind"))["spec"]["nodeName"] == "node-1"
