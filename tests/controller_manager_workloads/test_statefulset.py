"""The StatefulSet controller end to end: real API server, controller-manager (statefulset and the
garbage collector), scheduler and kubelet processes, driven with the real kubectl.

The manifest is Kubernetes' documentation example: the `web` StatefulSet of nginx behind the
headless Service `nginx`, with a `www` volume claim per pod. Order is read from the controller's
own events, which its recorder writes one after another (their resourceVersions say in which order).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.controller_manager_workloads.conftest import scheduler_and_kubelet
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace

Obj = dict[str, Any]
MERGE = {"Content-Type": "application/merge-patch+json"}
WEB: Obj = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "web"},
    "spec": {
        "selector": {"matchLabels": {"app": "nginx"}},
        "serviceName": "nginx",
        "replicas": 3,
        "minReadySeconds": 0,
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {
                "terminationGracePeriodSeconds": 10,
                "containers": [{"name": "nginx", "image": "registry.k8s.io/nginx-slim:0.24",
                                "ports": [{"containerPort": 80, "name": "web"}],
                                "volumeMounts": [{"name": "www", "mountPath": "/usr/share/nginx/html"}]}],
            },
        },
        "volumeClaimTemplates": [{
            "metadata": {"name": "www"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "my-storage-class",
                     "resources": {"requests": {"storage": "1Gi"}}},
        }],
    },
}  # fmt: skip
HEADLESS: Obj = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "nginx", "labels": {"app": "nginx"}},
    "spec": {"ports": [{"port": 80, "name": "web"}], "clusterIP": "None", "selector": {"app": "nginx"}},
}


@pytest.fixture(scope="module")
def sts_cluster(
    apiserver: APIServerProcess, start_manager: Callable[..., ComponentProcess]
) -> Iterator[ComponentProcess]:
    manager = start_manager(controllers="statefulset,garbagecollector,pvc-protection")
    with scheduler_and_kubelet(apiserver, "stsnode", nodes=2):
        yield manager


def sts_path(ns: str, name: str = "") -> str:
    return f"/apis/apps/v1/namespaces/{ns}/statefulsets" + (f"/{name}" if name else "")


def pods(api: httpx.Client, ns: str) -> dict[str, Obj]:
    items = api.get(f"/api/v1/namespaces/{ns}/pods").json()["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


def running(api: httpx.Client, ns: str) -> dict[str, str]:
    """pod name → image, for pods that are Running and Ready."""
    out = {}
    for name, p in pods(api, ns).items():
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])
        if p["status"].get("phase") == "Running" and ready:
            out[name] = p["spec"]["containers"][0]["image"]
    return out


def wait_running(api: httpx.Client, ns: str, until: Callable[[dict[str, str]], bool], what: str) -> dict[str, str]:
    def check() -> dict[str, str] | None:
        got = running(api, ns)
        return got if until(got) and set(got) == set(pods(api, ns)) else None

    return wait_for(check, timeout=40, what=what)


def pod_events(api: httpx.Client, ns: str, uid: str) -> list[str]:
    """The controller's messages about pods, oldest first."""
    r = api.get(f"/api/v1/namespaces/{ns}/events", params={"fieldSelector": f"involvedObject.uid={uid}"})
    items = sorted(r.json()["items"], key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [e["message"] for e in items if " Pod " in e["message"] and "Claim" not in e["message"]]


def pod_events_of(api: httpx.Client, ns: str, uid: str, verb: str, count: int) -> list[str]:
    """The controller's `verb` messages once there are `count` of them: its events are written
    after the pods they tell of, so they can trail what the pods already show."""
    return wait_for(lambda: len(m := [e for e in pod_events(api, ns, uid) if e.startswith(verb)]) >= count and m,
                    what=f"{count} {verb} events")  # fmt: skip


def create_web(api: httpx.Client, ns: str, **spec: Any) -> Obj:
    assert api.post(f"/api/v1/namespaces/{ns}/services", json=HEADLESS).status_code == 201
    body = copy.deepcopy(WEB)
    body["spec"].update(spec)
    r = api.post(sts_path(ns), json=body)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def test_ordered_creation_stable_identity_and_claims(sts_cluster: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "sts")
    uid = create_web(api, ns)["metadata"]["uid"]
    wait_running(api, ns, lambda r: sorted(r) == ["web-0", "web-1", "web-2"], "web-0, web-1, web-2")
    created = pod_events_of(api, ns, uid, "create", 3)
    assert created == [f"create Pod web-{i} in StatefulSet web successful" for i in range(3)]
    web1 = pods(api, ns)["web-1"]
    assert (web1["spec"]["hostname"], web1["spec"]["subdomain"]) == ("web-1", "nginx")
    assert web1["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "web-1"
    (vol,) = [v for v in web1["spec"]["volumes"] if v["name"] == "www"]
    assert vol["persistentVolumeClaim"]["claimName"] == "www-web-1"
    claims = api.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims").json()["items"]
    assert sorted(c["metadata"]["name"] for c in claims) == ["www-web-0", "www-web-1", "www-web-2"]

    # Scale down: highest ordinal first; the claims stay for when the pods come back.
    api.patch(sts_path(ns, "web"), content=json.dumps({"spec": {"replicas": 1}}), headers=MERGE)
    wait_running(api, ns, lambda r: sorted(r) == ["web-0"], "only web-0 left")
    deleted = pod_events_of(api, ns, uid, "delete", 2)
    assert deleted == [f"delete Pod web-{i} in StatefulSet web successful" for i in (2, 1)]
    claims = api.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims").json()["items"]
    assert len(claims) == 3
    def one_replica() -> Obj | None:
        status = api.get(sts_path(ns, "web")).json()["status"]
        return status if status.get("replicas") == 1 else None

    st = wait_for(one_replica, what="status")
    assert st["readyReplicas"] == 1 and st["currentRevision"] == st["updateRevision"]


def test_parallel_creates_all_at_once(sts_cluster: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "sts")
    create_web(api, ns, podManagementPolicy="Parallel", replicas=4)
    wait_running(api, ns, lambda r: len(r) == 4, "four pods")
    api.patch(sts_path(ns, "web"), content=json.dumps({"spec": {"replicas": 0}}), headers=MERGE)
    wait_for(lambda: not pods(api, ns), what="all gone")


def test_rolling_update_with_partition_then_undo(
    sts_cluster: ComponentProcess, api: httpx.Client, kubectl: Callable[..., str]
) -> None:
    ns = new_namespace(api, "sts")
    create_web(api, ns, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    wait_running(api, ns, lambda r: len(r) == 3, "three pods")
    kubectl("-n", ns, "set", "image", "sts/web", "nginx=nginx:1.25")
    images = wait_running(api, ns, lambda r: r.get("web-2") == "nginx:1.25", "web-2 updated")
    assert images["web-0"] == images["web-1"] == "registry.k8s.io/nginx-slim:0.24"  # below the partition

    patch = {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}
    api.patch(sts_path(ns, "web"), content=json.dumps(patch), headers=MERGE)
    out = kubectl("-n", ns, "rollout", "status", "sts/web", "--timeout=60s")
    assert "partitioned roll out complete: 3 new pods have been updated..." in out  # partition is set (to 0)
    wait_running(api, ns, lambda r: set(r.values()) == {"nginx:1.25"}, "all updated")
    hist = kubectl("-n", ns, "rollout", "history", "sts/web")
    assert [ln.split()[0] for ln in hist.splitlines()[2:] if ln.strip()] == ["1", "2"]
    kubectl("-n", ns, "rollout", "undo", "sts/web")
    wait_running(api, ns, lambda r: set(r.values()) == {"registry.k8s.io/nginx-slim:0.24"}, "rolled back")


def test_claim_retention_policy_delete_removes_claims_with_their_pods_and_set(
    sts_cluster: ComponentProcess, api: httpx.Client
) -> None:
    ns = new_namespace(api, "stsret")
    create_web(api, ns, replicas=3, podManagementPolicy="Parallel",
               persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete", "whenDeleted": "Delete"})  # fmt: skip
    wait_running(api, ns, lambda r: len(r) == 3, "three pods")

    def claims() -> list[str]:
        items = api.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims").json()["items"]
        return sorted(c["metadata"]["name"] for c in items if not c["metadata"].get("deletionTimestamp"))

    def owners(claim: str) -> list[str]:
        got = api.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{claim}").json()
        return [r["kind"] for r in got["metadata"].get("ownerReferences") or []]

    wait_for(lambda: owners("www-web-0") == ["StatefulSet"], what="the set owns its claims")
    api.patch(sts_path(ns, "web"), content=json.dumps({"spec": {"replicas": 1}}), headers=MERGE)
    wait_for(lambda: claims() == ["www-web-0"], timeout=40, what="the scaled-away pods' claims gone with them")
    assert api.delete(sts_path(ns, "web")).status_code == 200
    wait_for(lambda: claims() == [], timeout=40, what="the last claim gone with the set")


def test_claims_are_retained_by_default(sts_cluster: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "stskeep")
    create_web(api, ns, replicas=2, podManagementPolicy="Parallel")
    wait_running(api, ns, lambda r: len(r) == 2, "two pods")
    assert api.delete(sts_path(ns, "web")).status_code == 200
    wait_for(lambda: not pods(api, ns), timeout=40, what="the pods gone with the set")
    items = api.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims").json()["items"]
    assert sorted(c["metadata"]["name"] for c in items) == ["www-web-0", "www-web-1"]
    assert all(not c["metadata"].get("ownerReferences") for c in items)
