"""The controller-manager dying: a SIGKILL in the middle of a rollout, and leader election between
two managers. Level-triggered loops make both boring, which is the point: a new process lists the
world, sees where the rollout stands and carries on, with no memory of what the dead one did."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import httpx

from tests.controller_manager_workloads.helpers import DEPLOY, PODS, RC, active_pods, create, get, patch, rc_body
from tests.controller_manager_workloads.podwatch import PodWatch
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"
FAST_LEASE = [
    "--leader-elect",
    "--leader-elect-lease-duration", "2s",
    "--leader-elect-renew-deadline", "1.5s",
    "--leader-elect-retry-period", "0.3s",
]  # fmt: skip


def rollout_done(api: httpx.Client, name: str, image: str, replicas: int) -> bool:
    d = get(api, f"{DEPLOY}/{name}")
    st = d["status"]
    return (
        d["spec"]["template"]["spec"]["containers"][0]["image"] == image
        and st.get("observedGeneration") == d["metadata"]["generation"]
        and st.get("updatedReplicas") == st.get("availableReplicas") == st.get("replicas") == replicas
    )


def test_sigkill_mid_rollout_then_restart_completes_without_extra_pods(
    apiserver: APIServerProcess,
    api: httpx.Client,
    start_manager: Callable[..., ComponentProcess],
    nodes: list[ComponentProcess],
) -> None:
    first = start_manager()
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "crash"},
        "spec": {
            "replicas": 6,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "selector": {"matchLabels": {"app": "crash"}},
            "template": {"metadata": {"labels": {"app": "crash"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx:1.7.9"}]}},
        },
    }  # fmt: skip
    create(api, DEPLOY, body)
    wait_for(lambda: rollout_done(api, "crash", "nginx:1.7.9", 6), timeout=40, what="6 available")
    with PodWatch(apiserver.url, label_selector="app=crash") as watch:
        wait_for(lambda: watch.counts() == (6, 6), what="the watch to see 6 ready pods")
        op = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.9.1"}]
        resp = api.patch(f"{DEPLOY}/crash", json=op, headers={"Content-Type": "application/json-patch+json"})
        resp.raise_for_status()
        wait_for(lambda: 1 <= get(api, f"{DEPLOY}/crash")["status"].get("updatedReplicas", 0) < 6,
                 timeout=30, interval=0.05, what="the rollout under way")  # fmt: skip  (a passing state)
        first.kill()
        second = start_manager()
        try:
            wait_for(lambda: rollout_done(api, "crash", "nginx:1.9.1", 6), timeout=40, what="rollout completed")
            wait_for(lambda: watch.counts() == (6, 6), timeout=20, what="old pods gone")
        finally:
            second.stop()  # the next test brings its own managers
        assert watch.max_active <= 7, watch.max_active  # replicas + maxSurge, even across the crash
        assert len(watch.seen) == 12  # 6 old + 6 new: nothing created twice
    assert get(api, f"{DEPLOY}/crash")["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def _holder_pid(api: httpx.Client) -> int | None:
    resp = api.get(LEASE)
    if resp.status_code != 200:
        return None
    holder = resp.json()["spec"].get("holderIdentity") or ""
    m = re.match(r".*_(\d+)_[0-9a-f]+$", holder)
    return int(m.group(1)) if m else None


def _reconciles(proc: ComponentProcess, port: int) -> float:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("controller_runtime_reconcile_total{"))  # fmt: skip


def test_only_the_leader_acts_and_the_standby_takes_over_when_it_dies(
    api: httpx.Client, start_manager: Callable[..., ComponentProcess], nodes: list[ComponentProcess]
) -> None:
    managers = [start_manager(*FAST_LEASE), start_manager(*FAST_LEASE)]
    by_pid = {m.proc.pid: m for m in managers if m.proc is not None}
    leader_pid = wait_for(lambda: _holder_pid(api) in by_pid and _holder_pid(api), timeout=20, what="a leader")
    leader = by_pid[leader_pid]
    (standby,) = [m for m in managers if m is not leader]
    create(api, RC, rc_body("elect", 2, {"app": "elect"}))
    wait_for(lambda: len(active_pods(api, "app=elect")) == 2, timeout=20, what="2 pods")
    ports = {m: int(m.args[m.args.index("--port") + 1]) for m in managers}
    assert _reconciles(leader, ports[leader]) > 0
    assert _reconciles(standby, ports[standby]) == 0  # the standby has not acted at all

    leader.kill()
    assert standby.proc is not None
    wait_for(lambda: _holder_pid(api) == standby.proc.pid, timeout=20, what="the standby to take the lease")
    patch(api, f"{RC}/elect", {"spec": {"replicas": 3}})
    wait_for(lambda: len(active_pods(api, "app=elect")) == 3, timeout=20, what="3 pods from the new leader")
    assert _reconciles(standby, ports[standby]) > 0
    names = [p["metadata"]["name"] for p in get(api, f"{PODS}?labelSelector=app=elect")["items"]]
    assert len(names) == 3, json.dumps(names)
