"""The replication manager against a real API server (no scheduler, no kubelet: pods stay Pending
unless a test plays the kubelet by writing pod status itself)."""

from __future__ import annotations

import re
import uuid

import httpx

from tests.controller_manager_workloads.helpers import (
    PODS,
    RC,
    RS,
    active_pods,
    bind,
    create,
    events_for,
    get,
    patch,
    pods,
    rc_body,
    set_pod_status,
)
from tests.controller_manager_workloads.podwatch import PodWatch
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for


def test_rc_creates_generated_pods_owned_by_it_and_records_events(api: httpx.Client, manager: ComponentProcess) -> None:
    rc = create(api, RC, rc_body("web", 2, {"app": "web"}))
    got = wait_for(lambda: len(ps := pods(api, "app=web")) == 2 and ps, what="2 pods")
    for pod in got:
        assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", pod["metadata"]["name"])
        assert pod["metadata"]["ownerReferences"] == [
            {"apiVersion": "v1", "kind": "ReplicationController", "name": "web", "uid": rc["metadata"]["uid"],
             "controller": True, "blockOwnerDeletion": True}
        ]  # fmt: skip
    status = wait_for(lambda: (s := get(api, f"{RC}/web")["status"]).get("replicas") == 2 and s, what="status")
    assert status["fullyLabeledReplicas"] == 2 and status["readyReplicas"] == 0
    assert status["observedGeneration"] == rc["metadata"]["generation"]
    names = {p["metadata"]["name"] for p in got}
    events = wait_for(lambda: len(ev := events_for(api, rc["metadata"]["uid"])) >= 2 and ev, what="events")
    assert {e["message"] for e in events} == {f"Created pod: {n}" for n in names}
    assert {(e["reason"], e["type"], e["source"]["component"]) for e in events} == {
        ("SuccessfulCreate", "Normal", "replication-controller")
    }


def test_deleted_pod_is_replaced_by_a_new_name(api: httpx.Client, manager: ComponentProcess) -> None:
    create(api, RC, rc_body("heal", 2, {"app": "heal"}))
    first = wait_for(lambda: len(ps := active_pods(api, "app=heal")) == 2 and ps, what="2 pods")
    victim = first[0]["metadata"]["name"]
    assert api.delete(f"{PODS}/{victim}").status_code == 200
    after = wait_for(
        lambda: (
            len(ps := active_pods(api, "app=heal")) == 2 and victim not in {p["metadata"]["name"] for p in ps} and ps
        ),
        what="a replacement pod",
    )
    assert first[1]["metadata"]["name"] in {p["metadata"]["name"] for p in after}


