"""Placement: pods land on nodes that fit them, spread out, and never over-commit a node."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import httpx

from tests.scheduler.conftest import all_bound, events, get_pod, make_node, make_pod, pods
from tests.support.component import ComponentProcess, wait_for

MERGE = {"Content-Type": "application/merge-patch+json"}


def _scheduled_message(http: httpx.Client, name: str) -> str | None:
    conds = get_pod(http, name)["status"].get("conditions") or []
    return next((c["message"] for c in conds if c["type"] == "PodScheduled" and c["status"] == "False"), None)


def test_thirty_pods_bind_spread_across_three_nodes_within_allocatable(
    http: httpx.Client, start_scheduler: Callable[..., ComponentProcess]
) -> None:
    for i in range(3):
        make_node(http, f"node-{i}", cpu="2", memory="2Gi")
    start_scheduler()
    for i in range(30):
        make_pod(http, f"web-{i}", cpu="150m", memory="128Mi")

    bound = wait_for(lambda: all_bound(http, 30), timeout=30, what="30 pods bound")

    per_node = Counter(p["spec"]["nodeName"] for p in bound)
    assert set(per_node) == {"node-0", "node-1", "node-2"}
    assert max(per_node.values()) - min(per_node.values()) <= 2, per_node  # LeastAllocated spreads
    for node, n in per_node.items():
        assert n * 150 <= 2000 and n * 128 <= 2048, (node, n)
    scheduled = wait_for(lambda: len(events(http, "Scheduled")) >= 30 and events(http, "Scheduled"), timeout=10)
    one = next(e for e in scheduled if e["involvedObject"]["name"] == "web-0")
    assert one["type"] == "Normal"
    assert one["message"] == f"Successfully assigned default/web-0 to {get_pod(http, 'web-0')['spec']['nodeName']}"
    assert one["source"]["component"] == "default-scheduler"
    condition = next(c for c in get_pod(http, "web-0")["status"]["conditions"] if c["type"] == "PodScheduled")
    assert condition["status"] == "True"


def test_burst_never_over_commits_and_each_shortage_is_reported_by_reason(
    http: httpx.Client, start_scheduler: Callable[..., ComponentProcess]
) -> None:
    make_node(http, "small", cpu="1", memory="8Gi", pods="20")
    make_node(http, "full", cpu="8", memory="8Gi", pods="1")
    make_pod(http, "occupant", cpu="10m", memory="10Mi", nodeName="full")  # "full" has no pod slot left
    for i in range(12):  # created before the scheduler starts: it meets all of them at once
        make_pod(http, f"burst-{i}", cpu="200m", memory="64Mi")
    start_scheduler()

    def five_bound_seven_unschedulable() -> bool:
        items = [p for p in pods(http) if p["metadata"]["name"].startswith("burst-")]
        bound = [p for p in items if p["spec"].get("nodeName")]
        waiting = [p for p in items if _scheduled_message(http, p["metadata"]["name"])]
        return len(bound) == 5 and len(waiting) == 7

    wait_for(five_bound_seven_unschedulable, timeout=30, what="5 pods bound (1 cpu / 200m), 7 unschedulable")
    assert {p["spec"]["nodeName"] for p in pods(http) if p["spec"].get("nodeName")} == {"small", "full"}
    waiting = next(p["metadata"]["name"] for p in pods(http) if not p["spec"].get("nodeName"))
    assert _scheduled_message(http, waiting) == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 Too many pods. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )

    # Deleting a bound pod frees room: one waiting pod (and only one) takes it, without a poll.
    victim = next(p for p in pods(http) if p["spec"].get("nodeName") == "small")
    http.delete(f"/api/v1/namespaces/default/pods/{victim['metadata']['name']}", params={"gracePeriodSeconds": 0})
    wait_for(lambda: len(pods(http)) == 12, timeout=10, what="the victim gone")
    wait_for(lambda: sum(1 for p in pods(http) if p["spec"].get("nodeName") == "small") == 5,
             timeout=20, what="a waiting pod takes the freed room")  # fmt: skip
    assert sum(1 for p in pods(http) if not p["spec"].get("nodeName")) == 6

    make_pod(http, "memory-hog", cpu=None, memory="64Gi")
    msg = wait_for(lambda: _scheduled_message(http, "memory-hog"), timeout=20)
    # "full" is short of a pod slot *and* of memory: one node can count under two reasons, and the
    # "<count> <reason>" strings are sorted as strings, as Kubernetes does.
    assert msg.startswith("0/2 nodes are available: 1 Too many pods, 2 Insufficient memory."), msg


def test_taints_cordons_and_host_ports_filter_nodes_and_changes_wake_waiting_pods(
    http: httpx.Client, start_scheduler: Callable[..., ComponentProcess]
) -> None:
    make_node(http, "cp", taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}])
    make_node(http, "gpu", taints=[{"key": "gpu", "value": "true", "effect": "NoExecute"}])
    make_node(http, "cordoned", unschedulable=True)
    start_scheduler()
    gpu_toleration = {"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoExecute"}
    make_pod(http, "tolerant", tolerations=[gpu_toleration])
    port = [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]
    make_pod(http, "plain", containers=[{"name": "a", "image": "nginx", "ports": port}])

    wait_for(lambda: get_pod(http, "tolerant")["spec"].get("nodeName") == "gpu", timeout=20, what="tolerant on gpu")
    failed = wait_for(lambda: events(http, "FailedScheduling"), timeout=20, what="FailedScheduling for plain")
    assert failed[0]["involvedObject"]["name"] == "plain" and failed[0]["type"] == "Warning"
    assert failed[0]["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {gpu: true}, "
        "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) were unschedulable. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )

    # Uncordoning is a cluster change: the waiting pod is retried at once and lands there.
    http.patch("/api/v1/nodes/cordoned", json={"spec": {"unschedulable": False}}, headers=MERGE)
    wait_for(lambda: get_pod(http, "plain")["spec"].get("nodeName") == "cordoned", timeout=20, what="uncordoned")

    # The same host port is taken there now.
    make_pod(http, "same-port", containers=[{"name": "a", "image": "nginx", "ports": port}])
    msg = wait_for(lambda: _scheduled_message(http, "same-port"), timeout=20)
    assert msg.startswith(
        "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, "
        "1 node(s) had untolerated taint {gpu: true}, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. preemption: 0/3 nodes are available: "
        "1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    ), msg

    # Removing the control-plane taint lets it in.
    http.patch("/api/v1/nodes/cp", json={"spec": {"taints": []}}, headers=MERGE)
    wait_for(lambda: get_pod(http, "same-port")["spec"].get("nodeName") == "cp", timeout=20, what="untainted")
