"""Pods on a mini-kubelet: Pending -> Running, exits, restarts with back-off, Jobs, init containers,
graceful deletion. One kubelet serves the whole module; pods are bound by the test (nodeName or
the binding subresource), since no scheduler runs here."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import httpx
import pytest

from tests.kubelet.conftest import condition, container_status, create_pod, get, pod_path, unique, wait_pod
from tests.support.component import wait_for


@pytest.fixture(scope="module")
def node(api: httpx.Client, start_kubelet) -> Iterator[str]:
    name = unique("pods")
    start_kubelet(name)
    wait_for(lambda: condition(get(api, f"/api/v1/nodes/{name}"), "Ready"), what="node Ready")
    yield name


def phase(pod: dict) -> str:
    return pod["status"].get("phase", "")


def events_for(api: httpx.Client, name: str) -> list[dict]:
    return get(api, f"/api/v1/namespaces/default/events?fieldSelector=involvedObject.name={name}")["items"]


def test_bound_pod_goes_from_container_creating_to_running_with_ip_and_ready(api, node):
    name = unique("web")
    create_pod(api, name, None, container="nginx")
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
               "target": {"apiVersion": "v1", "kind": "Node", "name": node}}  # fmt: skip
    assert api.post(f"{pod_path(name)}/binding", json=binding).status_code == 201
    pending = wait_pod(api, name, lambda p: p["status"].get("containerStatuses"), what="a first status")
    if phase(pending) == "Pending":  # the 0.2 s ContainerCreating window may be caught, or not
        assert container_status(pending)["state"]["waiting"]["reason"] == "ContainerCreating"
        assert condition(pending, "Ready")["status"] == "False"
        assert condition(pending, "PodScheduled")["status"] == "True"
    pod = wait_pod(api, name, lambda p: phase(p) == "Running")
    cidr = get(api, f"/api/v1/nodes/{node}")["spec"]["podCIDR"]
    status = pod["status"]
    assert ipaddress.ip_address(status["podIP"]) in ipaddress.ip_network(cidr)
    assert status["podIPs"] == [{"ip": status["podIP"]}] and status["hostIP"] == "127.0.0.1"
    assert status["startTime"] and status["qosClass"] == "BestEffort"
    for kind in ("Ready", "ContainersReady", "Initialized", "PodScheduled"):
        assert condition(pod, kind)["status"] == "True", kind
    cs = container_status(pod)
    assert cs["ready"] is True and cs["started"] is True and cs["restartCount"] == 0
    assert "startedAt" in cs["state"]["running"]
    assert cs["containerID"].startswith("fake://")
    assert cs["imageID"].startswith("docker.io/library/nginx@sha256:")
    wanted = {"Pulling", "Pulled", "Created", "Started"}
    reasons = wait_for(lambda: (by := {e["reason"]: e for e in events_for(api, name)}).keys() >= wanted and by,
                       what="kubelet events")  # fmt: skip
    assert reasons["Started"]["message"] == "Started container nginx"
    assert reasons["Started"]["source"]["component"] == "kubelet"
    # a second pod on the node gets another IP
    other = unique("web")
    create_pod(api, other, node)
    assert wait_pod(api, other, lambda p: phase(p) == "Running")["status"]["podIP"] != status["podIP"]


def test_status_settles_once_running(api, node):
    name = unique("calm")
    create_pod(api, name, node)
    rv = wait_pod(api, name, lambda p: phase(p) == "Running")["metadata"]["resourceVersion"]
    # no further writes once nothing changes: a status report later, the pod is untouched
    node_hb = condition(get(api, f"/api/v1/nodes/{node}"), "Ready")["lastHeartbeatTime"]
    wait_for(lambda: condition(get(api, f"/api/v1/nodes/{node}"), "Ready")["lastHeartbeatTime"] != node_hb, timeout=15)
    assert get(api, pod_path(name))["metadata"]["resourceVersion"] == rv


def test_sleep_with_restart_never_succeeds_with_exit_code_zero(api, node):
    name = unique("sleep")
    create_pod(api, name, node, command=["/bin/sh", "-c", "sleep 2"], restart_policy="Never")
    wait_pod(api, name, lambda p: phase(p) == "Running")
    pod = wait_pod(api, name, lambda p: phase(p) == "Succeeded", timeout=20)
    terminated = container_status(pod)["state"]["terminated"]
    assert terminated["exitCode"] == 0 and terminated["reason"] == "Completed"
    assert terminated["startedAt"] and terminated["finishedAt"]
    assert container_status(pod)["ready"] is False
    assert condition(pod, "Ready")["status"] == "False"


def test_exit_1_with_restart_never_fails(api, node):
    name = unique("fail")
    create_pod(api, name, node, command=["false"], restart_policy="Never")
    pod = wait_pod(api, name, lambda p: phase(p) == "Failed")
    assert container_status(pod)["state"]["terminated"] == {**container_status(pod)["state"]["terminated"],
                                                             "exitCode": 1, "reason": "Error"}  # fmt: skip


def test_crashing_container_restarts_with_crash_loop_back_off(api, node):
    name = unique("crash")
    create_pod(api, name, node, command=["sh", "-c", "exit 1"])
    pod = wait_pod(api, name, lambda p: container_status(p).get("restartCount", 0) >= 3
                   and "waiting" in container_status(p).get("state", {}), timeout=20)  # fmt: skip
    cs = container_status(pod)
    waiting = cs["state"]["waiting"]
    assert waiting["reason"] == "CrashLoopBackOff"
    assert waiting["message"].startswith("back-off ")
    assert f"restarting failed container=c pod={name}_default({pod['metadata']['uid']})" in waiting["message"]
    assert cs["lastState"]["terminated"]["exitCode"] == 1 and cs["lastState"]["terminated"]["reason"] == "Error"
    assert phase(pod) == "Running" and cs["ready"] is False
    wait_for(lambda: any(e["reason"] == "BackOff" and e["type"] == "Warning" for e in events_for(api, name)),
             what="a BackOff event")  # fmt: skip


def test_job_pod_with_an_unmodelled_command_completes(api, node):
    name = unique("pi")
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": "0b5e0c5e-0000-4000-8000-000000000001",
             "controller": True, "blockOwnerDeletion": True}  # fmt: skip
    create_pod(api, name, node, image="perl:5.34.0", command=["perl", "-Mbignum=bpi", "-wle", "print bpi(200)"],
               restart_policy="Never", metadata={"ownerReferences": [owner], "labels": {"job-name": "pi"}})  # fmt: skip
    pod = wait_pod(api, name, lambda p: phase(p) == "Succeeded", timeout=20)
    assert container_status(pod)["state"]["terminated"]["exitCode"] == 0
    # the same command outside a Job just keeps running
    plain = unique("perl")
    create_pod(api, plain, node, image="perl:5.34.0", command=["perl", "-e", "print 1"])
    wait_pod(api, plain, lambda p: phase(p) == "Running")


def test_init_containers_run_to_completion_before_the_app_containers(api, node):
    name = unique("init")
    init = [{"name": "setup", "image": "busybox:1.36", "command": ["sleep", "1"]}]
    create_pod(api, name, node, init=init)
    pod = wait_pod(api, name, lambda p: p["status"].get("initContainerStatuses"), what="init statuses")
    if phase(pod) == "Pending":
        assert condition(pod, "Initialized")["status"] == "False" or not condition(pod, "Initialized")
    pod = wait_pod(api, name, lambda p: phase(p) == "Running")
    init_status = pod["status"]["initContainerStatuses"][0]
    assert init_status["state"]["terminated"]["exitCode"] == 0
    assert condition(pod, "Initialized")["status"] == "True"
    started_main = container_status(pod)["state"]["running"]["startedAt"]
    assert started_main >= init_status["state"]["terminated"]["finishedAt"]


def test_deleted_pod_is_stopped_and_removed_within_its_grace_period(api, node):
    name = unique("bye")
    create_pod(api, name, node, grace=3)
    uid = wait_pod(api, name, lambda p: phase(p) == "Running")["metadata"]["uid"]
    resp = api.request("DELETE", pod_path(name), json={"gracePeriodSeconds": 3})
    assert resp.status_code == 200 and resp.json()["metadata"].get("deletionTimestamp")
    wait_for(lambda: api.get(pod_path(name)).status_code == 404, timeout=10, what="the pod to disappear")
    killing = wait_for(lambda: [e for e in events_for(api, name) if e["reason"] == "Killing"], what="Killing")
    assert killing[0]["message"] == "Stopping container c" and killing[0]["involvedObject"]["uid"] == uid
