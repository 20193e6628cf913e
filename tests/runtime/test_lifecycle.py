"""Lifecycle hooks (kubelet/lifecycle.py). preStop: a deleted pod keeps serving while its hook runs,
SIGTERM comes after; a failing hook is a FailedPreStopHook event and the container stops all the
same. postStart: runs inside the container as it starts; a failing one kills the container, which
restarts."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.runtime.conftest import Cluster, state, unique
from tests.runtime.test_probes import events_of
from tests.runtime.test_process_runtime import apply, pod_doc
from tests.support.component import wait_for


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_pre_stop_sleep_keeps_the_pod_serving_before_sigterm(cluster: Cluster) -> None:
    name = unique("prestop")
    apply(cluster, pod_doc(name, {"image": "nginx", "lifecycle": {"preStop": {"sleep": {"seconds": 3}}}}))
    pod = cluster.wait_pod(name, lambda p: state(p).get("ready"))
    url = f"http://{pod['status']['podIP']}/"
    assert wait_for(lambda: answers(url), timeout=10, what="nginx answering")
    cluster.kubectl("delete", "pod", name, "--wait=false")
    deleted = time.monotonic()
    wait_for(lambda: "Killing" in events_of(cluster, name), timeout=10, what="the Killing event")
    # the hook holds SIGTERM back: still serving a moment after the deletion
    assert answers(url), "the pod stopped serving before its preStop hook ended"
    wait_for(lambda: not answers(url), timeout=15, interval=0.1, what="the pod to stop once the hook ended")
    assert time.monotonic() - deleted >= 2.5  # 3 s of hook (measured from a little after it began)


def test_a_failing_pre_stop_hook_is_an_event_and_the_container_stops_anyway(cluster: Cluster) -> None:
    name = unique("prestop-fail")
    hook = {"preStop": {"exec": {"command": ["sh", "-c", "exit 3"]}}}
    apply(cluster, pod_doc(name, {"image": "busybox", "command": ["sleep", "3600"], "lifecycle": hook},
                           terminationGracePeriodSeconds=5))  # fmt: skip
    cluster.wait_pod(name, lambda p: state(p).get("state", {}).get("running"))
    cluster.kubectl("delete", "pod", name, "--wait=false")
    wait_for(lambda: "PreStopHook failed" in events_of(cluster, name), timeout=15, what="FailedPreStopHook")
    assert "FailedPreStopHook" in events_of(cluster, name)

    def gone() -> bool:
        return cluster.api.get(f"/api/v1/namespaces/default/pods/{name}").status_code == 404

    wait_for(gone, timeout=20, what="the pod gone (SIGTERM after the failed hook)")


def test_a_post_start_hook_runs_inside_the_container_as_it_starts(cluster: Cluster) -> None:
    name = unique("poststart")
    # Its own name: where the process runtime cannot give the container a /tmp of its own (the
    # project or --root-dir under /tmp: kubelet/process.py), it is the host's, and another run's
    # file must not answer for this one.
    started = f"/tmp/started-{name}"
    hook = {"postStart": {"exec": {"command": ["sh", "-c", f"echo from-the-hook > {started}"]}}}
    script = f"until [ -f {started} ]; do sleep 0.1; done; cat {started}; sleep 3600"
    apply(cluster, pod_doc(name, {"image": "busybox", "command": ["sh", "-c", script], "lifecycle": hook}))
    try:
        wait_for(lambda: "from-the-hook" in cluster.kubectl("logs", name).stdout, timeout=20,
                 what="the container reading what its postStart hook wrote in its /tmp")  # fmt: skip
    finally:
        cluster.kubectl("delete", "pod", name, "--wait=true", "--timeout=30s", timeout=40)
        Path(started).unlink(missing_ok=True)


def test_a_failing_post_start_hook_kills_the_container_which_restarts(cluster: Cluster) -> None:
    name = unique("poststart-fail")
    hook = {"postStart": {"exec": {"command": ["sh", "-c", "exit 7"]}}}
    apply(cluster, pod_doc(name, {"image": "busybox", "command": ["sleep", "3600"], "lifecycle": hook},
                           terminationGracePeriodSeconds=1))  # fmt: skip
    cluster.wait_pod(name, lambda p: state(p).get("restartCount", 0) >= 1, timeout=40, what="a restart")
    events = events_of(cluster, name)
    assert "FailedPostStartHook" in events and "Exec lifecycle hook ([sh -c exit 7]) for Container" in events
    assert "Killing" in events
    cluster.kubectl("delete", "pod", name, "--wait=false")
