"""The Deployment controller against a real API server, without scheduler or kubelet: pods stay
Pending, which is enough to see ReplicaSets, annotations, conditions, pause, Recreate, history and
the progress deadline. Rollouts with running pods are in test_workloads_e2e.py."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.controller_manager_workloads.helpers import DEPLOY, RS, active_pods, create, events_for, get, patch
from tests.controller_manager_workloads.podwatch import PodWatch
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for

HASH = "[bcdfghjklmnpqrstvwxz2456789]+"


def deployment(name: str, replicas: int, image: str = "nginx:1.7.9", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            **spec,
        },
    }


def replica_sets(api: httpx.Client, app: str) -> list[dict[str, Any]]:
    return get(api, f"{RS}?labelSelector=app={app}")["items"]  # type: ignore[no-any-return]


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions") or [] if c["type"] == type_), {})


def set_image(api: httpx.Client, name: str, image: str) -> None:
    op = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]
    resp = api.patch(f"{DEPLOY}/{name}", json=op, headers={"Content-Type": "application/json-patch+json"})
    resp.raise_for_status()


def test_new_replica_set_is_named_by_template_hash_and_annotated(api: httpx.Client, manager: ComponentProcess) -> None:
    d = create(api, DEPLOY, deployment("hashy", 3))
    (rs,) = wait_for(lambda: len(r := replica_sets(api, "hashy")) == 1 and r, what="a ReplicaSet")
    name = rs["metadata"]["name"]
    assert re.fullmatch(f"hashy-{HASH}", name)
    h = name.removeprefix("hashy-")
    assert rs["metadata"]["labels"]["pod-template-hash"] == h
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "hashy", "pod-template-hash": h}
    assert rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == h
    ref = rs["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["uid"], ref["controller"], ref["blockOwnerDeletion"]) == (
        "Deployment", d["metadata"]["uid"], True, True
    )  # fmt: skip
    ann = rs["metadata"]["annotations"]
    # 25% of 3: surge rounds up to 1, so at most 4 pods
    assert (ann["deployment.kubernetes.io/revision"], ann["deployment.kubernetes.io/desired-replicas"],
            ann["deployment.kubernetes.io/max-replicas"]) == ("1", "3", "4")  # fmt: skip
    wait_for(lambda: len(active_pods(api, f"pod-template-hash={h}")) == 3, what="3 pods with the hash label")

    def settled() -> dict[str, Any] | None:
        cur = get(api, f"{DEPLOY}/hashy")
        return cur if cur["status"].get("updatedReplicas") == 3 and condition(cur, "Available") else None

    cur = wait_for(settled, what="deployment status")
    assert cur["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    st = cur["status"]
    assert (st["replicas"], st["updatedReplicas"], st.get("readyReplicas", 0), st.get("availableReplicas", 0),
            st["unavailableReplicas"], st["observedGeneration"]) == (3, 3, 0, 0, 3, 1)  # fmt: skip
    avail = condition(cur, "Available")
    assert (avail["status"], avail["reason"], avail["message"]) == (
        "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."
    )  # fmt: skip
    assert condition(cur, "Progressing")["reason"] in ("NewReplicaSetCreated", "ReplicaSetUpdated")
    events = wait_for(lambda: events_for(api, d["metadata"]["uid"]), what="events")
    assert [(e["reason"], e["message"], e["source"]["component"]) for e in events] == [
        ("ScalingReplicaSet", f"Scaled up replica set {name} to 3", "deployment-controller")
    ]


def test_paused_deployment_scales_but_does_not_roll_out(api: httpx.Client, manager: ComponentProcess) -> None:
    create(api, DEPLOY, deployment("paws", 2))
    (first,) = wait_for(lambda: len(r := replica_sets(api, "paws")) == 1 and r, what="a ReplicaSet")
    patch(api, f"{DEPLOY}/paws", {"spec": {"paused": True}})
    cond = wait_for(lambda: condition(get(api, f"{DEPLOY}/paws"), "Progressing").get("reason") == "DeploymentPaused"
                    and condition(get(api, f"{DEPLOY}/paws"), "Progressing"), what="paused condition")  # fmt: skip
    assert (cond["status"], cond["message"]) == ("Unknown", "Deployment is paused")
    set_image(api, "paws", "nginx:1.9.1")
    patch(api, f"{DEPLOY}/paws", {"spec": {"replicas": 4}})
    wait_for(lambda: get(api, f"{RS}/{first['metadata']['name']}")["spec"]["replicas"] == 4, what="scaled while paused")
    assert len(replica_sets(api, "paws")) == 1  # no rollout while paused
    patch(api, f"{DEPLOY}/paws", {"spec": {"paused": False}})
    wait_for(lambda: len(replica_sets(api, "paws")) == 2, what="the rollout after resume")


def test_recreate_removes_old_pods_before_creating_new_ones(
    apiserver: APIServerProcess, api: httpx.Client, manager: ComponentProcess
) -> None:
    create(api, DEPLOY, deployment("again", 3, strategy={"type": "Recreate"}))
    (old,) = wait_for(lambda: len(r := replica_sets(api, "again")) == 1 and r, what="a ReplicaSet")
    wait_for(lambda: len(active_pods(api, "app=again")) == 3, what="3 pods")
    old_hash = old["metadata"]["labels"]["pod-template-hash"]
    with PodWatch(apiserver.url, label_selector="app=again") as watch:
        set_image(api, "again", "nginx:1.9.1")
        old_name = old["metadata"]["name"]
        new_rs = wait_for(
            lambda: [r for r in replica_sets(api, "again")
                     if r["metadata"]["name"] != old_name and r.get("status", {}).get("replicas") == 3],
            what="the new ReplicaSet",
        )[0]  # fmt: skip
        new_hash = new_rs["metadata"]["labels"]["pod-template-hash"]
        wait_for(lambda: len(active_pods(api, f"pod-template-hash={new_hash}")) == 3, what="3 new pods")
        assert watch.max_active <= 3  # the two versions never ran side by side
    assert get(api, f"{RS}/{old['metadata']['name']}")["spec"]["replicas"] == 0
    assert not active_pods(api, f"pod-template-hash={old_hash}")


def test_progress_deadline_exceeded_when_pods_never_become_available(
    api: httpx.Client, manager: ComponentProcess
) -> None:
    create(api, DEPLOY, deployment("stuck", 1, progressDeadlineSeconds=2))
    (rs,) = wait_for(lambda: len(r := replica_sets(api, "stuck")) == 1 and r, what="a ReplicaSet")
    cond = wait_for(lambda: (c := condition(get(api, f"{DEPLOY}/stuck"), "Progressing")).get("status") == "False" and c,
                    timeout=20, what="ProgressDeadlineExceeded")  # fmt: skip
    assert cond["reason"] == "ProgressDeadlineExceeded"
    assert cond["message"] == f'ReplicaSet "{rs["metadata"]["name"]}" has timed out progressing.'


def test_old_replica_sets_beyond_revision_history_limit_are_deleted(
    api: httpx.Client, manager: ComponentProcess
) -> None:
    create(api, DEPLOY, deployment("hist", 0, revisionHistoryLimit=1))
    wait_for(lambda: len(replica_sets(api, "hist")) == 1, what="a ReplicaSet")
    for version in ("1.9.1", "1.10", "1.11"):
        set_image(api, "hist", f"nginx:{version}")
        image = f"nginx:{version}"
        wait_for(lambda image=image: any(r["spec"]["template"]["spec"]["containers"][0]["image"] == image
                                         for r in replica_sets(api, "hist")), what=f"RS for {image}")  # fmt: skip
    rss = wait_for(lambda: len(r := replica_sets(api, "hist")) == 2 and r, timeout=20, what="history trimmed to 1")
    revisions = sorted(int(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]) for r in rss)
    assert revisions == [3, 4]


def test_orphan_replica_set_with_the_same_template_is_adopted_not_duplicated(
    api: httpx.Client, manager: ComponentProcess
) -> None:
    d = deployment("orphan", 1)
    template = d["spec"]["template"]
    create(api, RS, {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "orphan-manual", "labels": {"app": "orphan"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "orphan"}}, "template": template},
    })  # fmt: skip
    wait_for(lambda: len(active_pods(api, "app=orphan")) == 1, what="the orphan RS's pod")
    created = create(api, DEPLOY, d)
    rs = wait_for(lambda: (r := get(api, f"{RS}/orphan-manual"))["metadata"].get("ownerReferences") and r,
                  what="adopted")  # fmt: skip
    assert rs["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    wait_for(lambda: get(api, f"{DEPLOY}/orphan")["status"].get("updatedReplicas") == 1, what="status")
    assert [r["metadata"]["name"] for r in replica_sets(api, "orphan")] == ["orphan-manual"]
