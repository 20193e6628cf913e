"""ResourceQuota end to end: admission refuses in Kubernetes' words and stores nothing, concurrent
creates never overshoot, and the controller keeps `status.used` true as objects come and go."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from api.quantity import Quantity
from tests.support.apiserver import APIServerProcess
from tests.support.component import wait_for
from tests.support.kubectl import kubectl_binary


def pod(name: str, resources: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "nginx"}
    if resources is not None:
        container["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def make_quota(api: httpx.Client, ns: str, name: str, hard: dict[str, str], **spec: Any) -> dict[str, Any]:
    r = api.post(f"/api/v1/namespaces/{ns}/resourcequotas",
                 json={"metadata": {"name": name}, "spec": {"hard": hard, **spec}})
    assert r.status_code == 201, r.text
    return wait_for(lambda: (q := api.get(f"/api/v1/namespaces/{ns}/resourcequotas/{name}").json())
                    .get("status", {}).get("hard") == hard and q, what=f"quota {name} synced")


def used(api: httpx.Client, ns: str, name: str) -> dict[str, str]:
    return api.get(f"/api/v1/namespaces/{ns}/resourcequotas/{name}").json()["status"]["used"]


def names(api: httpx.Client, ns: str, plural: str = "pods") -> list[str]:
    return sorted(i["metadata"]["name"] for i in api.get(f"/api/v1/namespaces/{ns}/{plural}").json()["items"])


def test_a_full_quota_refuses_in_kubernetes_words_and_deleting_makes_room(api: httpx.Client, ns: str) -> None:
    make_quota(api, ns, "q", {"pods": "2", "configmaps": "1"})
    assert used(api, ns, "q") == {"pods": "0", "configmaps": "0"}
    for name in ("a", "b"):
        assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod(name)).status_code == 201
    refused = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("c"))
    assert refused.status_code == 403, refused.text
    assert refused.json()["reason"] == "Forbidden"
    assert refused.json()["message"] == (
        'pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2')
    assert names(api, ns) == ["a", "b"]
    dry = api.post(f"/api/v1/namespaces/{ns}/configmaps", params={"dryRun": "All"}, json={"metadata": {"name": "x"}})
    assert dry.status_code == 201 and used(api, ns, "q")["configmaps"] == "0"  # a dry run charges nothing

    api.delete(f"/api/v1/namespaces/{ns}/pods/a", params={"gracePeriodSeconds": "0"})
    wait_for(lambda: used(api, ns, "q")["pods"] == "1", what="the controller to give the pod back")
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("c")).status_code == 201


def test_twenty_concurrent_creates_against_room_for_five_make_exactly_five(
    apiserver: APIServerProcess, api: httpx.Client, ns: str
) -> None:
    make_quota(api, ns, "five", {"pods": "5"})

    def create(i: int) -> int:
        with apiserver.client() as c:
            return c.post(f"/api/v1/namespaces/{ns}/pods", json=pod(f"p{i:02d}")).status_code

    with ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(create, range(20)))
    assert sorted(codes) == [201] * 5 + [403] * 15
    assert len(names(api, ns)) == 5
    assert used(api, ns, "five") == {"pods": "5"}


def test_a_create_one_quota_refuses_is_charged_to_none_of_the_others(api: httpx.Client, ns: str) -> None:
    make_quota(api, ns, "roomy", {"pods": "5"})
    make_quota(api, ns, "tight", {"pods": "1"})
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("a")).status_code == 201
    refused = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("b"))
    assert refused.status_code == 403 and refused.json()["message"] == (
        'pods "b" is forbidden: exceeded quota: tight, requested: pods=1, used: pods=1, limited: pods=1')
    assert used(api, ns, "roomy") == {"pods": "1"} and used(api, ns, "tight") == {"pods": "1"}


def test_a_burst_against_two_quotas_is_charged_only_for_what_was_admitted(
    apiserver: APIServerProcess, api: httpx.Client, ns: str
) -> None:
    make_quota(api, ns, "eight", {"pods": "8"})
    make_quota(api, ns, "five", {"pods": "5"})

    def create(i: int) -> tuple[int, str]:
        with apiserver.client() as c:
            r = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod(f"p{i:02d}"))
            return r.status_code, r.json().get("message", "") if r.status_code != 201 else ""

    with ThreadPoolExecutor(20) as pool:
        outcomes = list(pool.map(create, range(20)))
    assert sorted(code for code, _ in outcomes) == [201] * 5 + [403] * 15
    assert all("exceeded quota: five, requested: pods=1, used: pods=5, limited: pods=5" in message
               for code, message in outcomes if code == 403)
    assert len(names(api, ns)) == 5
    assert used(api, ns, "five") == {"pods": "5"} and used(api, ns, "eight") == {"pods": "5"}


def test_a_burst_of_two_sizes_is_judged_as_one_by_one_and_never_overshoots(
    apiserver: APIServerProcess, api: httpx.Client, ns: str
) -> None:
    """Creates of one cost that arrive in a row are judged together (how many still fit); mixed
    with another cost, every create must still be judged as if alone, in arrival order."""
    make_quota(api, ns, "cpu", {"requests.cpu": "1"})
    millis = {i: 100 if i // 5 % 2 else 300 for i in range(20)}  # in blocks of five: runs of one cost

    def create(i: int) -> tuple[int, int, str]:
        with apiserver.client() as c:
            r = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod(f"p{i:02d}", {"requests": {"cpu": f"{millis[i]}m"}}))
            return i, r.status_code, r.json().get("message", "") if r.status_code != 201 else ""

    with ThreadPoolExecutor(20) as pool:
        outcomes = list(pool.map(create, range(20)))
    admitted = [i for i, code, _ in outcomes if code == 201]
    refused = [i for i, code, _ in outcomes if code == 403]
    assert len(admitted) + len(refused) == 20, outcomes
    charged = sum(millis[i] for i in admitted)
    assert charged <= 1000
    # a create is refused when it did not fit then; room only shrinks, so none refused would fit now
    assert all(1000 - charged < millis[i] for i in refused), (charged, refused)
    assert all(m.startswith(f'pods "p{i:02d}" is forbidden: exceeded quota: cpu, requested: requests.cpu={millis[i]}m')
               for i, code, m in outcomes if code == 403)  # fmt: skip
    assert names(api, ns) == sorted(f"p{i:02d}" for i in admitted)
    wait_for(lambda: Quantity(used(api, ns, "cpu")["requests.cpu"]) == Quantity(f"{charged}m"),
             what=f"requests.cpu used = {charged}m")


def test_a_charged_quota_is_the_same_listed_from_the_watch_cache_as_read_from_its_stored_bytes(
    api: httpx.Client, ns: str
) -> None:
    """Admission hands the watch cache the quota it wrote, so the cache need not decode it again
    (watchcache.py `expect`): what the cache then serves must be what decoding the bytes gives."""
    make_quota(api, ns, "q", {"pods": "5", "requests.cpu": "2"})
    for name in ("a", "b"):
        made = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod(name, {"requests": {"cpu": "250m"}}))
        assert made.status_code == 201, made.text

    def same() -> bool:
        listed = api.get(f"/api/v1/namespaces/{ns}/resourcequotas").json()["items"]  # the cache's objects
        read = api.get(f"/api/v1/namespaces/{ns}/resourcequotas/q").json()  # its stored bytes, decoded
        item = {"kind": "ResourceQuota", "apiVersion": "v1", **listed[0]}
        if item["metadata"]["resourceVersion"] != read["metadata"]["resourceVersion"]:
            return False  # the controller wrote in between: look again
        assert item == read and list(item["metadata"]) == list(read["metadata"]), (item, read)
        return read["status"]["used"] == {"pods": "2", "requests.cpu": "500m"}

    wait_for(same, what="the listed quota to be the one read, charged for both pods")


def test_a_deleted_quota_limits_nothing(api: httpx.Client, ns: str) -> None:
    make_quota(api, ns, "none", {"configmaps": "0"})
    cm = {"metadata": {"name": "c"}}
    assert api.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm).status_code == 403
    assert api.delete(f"/api/v1/namespaces/{ns}/resourcequotas/none").status_code == 200
    wait_for(lambda: api.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm).status_code == 201,
             what="a create once the quota is gone")


def test_a_quota_that_starts_counting_pods_charges_the_next_pod_of_a_shape_it_let_through(
    api: httpx.Client, ns: str
) -> None:
    """What a quota charges a pod of one shape is remembered only until the quota's spec changes."""
    quota = make_quota(api, ns, "q", {"configmaps": "5"})
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("a")).status_code == 201  # not counted
    quota["spec"]["hard"] = {"configmaps": "5", "pods": "1"}
    assert api.put(f"/api/v1/namespaces/{ns}/resourcequotas/q", json=quota).status_code == 200
    wait_for(lambda: used(api, ns, "q").get("pods") == "1", what="the controller to count pod a")
    refused = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("b"))  # the same shape as a
    assert refused.status_code == 403, refused.text
    assert refused.json()["message"] == (
        'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1')
    assert names(api, ns) == ["a"]


