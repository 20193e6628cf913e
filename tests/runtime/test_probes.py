"""Probes on real processes: a failing liveness probe restarts the container with Kubernetes'
events; readiness drives the Ready condition; a startup probe holds the others back."""

from __future__ import annotations

from pathlib import Path

from tests.runtime.conftest import Cluster, state, unique
from tests.runtime.test_process_runtime import apply, pod_doc
from tests.support.component import free_port


def events_of(cluster: Cluster, name: str) -> str:
    return cluster.kubectl("get", "events", "--field-selector", f"involvedObject.name={name}").stdout


def test_a_failing_liveness_probe_restarts_the_container(cluster: Cluster) -> None:
    name = unique("liveness")
    healthy = f"/tmp/healthy-{name}"
    container = {
        "image": "busybox",
        "args": ["/bin/sh", "-c", f"touch {healthy}; sleep 1; rm -f {healthy}; sleep 600"],
        "livenessProbe": {"exec": {"command": ["cat", healthy]}, "periodSeconds": 1, "failureThreshold": 2},
    }
    apply(cluster, pod_doc(name, container, terminationGracePeriodSeconds=1))
    try:
        pod = cluster.wait_pod(name, lambda p: state(p).get("restartCount", 0) >= 1, timeout=40)
        assert state(pod)["lastState"]["terminated"]["exitCode"] in (137, 143)
        events = events_of(cluster, name)
        assert f"Liveness probe failed: cat: can't open '{healthy}': No such file or directory" in events
        assert "Container c failed liveness probe, will be restarted" in events
        assert "Unhealthy" in events and "Killing" in events
    finally:  # the container shares the host's /tmp: once it is gone, take back the file it made there
        cluster.kubectl("delete", "pod", name, "--wait=true", "--timeout=30s", timeout=40)
        Path(healthy).unlink(missing_ok=True)


def test_readiness_drives_the_ready_condition(cluster: Cluster) -> None:
    port = free_port()
    good, bad = unique("ready"), unique("unready")
    for name, path in ((good, "/healthz"), (bad, "/missing")):
        container = {
            "image": "nginx",
            "env": [{"name": "NGINX_PORT", "value": str(port if name == good else free_port())}],
            "readinessProbe": {"httpGet": {"path": path, "port": port if name == good else 1},
                               "periodSeconds": 1, "failureThreshold": 1},
        }  # fmt: skip
        apply(cluster, pod_doc(name, container))
    pod = cluster.wait_pod(good, lambda p: state(p).get("ready"))
    assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "True"
    cluster.wait_pod(bad, lambda p: "Readiness probe failed" in events_of(cluster, bad), timeout=20)
    pod = cluster.pod(bad)
    assert state(pod)["state"].get("running") and state(pod)["ready"] is False
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ContainersNotReady")
    assert "0/1" in cluster.kubectl("get", "pod", bad).stdout


def test_a_startup_probe_gates_started_and_liveness(cluster: Cluster) -> None:
    name = unique("startup")
    port = free_port()
    container = {
        "image": "busybox",
        "command": ["sh", "-c", f"sleep 1; exec httpd -f -p {port}"],
        "startupProbe": {"tcpSocket": {"port": port}, "periodSeconds": 1, "failureThreshold": 10},
        "livenessProbe": {"tcpSocket": {"port": port}, "periodSeconds": 1},
    }
    apply(cluster, pod_doc(name, container))
    pod = cluster.wait_pod(name, lambda p: state(p).get("state", {}).get("running"))
    if not state(pod)["started"]:  # caught before the server listened: not started, not ready
        assert state(pod)["ready"] is False
    pod = cluster.wait_pod(name, lambda p: state(p).get("started") is True, timeout=20)
    assert state(pod)["ready"] is True and state(pod)["restartCount"] == 0
    assert f"Startup probe failed: dial tcp {pod['status']['podIP']}:{port}: connect: connection refused" in events_of(
        cluster, name
    )
