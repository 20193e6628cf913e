"""List with selectors and paging, and watch with Kubernetes' resourceVersion rules."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import httpx

from apiserver.storage.etcd import progress_is_reliable
from tests.apiserver.conftest import pod
from tests.support.apiserver import APIServerProcess


def _names(resp: httpx.Response) -> list[str]:
    assert resp.status_code == 200, resp.text
    return [i["metadata"]["name"] for i in resp.json()["items"]]


def test_list_carries_kind_and_resource_version_and_never_null_items(api: httpx.Client, ns: str) -> None:
    r = api.get(f"/api/v1/namespaces/{ns}/pods")
    body = r.json()
    assert body["kind"] == "PodList" and body["apiVersion"] == "v1"
    assert body["items"] == [] and int(body["metadata"]["resourceVersion"]) > 0


def test_label_selectors_equality_and_set_based(api: httpx.Client, ns: str) -> None:
    for name, labels in (
        ("a", {"env": "dev", "tier": "web"}),
        ("b", {"env": "prod", "tier": "web"}),
        ("c", {"env": "qa"}),
        ("d", {"tier": "db"}),
    ):
        api.post(f"/api/v1/namespaces/{ns}/pods", json=pod(name, labels=labels))
    base = f"/api/v1/namespaces/{ns}/pods"
    assert _names(api.get(base, params={"labelSelector": "tier=web"})) == ["a", "b"]
    assert _names(api.get(base, params={"labelSelector": "tier!=web"})) == ["c", "d"]
    assert _names(api.get(base, params={"labelSelector": "env in (dev,qa)"})) == ["a", "c"]
    assert _names(api.get(base, params={"labelSelector": "env notin (dev,qa)"})) == ["b", "d"]
    assert _names(api.get(base, params={"labelSelector": "!env"})) == ["d"]
    assert _names(api.get(base, params={"labelSelector": "env,tier=web"})) == ["a", "b"]
    bad = api.get(base, params={"labelSelector": "env in (dev"})
    assert bad.status_code == 400 and bad.json()["kind"] == "Status"


def test_field_selectors(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("x"))
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("y"))
    base = f"/api/v1/namespaces/{ns}/pods"
    assert _names(api.get(base, params={"fieldSelector": "metadata.name=x"})) == ["x"]
    assert _names(api.get(base, params={"fieldSelector": "metadata.name!=x"})) == ["y"]
    assert _names(api.get(base, params={"fieldSelector": "status.phase==Pending,metadata.name=y"})) == ["y"]
    assert _names(api.get(base, params={"fieldSelector": "spec.nodeName="})) == ["x", "y"]
    bad = api.get(base, params={"fieldSelector": "spec.bogus=1"})
    assert bad.status_code == 400 and "field label not supported" in bad.json()["message"]


def test_paging_with_limit_and_continue_sees_each_object_once(api: httpx.Client, ns: str) -> None:
    for i in range(23):
        api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": f"cm-{i:02d}"}})
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        params = {"limit": 5} | ({"continue": token} if token else {})
        body = api.get(f"/api/v1/namespaces/{ns}/configmaps", params=params).json()
        seen += [i["metadata"]["name"] for i in body["items"]]
        pages += 1
        if pages == 1:  # a write between pages must not show up in a consistent list
            api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "cm-00a"}})
        token = body["metadata"].get("continue")
        if not token:
            break
    assert seen == [f"cm-{i:02d}" for i in range(23)] and pages == 5


def _stream(api: httpx.Client, url: str, params: dict, n: int, timeout: float = 10.0) -> list[dict]:
    """Read `n` watch events (or until the server ends the stream)."""
    events: list[dict] = []
    with api.stream("GET", url, params={"watch": "1", **params}, timeout=timeout) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line:
                events.append(json.loads(line))
                if len(events) >= n:
                    break
    return events


def test_exact_lists_the_past_and_a_future_resource_version_is_too_large(api: httpx.Client, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/configmaps"
    api.post(base, json={"metadata": {"name": "a"}})
    then = api.get(base).json()["metadata"]["resourceVersion"]
    api.post(base, json={"metadata": {"name": "b"}})
    api.delete(f"{base}/a")

    exact = api.get(base, params={"resourceVersion": then, "resourceVersionMatch": "Exact"})
    assert _names(exact) == ["a"]
    assert exact.json()["metadata"]["resourceVersion"] == then
    paged = api.get(base, params={"resourceVersion": then, "resourceVersionMatch": "Exact", "limit": 1})
    assert _names(paged) == ["a"]
    assert _names(api.get(base, params={"resourceVersion": then, "resourceVersionMatch": "NotOlderThan"})) == ["b"]

    now = int(api.get(base).json()["metadata"]["resourceVersion"])
    for match in ("Exact", "NotOlderThan"):
        r = api.get(base, params={"resourceVersion": str(now + 1000), "resourceVersionMatch": match})
        assert r.status_code == 504, r.text
        body = r.json()
        assert (body["reason"], body["details"]["causes"][0]["reason"]) == ("Timeout", "ResourceVersionTooLarge")
        assert body["message"].startswith(f"Timeout: Too large resource version: {now + 1000}, current: ")


def test_watch_without_resource_version_starts_with_synthetic_added(api: httpx.Client, ns: str) -> None:
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("a"))
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("b"))
    events = _stream(api, f"/api/v1/namespaces/{ns}/pods", {}, 2)
    assert sorted((e["type"], e["object"]["metadata"]["name"]) for e in events) == [("ADDED", "a"), ("ADDED", "b")]


def test_watch_from_resource_version_sees_every_later_change_in_order(api: httpx.Client, ns: str) -> None:
    rv = api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "w"}}).json()["metadata"][
        "resourceVersion"
    ]
    cm = api.get(f"/api/v1/namespaces/{ns}/configmaps/w").json()
    cm["data"] = {"k": "v"}
    api.put(f"/api/v1/namespaces/{ns}/configmaps/w", json=cm)
    api.delete(f"/api/v1/namespaces/{ns}/configmaps/w")
    events = _stream(api, f"/api/v1/namespaces/{ns}/configmaps", {"resourceVersion": rv}, 2)
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)


def test_watch_streams_live_changes(api: httpx.Client, ns: str) -> None:
    start = api.get(f"/api/v1/namespaces/{ns}/pods").json()["metadata"]["resourceVersion"]
    got: list[dict] = []

    def reader() -> None:
        got.extend(_stream(api, f"/api/v1/namespaces/{ns}/pods", {"resourceVersion": start}, 2))

    t = threading.Thread(target=reader)
    t.start()
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("live"))
    api.patch(
        f"/api/v1/namespaces/{ns}/pods/live",
        json={"metadata": {"labels": {"x": "y"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    t.join(15)
    assert [e["type"] for e in got] == ["ADDED", "MODIFIED"]


def test_label_filtered_watch_sees_object_leave_as_deleted(api: httpx.Client, ns: str) -> None:
    rv = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("p", labels={"app": "web"})).json()["metadata"][
        "resourceVersion"
    ]
    api.patch(
        f"/api/v1/namespaces/{ns}/pods/p",
        json={"metadata": {"labels": {"app": "other"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    events = _stream(api, f"/api/v1/namespaces/{ns}/pods", {"resourceVersion": rv, "labelSelector": "app=web"}, 1)
    assert events[0]["type"] == "DELETED" and events[0]["object"]["metadata"]["labels"] == {"app": "other"}


def test_watch_bookmarks_and_timeout(api: httpx.Client, ns: str) -> None:
    rv = api.get(f"/api/v1/namespaces/{ns}/pods").json()["metadata"]["resourceVersion"]
    events = _stream(
        api,
        f"/api/v1/namespaces/{ns}/pods",
        {"resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "1"},
        100,
    )
    assert events and all(e["type"] == "BOOKMARK" for e in events)
    assert events[0]["object"]["kind"] == "Pod" and events[0]["object"]["metadata"]["resourceVersion"]


def _iter_watch(api: httpx.Client, url: str, params: dict) -> Iterator[dict]:
    with api.stream("GET", url, params={"watch": "true", **params}) as r:
        for line in r.iter_lines():
            if line:
                yield json.loads(line)


def _consistent_reads(api: httpx.Client, resource: str) -> float:
    prefix = f'apiserver_watch_cache_consistent_read_total{{fallback="false",resource="{resource}",success="true"}} '
    line = next((x for x in api.get("/metrics").text.splitlines() if x.startswith(prefix)), prefix + "0")
    return float(line.split()[-1])


def _served_from_cache(apiserver: APIServerProcess) -> bool:
    """What a consistent LIST should come from: the watch cache, except on an etcd whose progress
    notifications may run ahead of its events (before 3.4.31 / 3.5.13), where Kubernetes reads etcd."""
    if not apiserver.etcd_url:
        return True
    return progress_is_reliable(httpx.get(apiserver.etcd_url + "/version").json()["etcdserver"])


def test_a_consistent_list_is_served_from_the_watch_cache_once_it_caught_up(
    api: httpx.Client, ns: str, apiserver: APIServerProcess
) -> None:
    """No resourceVersion: the latest state, which Kubernetes 1.31+ serves from the watch cache
    after making sure it has seen the store's current revision (ConsistentListFromCache)."""
    api.get(f"/api/v1/namespaces/{ns}/configmaps")  # the configmaps watch cache is running
    made = api.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "seen"}})
    assert made.status_code == 201, made.text
    # a write of another kind: the store's revision moves past every configmap's
    pod_rv = int(api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("mover")).json()["metadata"]["resourceVersion"])
    before = _consistent_reads(api, "configmaps")
    r = api.get(f"/api/v1/namespaces/{ns}/configmaps")
    assert _names(r) == ["seen"]
    # the list is as new as the store: its resourceVersion is at least the pod's
    assert int(r.json()["metadata"]["resourceVersion"]) >= pod_rv
    from_cache = 1 if _served_from_cache(apiserver) else 0
    assert _consistent_reads(api, "configmaps") == before + from_cache
    # a paged list is read from storage (the cache does not page), as in Kubernetes
    assert _names(api.get(f"/api/v1/namespaces/{ns}/configmaps", params={"limit": "10"})) == ["seen"]
    assert _consistent_reads(api, "configmaps") == before + from_cache


def test_a_list_right_after_concurrent_creates_holds_every_one_of_them(api: httpx.Client, ns: str) -> None:
    """Read-your-writes under load: 16 clients create 160 pods, and the very next LIST (no
    resourceVersion) holds all 160. A cache served before it has really caught up would not (on
    etcd 3.4.23 a progress notification once vouched for events not yet sent: 3,977 of 5,000)."""
    url = f"/api/v1/namespaces/{ns}/pods"
    api.get(url)  # the pods watch cache is running

    def creates(worker: int) -> None:
        with httpx.Client(base_url=str(api.base_url), timeout=30) as c:
            for i in range(10):
                assert c.post(url, json=pod(f"w{worker}-{i}")).status_code == 201

    threads = [threading.Thread(target=creates, args=(w,)) for w in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(_names(api.get(url))) == 160
