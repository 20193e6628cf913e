"""End to end, as in the seeds: the textbook manifests, the real kubectl, and real scheduler,
kubelet (three simulated nodes) and controller-manager processes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from tests.controller_manager_workloads.helpers import DEPLOY, RS, active_pods, get
from tests.controller_manager_workloads.podwatch import PodWatch
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.examples import EXAMPLES_DIR

REVISION = "deployment.kubernetes.io/revision"


def running(api: httpx.Client, selector: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in active_pods(api, selector) if p["status"].get("phase") == "Running")


def test_nginx_rc_keeps_its_replicas_running_through_deletes_scaling_and_relabels(
    api: httpx.Client, kubectl: Callable[..., str], manager: ComponentProcess, nodes: list[ComponentProcess]
) -> None:
    kubectl("create", "-f", str(EXAMPLES_DIR / "nginx-rc.yaml"))
    first = wait_for(lambda: len(r := running(api, "app=nginx")) == 2 and r, timeout=30, what="2 Running pods")
    assert all(n.startswith("nginx-server-") and len(n) == len("nginx-server-") + 5 for n in first)

    kubectl("delete", "pod", first[0])
    after = wait_for(lambda: len(r := running(api, "app=nginx")) == 2 and first[0] not in r and r,
                     timeout=30, what="a replacement Running")  # fmt: skip
    assert first[1] in after

    kubectl("scale", "rc", "nginx-server", "--replicas=3")
    wait_for(lambda: len(running(api, "app=nginx")) == 3, timeout=30, what="3 Running")
    kubectl("scale", "rc", "nginx-server", "--replicas=1")
    (survivor,) = wait_for(lambda: len(r := running(api, "app=nginx")) == 1 and r, timeout=30, what="1 Running")

    kubectl("label", "pod", survivor, "app=other", "--overwrite")
    (replacement,) = wait_for(lambda: len(r := running(api, "app=nginx")) == 1 and survivor not in r and r,
                              timeout=30, what="the relabelled pod replaced")  # fmt: skip
    assert running(api, "app=other") == [survivor]  # it left the RC, and lives on
    out = kubectl("get", "rc", "nginx-server")
    assert out.split("\n")[1].split()[:4] == ["nginx-server", "1", "1", "1"]
    describe = kubectl("describe", "rc", "nginx-server")
    assert f"Created pod: {replacement}" in describe and "replication-controller" in describe


def test_rolling_update_never_drops_ready_pods_and_undo_restores_the_old_template(
    apiserver: APIServerProcess,
    api: httpx.Client,
    kubectl: Callable[..., str],
    manager: ComponentProcess,
    nodes: list[ComponentProcess],
) -> None:
    kubectl("create", "-f", str(EXAMPLES_DIR / "nginx-deployment.yaml"))

    def available(n: int) -> dict[str, Any] | None:
        d = get(api, f"{DEPLOY}/nginx-deployment")
        st = d["status"]
        done = st.get("availableReplicas") == n and st.get("updatedReplicas") == n and st.get("replicas") == n
        return d if done and st.get("observedGeneration") == d["metadata"]["generation"] else None

    wait_for(lambda: available(2), timeout=30, what="2 available")
    (first_rs,) = get(api, f"{RS}?labelSelector=app=nginx")["items"]
    kubectl("patch", "deployment", "nginx-deployment", "-p", json.dumps(
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}}}
    ))  # fmt: skip
    with PodWatch(apiserver.url, label_selector="app=nginx,pod-template-hash") as watch:
        wait_for(lambda: watch.counts() == (2, 2), what="the watch to see 2 ready pods")
        watch.arm_ready_floor()
        kubectl("set", "image", "deployment/nginx-deployment", "nginx=nginx:1.9.1")
        d = wait_for(lambda: (x := available(2)) and x["spec"]["template"]["spec"]["containers"][0]["image"]
                     == "nginx:1.9.1" and x, timeout=40, what="rollout to 1.9.1")  # fmt: skip
        wait_for(lambda: watch.counts() == (2, 2), what="old pods gone")
        assert watch.min_ready_after is not None and watch.min_ready_after >= 2  # maxUnavailable 0
        assert watch.max_active <= 3  # replicas + maxSurge
    assert d["metadata"]["annotations"][REVISION] == "2"
    progressing = next(c for c in d["status"]["conditions"] if c["type"] == "Progressing")
    new_rs = next(r for r in get(api, f"{RS}?labelSelector=app=nginx")["items"] if r["spec"]["replicas"] == 2)
    assert progressing["reason"] == "NewReplicaSetAvailable"
    assert progressing["message"] == f'ReplicaSet "{new_rs["metadata"]["name"]}" has successfully progressed.'
    assert get(api, f"{RS}/{first_rs['metadata']['name']}")["spec"]["replicas"] == 0

    kubectl("rollout", "undo", "deployment/nginx-deployment")
    d = wait_for(lambda: (x := available(2)) and x["spec"]["template"]["spec"]["containers"][0]["image"]
                 == "nginx:1.7.9" and x, timeout=40, what="rollback to 1.7.9")  # fmt: skip
    assert d["metadata"]["annotations"][REVISION] == "3"
    rss = {r["metadata"]["name"]: r for r in get(api, f"{RS}?labelSelector=app=nginx")["items"]}
    assert len(rss) == 2  # the old ReplicaSet came back; no third one
    back = rss[first_rs["metadata"]["name"]]
    assert (back["spec"]["replicas"], back["metadata"]["annotations"][REVISION]) == (2, "3")
    assert back["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    events = kubectl("describe", "deployment", "nginx-deployment")
    assert f"Scaled up replica set {new_rs['metadata']['name']} to 1" in events
    assert f"Scaled down replica set {new_rs['metadata']['name']} to 0 from 1" in events
