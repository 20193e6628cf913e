"""Waiting pods are retried when the cluster changes; one leader binds; schedulerName is honoured."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from tests.scheduler.conftest import events, get_pod, make_node, make_pod
from tests.support.component import ComponentProcess, wait_for

MERGE = {"Content-Type": "application/merge-patch+json"}


def test_pod_with_unmatched_selector_waits_then_schedules_when_a_node_is_labelled(
    http: httpx.Client, start_scheduler: Callable[..., ComponentProcess]
) -> None:
    for i in range(3):
        make_node(http, f"node-{i}")
    start_scheduler()  # safety-net flush is 60 s (conftest.FAST): only the label can wake the pod
    make_pod(http, "needs-ssd", nodeSelector={"disktype": "ssd"})

    failed = wait_for(lambda: events(http, "FailedScheduling"), timeout=20, what="FailedScheduling event")
    expected = (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert failed[0]["message"] == expected
    assert failed[0]["type"] == "Warning" and failed[0]["source"]["component"] == "default-scheduler"
    cond = wait_for(
        lambda: next(c for c in get_pod(http, "needs-ssd")["status"]["conditions"] if c["type"] == "PodScheduled"),
        timeout=10,
    )
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", expected)

    # A heartbeat-like status update is not a reason to retry; a label is.
    labelled_at = time.monotonic()
    http.patch("/api/v1/nodes/node-1", json={"metadata": {"labels": {"disktype": "ssd"}}}, headers=MERGE)
    wait_for(lambda: get_pod(http, "needs-ssd")["spec"].get("nodeName") == "node-1", timeout=20, what="bound")
    assert time.monotonic() - labelled_at < 30  # far sooner than the 60 s safety net

    # Required node affinity (NotIn) avoids the labelled node.
    term = {"matchExpressions": [{"key": "disktype", "operator": "NotIn", "values": ["ssd"]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    for i in range(4):
        make_pod(http, f"hdd-{i}", affinity=affinity)
    wait_for(lambda: all(get_pod(http, f"hdd-{i}")["spec"].get("nodeName") in ("node-0", "node-2") for i in range(4)),
             timeout=20, what="affinity pods on unlabelled nodes")  # fmt: skip


def test_with_leader_election_only_one_of_two_schedulers_binds(
    http: httpx.Client, start_scheduler: Callable[..., ComponentProcess]
) -> None:
    for i in range(2):
        make_node(http, f"node-{i}")
    election = ["--leader-elect", "--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s",
                "--leader-elect-retry-period", "0.5s"]  # fmt: skip
    first = start_scheduler(*election)
    second = start_scheduler(*election)

    def holder() -> str:
        return http.get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler").json()["spec"][
            "holderIdentity"
        ]

    leader = wait_for(holder, timeout=20, what="a leader")
    for i in range(10):
        make_pod(http, f"p-{i}")
    wait_for(lambda: len(events(http, "Scheduled")) == 10 and events(http, "Scheduled"), timeout=30)
    sources = {e["source"].get("host") for e in events(http, "Scheduled")}
    assert sources == {leader}  # every binding came from the lease holder

    # The leader stops cleanly (releasing the lease): the standby takes over and schedules.
    leading = [p for p in (first, second) if _leads(p)]
    assert len(leading) == 1
    standby = second if leading[0] is first else first
    leading[0].stop()
    wait_for(lambda: holder() not in ("", leader), timeout=20, what="the standby to take the lease")
    make_pod(http, "after-failover")
    wait_for(lambda: get_pod(http, "after-failover")["spec"].get("nodeName"), timeout=20, what="bound by new leader")
    assert standby.running


def _leads(proc: ComponentProcess) -> bool:
    text = httpx.get(f"http://127.0.0.1:{proc.health_port}/metrics").text
    return 'leader_election_master_status{name="kube-scheduler"} 1.0' in text


def test_scheduler_name_other_ignores_default_pods(
    http: httpx.Client, start_scheduler: Callable[..., ComponentProcess]
) -> None:
    make_node(http, "node-0")
    start_scheduler("--scheduler-name", "other")
    make_pod(http, "mine", schedulerName="other")
    make_pod(http, "default-one")
    wait_for(lambda: get_pod(http, "mine")["spec"].get("nodeName") == "node-0", timeout=20)
    scheduled = wait_for(lambda: events(http, "Scheduled"), timeout=10, what="the Scheduled event")
    assert [e["source"]["component"] for e in scheduled] == ["other"]
    # The default pod was never looked at: no event, no condition, no node.
    default_pod = get_pod(http, "default-one")
    assert default_pod["spec"].get("nodeName") is None
    assert not [c for c in default_pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
    assert not events(http, "FailedScheduling")