def test_compute_quotas_need_requests_and_limits_and_count_them(api: httpx.Client, ns: str) -> None:
    make_quota(api, ns, "compute", {"requests.cpu": "1", "limits.memory": "1Gi"})
    bare = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("bare"))
    assert bare.status_code == 403
    assert bare.json()["message"] == (
        'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: app; requests.cpu for: app')
    sized = {"requests": {"cpu": "600m"}, "limits": {"memory": "512Mi"}}
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("one", sized)).status_code == 201
    assert used(api, ns, "compute") == {"requests.cpu": "600m", "limits.memory": "512Mi"}
    over = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("two", sized))
    assert over.status_code == 403
    assert over.json()["message"] == (
        'pods "two" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, '
        "used: requests.cpu=600m, limited: requests.cpu=1")
    assert names(api, ns) == ["one"]


def test_scopes_and_object_counts(api: httpx.Client, ns: str) -> None:
    make_quota(api, ns, "best-effort", {"pods": "1"}, scopes=["BestEffort"])
    make_quota(api, ns, "deployments", {"count/deployments.apps": "0"})
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("free")).status_code == 201
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("free2")).status_code == 403
    sized = {"requests": {"cpu": "10m"}}  # not BestEffort: that quota does not count it
    assert api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("sized", sized)).status_code == 201
    assert used(api, ns, "best-effort") == {"pods": "1"}
    deploy = {"metadata": {"name": "web"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
        "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    r = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deploy)
    assert r.status_code == 403 and r.json()["message"] == (
        'deployments.apps "web" is forbidden: exceeded quota: deployments, requested: count/deployments.apps=1, '
        "used: count/deployments.apps=0, limited: count/deployments.apps=0")


def test_kubectl_describe_quota(apiserver: APIServerProcess, api: httpx.Client, ns: str) -> None:
    make_quota(api, ns, "q", {"pods": "3", "requests.cpu": "2"})
    api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("a", {"requests": {"cpu": "250m"}}))
    wait_for(lambda: used(api, ns, "q") == {"pods": "1", "requests.cpu": "250m"}, what="usage")
    out = subprocess.run([kubectl_binary(), "-s", apiserver.url, "-n", ns, "describe", "quota", "q"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    lines = [line.split() for line in out.stdout.splitlines()]
    assert ["pods", "1", "3"] in lines and ["requests.cpu", "250m", "2"] in lines