def test_rc_adopts_a_matching_orphan_instead_of_creating(api: httpx.Client, manager: ComponentProcess) -> None:
    stray_pod = {
        "metadata": {"name": "stray", "labels": {"app": "adopt"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    orphan = create(api, PODS, stray_pod)
    rc = create(api, RC, rc_body("adopt", 2, {"app": "adopt"}))
    wait_for(lambda: get(api, f"{RC}/adopt")["status"].get("replicas") == 2, what="2 replicas")
    stray = get(api, f"{PODS}/stray")
    assert [r["uid"] for r in stray["metadata"]["ownerReferences"]] == [rc["metadata"]["uid"]]
    assert stray["metadata"]["uid"] == orphan["metadata"]["uid"]
    assert len(pods(api, "app=adopt")) == 2  # one adopted + one created, not two created


def test_relabelled_pod_is_released_and_replaced(api: httpx.Client, manager: ComponentProcess) -> None:
    create(api, RC, rc_body("lbl", 2, {"app": "lbl"}))
    before = wait_for(lambda: len(ps := pods(api, "app=lbl")) == 2 and ps, what="2 pods")
    name = before[0]["metadata"]["name"]
    patch(api, f"{PODS}/{name}", {"metadata": {"labels": {"app": "other"}}})
    wait_for(lambda: not get(api, f"{PODS}/{name}")["metadata"].get("ownerReferences"), what="ownerReference removed")
    now = wait_for(lambda: len(ps := pods(api, "app=lbl")) == 2 and ps, what="a replacement")
    assert name not in {p["metadata"]["name"] for p in now}
    assert get(api, f"{PODS}/{name}")["metadata"].get("deletionTimestamp") is None  # released, not deleted


def test_scale_down_deletes_unscheduled_then_pending_then_not_ready_pods_first(
    api: httpx.Client, manager: ComponentProcess
) -> None:
    create(api, RC, rc_body("rank", 4, {"app": "rank"}))
    ps = wait_for(lambda: len(p := pods(api, "app=rank")) == 4 and p, what="4 pods")
    unscheduled, pending, not_ready, ready = (p["metadata"]["name"] for p in ps)
    for name in (pending, not_ready, ready):
        bind(api, name, "somewhere")
    set_pod_status(api, not_ready, "Running", ready=False)
    set_pod_status(api, ready, "Running", ready=True)
    wait_for(lambda: get(api, f"{RC}/rank")["status"].get("readyReplicas") == 1, what="1 ready")
    expected_left = [{pending, not_ready, ready}, {not_ready, ready}, {ready}]
    for replicas, left in zip((3, 2, 1), expected_left, strict=True):
        patch(api, f"{RC}/rank", {"spec": {"replicas": replicas}})
        wait_for(lambda left=left: {p["metadata"]["name"] for p in active_pods(api, "app=rank")} == left,
                 what=f"active pods {left}")  # fmt: skip


def test_a_burst_never_creates_more_pods_than_replicas(
    apiserver: APIServerProcess, api: httpx.Client, manager: ComponentProcess
) -> None:
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "burst"},
        "spec": {
            "replicas": 40,
            "selector": {"matchLabels": {"app": "burst"}},
            "template": {
                "metadata": {"labels": {"app": "burst"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }
    with PodWatch(apiserver.url, label_selector="app=burst") as watch:
        created = create(api, RS, rs)
        wait_for(lambda: watch.counts()[0] == 40, timeout=30, what="40 pods")
        for n in (55, 41, 60):  # rapid changes while creations and deletions are in flight
            patch(api, f"{RS}/burst", {"spec": {"replicas": n}})
        wait_for(lambda: get(api, f"{RS}/burst")["status"].get("replicas") == 60 and watch.counts()[0] == 60,
                 timeout=30, what="60 pods")  # fmt: skip
        assert watch.max_active <= 60
    creates = [e for e in events_for(api, created["metadata"]["uid"]) if e["reason"] == "SuccessfulCreate"]
    deletes = [e for e in events_for(api, created["metadata"]["uid"]) if e["reason"] == "SuccessfulDelete"]
    # every pod ever created is accounted for: the live ones plus those deleted on the way down
    assert len(watch.seen) == sum(e["count"] for e in creates)
    assert len(watch.seen) - 60 == sum(e["count"] for e in deletes)
    assert {e["source"]["component"] for e in creates} == {"replicaset-controller"}


def test_min_ready_seconds_delays_available_replicas(api: httpx.Client, manager: ComponentProcess) -> None:
    create(api, RC, rc_body("slow", 1, {"app": "slow"}, minReadySeconds=4))
    (pod,) = wait_for(lambda: len(ps := pods(api, "app=slow")) == 1 and ps, what="1 pod")
    bind(api, pod["metadata"]["name"], "somewhere")
    set_pod_status(api, pod["metadata"]["name"], "Running", ready=True)
    status = wait_for(lambda: (s := get(api, f"{RC}/slow")["status"]).get("readyReplicas") == 1 and s, what="ready")
    assert status.get("availableReplicas", 0) == 0  # ready, but not for 4 s yet
    wait_for(lambda: get(api, f"{RC}/slow")["status"].get("availableReplicas") == 1, timeout=15, what="available")


def test_create_errors_surface_as_replica_failure_condition(api: httpx.Client, manager: ComponentProcess) -> None:
    # The template names a service account that does not exist: the ServiceAccount admission plugin
    # refuses every pod, as in Kubernetes, and the RC says so in a ReplicaFailure condition.
    account = f"robot-{uuid.uuid4().hex[:6]}"
    body = rc_body("fail", 1, {"app": "fail"})
    body["spec"]["template"]["spec"]["serviceAccountName"] = account
    create(api, RC, body)
    cond = wait_for(
        lambda: [c for c in get(api, f"{RC}/fail")["status"].get("conditions") or [] if c["type"] == "ReplicaFailure"],
        what="ReplicaFailure condition",
    )[0]
    assert (cond["status"], cond["reason"]) == ("True", "FailedCreate")
    assert f'serviceaccount "{account}" not found' in cond["message"], cond["message"]
    uid = get(api, f"{RC}/fail")["metadata"]["uid"]
    failed = wait_for(lambda: [e for e in events_for(api, uid) if e["reason"] == "FailedCreate"], what="event")
    assert failed[0]["type"] == "Warning" and "is forbidden" in failed[0]["message"]
    assert not pods(api, "app=fail")
    # Fixing the cause (the account exists now) lets the pod be created and clears the condition.
    create(api, "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": account}})
    wait_for(lambda: len(pods(api, "app=fail")) == 1, timeout=30, what="the pod, once the account exists")
    wait_for(lambda: not get(api, f"{RC}/fail")["status"].get("conditions"), timeout=15, what="condition cleared")
    patch(api, f"{RC}/fail", {"spec": {"replicas": 0}})


def test_long_names_get_pods_with_generated_names_cut_to_fit(api: httpx.Client, manager: ComponentProcess) -> None:
    # generateName is cut to 58 characters before the 5-character suffix, as Kubernetes does.
    name = "l" * 250
    create(api, RC, rc_body(name, 1, {"app": "long"}))
    (pod,) = wait_for(lambda: len(ps := pods(api, "app=long")) == 1 and ps, what="1 pod")
    assert pod["metadata"]["name"].startswith("l" * 58) and len(pod["metadata"]["name"]) == 63
    assert pod["metadata"]["generateName"] == name + "-"
    patch(api, f"{RC}/{name}", {"spec": {"replicas": 0}})
