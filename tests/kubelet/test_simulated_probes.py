"""Probes on the simulated runtime (kubelet/simprobe.py): the prober's state machine against a
deterministic model - exec probes see the files the container's shell script has made by then,
httpGet/tcpSocket reach the ports the container declares - with the process runtime's events,
restarts and Ready/Endpoints effects.

Kubernetes' docs example (`touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600`) takes
40 s to fail: its pod is created first and checked last (the other tests run meanwhile), and they
run the same script with shorter sleeps and periods.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from api.timestamps import parse_time
from kubelet.runtime import plan_for
from kubelet.simprobe import exec_result, listening_ports, script_of
from tests.kubelet.conftest import condition, container_status, get, pod_path, unique, wait_pod
from tests.support.component import ComponentProcess, free_port, wait_for

# Kubernetes' docs: "Define a liveness command" (pods/probe/exec-liveness.yaml), unchanged.
DOCS_LIVENESS_EXEC = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"labels": {"test": "liveness"}, "name": "liveness-exec"},
    "spec": {
        "containers": [{
            "name": "liveness",
            "image": "registry.k8s.io/busybox:1.27.2",
            "args": ["/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"],
            "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "initialDelaySeconds": 5,
                              "periodSeconds": 5},
        }],
    },
}  # fmt: skip
CAT = "cat: can't open '/tmp/healthy': No such file or directory"


@pytest.fixture(scope="module")
def node(api: httpx.Client, start_kubelet) -> Iterator[str]:
    name = unique("probes")
    start_kubelet(name)  # --runtime simulated is the default
    wait_for(lambda: api.get(f"/api/v1/nodes/{name}").status_code == 200, what="node registered")
    yield name


@pytest.fixture(scope="module")
def docs_pod(api: httpx.Client, node: str) -> str:
    """The docs' liveness-exec pod, unchanged but for its name and node, created early."""
    name = unique("liveness-exec")
    body = {**DOCS_LIVENESS_EXEC, "metadata": {**DOCS_LIVENESS_EXEC["metadata"], "name": name},
            "spec": {**DOCS_LIVENESS_EXEC["spec"], "nodeName": node}}  # fmt: skip
    r = api.post("/api/v1/namespaces/default/pods", json=body)
    assert r.status_code == 201, r.text
    return name


def create(api: httpx.Client, node: str, name: str, container: dict[str, Any], **spec: Any) -> None:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"nodeName": node, "containers": [{"name": "c", **container}], **spec}}  # fmt: skip
    r = api.post("/api/v1/namespaces/default/pods", json=body)
    assert r.status_code == 201, r.text


def parse(text: str) -> float:
    t = parse_time(text)
    assert t is not None
    return t


def events(api: httpx.Client, name: str) -> list[tuple[str, str, str]]:
    items = get(api, f"/api/v1/namespaces/default/events?fieldSelector=involvedObject.name={name}")["items"]
    return [(e.get("type"), e.get("reason"), e.get("message")) for e in items]


def wait_events(api: httpx.Client, name: str, *wanted: tuple[str, str, str]) -> list[tuple[str, str, str]]:
    """The pod's events once all of `wanted` are among them (the recorder writes them a little later)."""

    def seen() -> list[tuple[str, str, str]] | None:
        got = events(api, name)
        return got if all(w in got for w in wanted) else None

    return wait_for(seen, what=f"events {wanted} of {name}")


def test_the_docs_liveness_example_is_modelled_as_on_a_real_node() -> None:
    spec = DOCS_LIVENESS_EXEC["spec"]["containers"][0]
    script = script_of(spec["args"])
    assert script is not None and script.complete
    assert script.files_at(0) == script.files_at(29.9) == {"/tmp/healthy"}
    assert script.files_at(30) == script.files_at(600) == set()
    plan = plan_for(spec, finishes=False, job_run_time=1)  # the real script ends after 630 s
    assert (plan.seconds, plan.exit_code) == (630.0, 0)


def test_a_failing_liveness_exec_probe_restarts_the_container(api: httpx.Client, node: str, docs_pod: str) -> None:
    name = unique("liveness")
    container = {
        "image": "registry.k8s.io/busybox:1.27.2",
        "args": ["/bin/sh", "-c", "touch /tmp/healthy; sleep 2; rm -f /tmp/healthy; sleep 600"],
        "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "periodSeconds": 1, "failureThreshold": 2},
    }
    create(api, node, name, container)
    pod = wait_pod(api, name, lambda p: container_status(p).get("restartCount", 0) >= 1, timeout=30)
    last = container_status(pod)["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (143, "Error")  # died of the kubelet's SIGTERM
    wait_events(api, name, ("Warning", "Unhealthy", f"Liveness probe failed: {CAT}"),
                ("Normal", "Killing", "Container c failed liveness probe, will be restarted"))  # fmt: skip
    # the new run's clock starts again: healthy for 2 s, so running and ready at restartCount 1
    pod = wait_pod(api, name, lambda p: container_status(p).get("state", {}).get("running")
                   and container_status(p).get("ready"))  # fmt: skip
    assert container_status(pod)["restartCount"] == 1
    # ... and ~3 s after that restart it fails again, as on a real node
    wait_pod(api, name, lambda p: container_status(p).get("restartCount", 0) >= 2, timeout=30)


def test_a_liveness_kill_restarts_under_on_failure_too(api: httpx.Client, node: str) -> None:
    name = unique("onfailure")
    container = {
        "image": "busybox",
        "command": ["sh", "-c", "sleep 600"],
        "livenessProbe": {"exec": {"command": ["test", "-e", "/tmp/missing"]}, "periodSeconds": 1,
                          "failureThreshold": 1},
    }  # fmt: skip
    create(api, node, name, container, restartPolicy="OnFailure")
    pod = wait_pod(api, name, lambda p: container_status(p).get("restartCount", 0) >= 1, timeout=20)
    assert pod["status"]["phase"] == "Running"
    failed = ("Warning", "Unhealthy", 'Liveness probe failed: command ["test", "-e", "/tmp/missing"] exited with 1')
    wait_events(api, name, failed)


def test_a_readiness_probe_on_a_removed_file_makes_the_pod_unready_and_leaves_the_endpoints(
    api: httpx.Client, node: str, apiserver: Any
) -> None:
    port = free_port()
    args = ["--master", apiserver.url, "--port", str(port), "--controllers", "endpoints"]
    manager = ComponentProcess("controller_manager", args, health_port=port).start()
    try:
        name = unique("ready")
        svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
               "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 80}]}}  # fmt: skip
        assert api.post("/api/v1/namespaces/default/services", json=svc).status_code == 201
        container = {
            "image": "busybox",
            "command": ["sh", "-c", "echo ok > /tmp/ready; sleep 3; rm /tmp/ready; sleep 3600"],
            "readinessProbe": {"exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 1, "failureThreshold": 1},
        }
        create(api, node, name, container)
        pod = wait_pod(api, name, lambda p: condition(p, "Ready").get("status") == "True")
        ip = pod["status"]["podIP"]

        def subsets() -> list[dict[str, Any]]:
            r = api.get(f"/api/v1/namespaces/default/endpoints/{name}")
            return (r.json().get("subsets") or []) if r.status_code == 200 else []

        wait_for(lambda: any(a["ip"] == ip for s in subsets() for a in s.get("addresses") or []),
                 what="the ready pod in the Endpoints")  # fmt: skip
        pod = wait_pod(api, name, lambda p: condition(p, "Ready").get("status") == "False")
        assert container_status(pod)["ready"] is False and container_status(pod)["state"].get("running")
        assert container_status(pod)["restartCount"] == 0  # readiness never restarts
        assert condition(pod, "Ready")["reason"] == "ContainersNotReady"
        wait_for(lambda: any(a["ip"] == ip for s in subsets() for a in s.get("notReadyAddresses") or [])
                 and not any(a["ip"] == ip for s in subsets() for a in s.get("addresses") or []),
                 what="the unready pod moved to notReadyAddresses")  # fmt: skip
        failed = "Readiness probe failed: cat: can't open '/tmp/ready': No such file or directory"
        wait_events(api, name, ("Warning", "Unhealthy", failed))
    finally:
        manager.stop()


def test_a_startup_probe_that_never_succeeds_restarts_the_container(api: httpx.Client, node: str) -> None:
    name = unique("startup")
    container = {
        "image": "busybox",
        "command": ["sh", "-c", "sleep 3600"],
        "startupProbe": {"exec": {"command": ["ls", "/tmp/started"]}, "periodSeconds": 1, "failureThreshold": 2},
        "livenessProbe": {"exec": {"command": ["false"]}, "periodSeconds": 1},
    }
    create(api, node, name, container)
    pod = wait_pod(api, name, lambda p: container_status(p).get("state", {}).get("running"))
    assert container_status(pod)["started"] is False and container_status(pod)["ready"] is False
    wait_pod(api, name, lambda p: container_status(p).get("restartCount", 0) >= 1, timeout=20)
    failed = "Startup probe failed: ls: /tmp/started: No such file or directory"
    seen = wait_events(api, name, ("Warning", "Unhealthy", failed),
                       ("Normal", "Killing", "Container c failed startup probe, will be restarted"))  # fmt: skip
    assert not [e for e in seen if e[2].startswith("Liveness")]  # held back until the startup probe succeeds


def test_http_get_succeeds_on_a_declared_port_and_is_refused_on_another(api: httpx.Client, node: str) -> None:
    good, bad = unique("http"), unique("nohttp")
    for name, port in ((good, 8080), (bad, 8081)):
        container = {
            "image": "registry.k8s.io/e2e-test-images/agnhost:2.40",
            "args": ["liveness"],
            "ports": [{"containerPort": 8080}],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 1,
                               "failureThreshold": 1},
            "livenessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1},
        }  # fmt: skip
        create(api, node, name, container)
    pod = wait_pod(api, good, lambda p: condition(p, "Ready").get("status") == "True")
    assert container_status(pod)["ready"] is True
    wait_pod(api, bad, lambda p: any(e[1] == "Unhealthy" for e in events(api, bad)))
    pod = get(api, pod_path(bad))
    ip = pod["status"]["podIP"]
    assert container_status(pod)["ready"] is False and container_status(pod)["restartCount"] == 0
    wait_events(api, bad, ("Warning", "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8081/healthz": '
                                                   f"dial tcp {ip}:8081: connect: connection refused"))  # fmt: skip
    assert not [e for e in events(api, good) if e[1] == "Unhealthy"]


def test_an_unmodelled_exec_probe_is_assumed_to_succeed_and_says_so(api: httpx.Client, node: str) -> None:
    name = unique("unknown")
    container = {"image": "postgres", "readinessProbe": {"exec": {"command": ["pg_isready", "-U", "postgres"]},
                                                         "periodSeconds": 1}}  # fmt: skip
    create(api, node, name, container)
    wait_pod(api, name, lambda p: condition(p, "Ready").get("status") == "True")
    message = ('Readiness probe: the simulated runtime does not model the command ["pg_isready", "-U", "postgres"]; '
               "it assumes success")  # fmt: skip
    wait_events(api, name, ("Normal", "ProbeAssumedSuccess", message))
    assert [e for e in events(api, name) if e[1] == "ProbeAssumedSuccess"] == [("Normal", "ProbeAssumedSuccess",
                                                                                  message)]  # fmt: skip


def test_the_docs_liveness_exec_pod_behaves_as_in_the_docs(api: httpx.Client, docs_pod: str) -> None:
    """Healthy for 30 s, then `cat` fails every 5 s; the third failure (~40 s) restarts it."""
    pod = wait_pod(api, docs_pod, lambda p: container_status(p).get("restartCount", 0) >= 1, timeout=90)
    last = container_status(pod)["lastState"]["terminated"]
    ran = parse(last["finishedAt"]) - parse(last["startedAt"])
    assert 30 <= ran <= 50, ran
    wait_events(api, docs_pod, ("Warning", "Unhealthy", f"Liveness probe failed: {CAT}"),
                ("Normal", "Killing", "Container liveness failed liveness probe, will be restarted"))  # fmt: skip
    pod = wait_pod(api, docs_pod, lambda p: container_status(p).get("state", {}).get("running"))
    assert container_status(pod)["restartCount"] == 1 and container_status(pod)["ready"] is True


def test_the_model_answers_exec_and_port_probes_by_its_rules() -> None:
    files = {"/tmp/ready"}
    assert exec_result(["[", "-f", "/tmp/ready", "]"], files) == (None, True)
    failed = 'command ["sh", "-c", "test -e /tmp/gone"] exited with 1'
    assert exec_result(["sh", "-c", "test -e /tmp/gone"], files) == (failed, True)
    assert exec_result(["ls", "/tmp/gone"], files) == ("ls: /tmp/gone: No such file or directory", True)
    assert exec_result(["pg_isready"], files) == (None, False)
    script = script_of(["sh", "-c", "mkdir -p /run/app && echo ok > /run/app/ready; sleep 5; rm -rf /run/app; exec a"])
    assert script is not None and not script.complete and script.seconds is None  # `exec a` runs on
    assert script.files_at(1) == {"/run/app", "/run/app/ready"} and script.files_at(5) == set()
    assert listening_ports({"ports": [{"containerPort": 8080}, {"containerPort": 53, "protocol": "UDP"}]},
                           "nginx:1.25") == {80, 8080}  # fmt: skip
    assert listening_ports({"env": [{"name": "NGINX_PORT", "value": "8081"}]}, "docker.io/library/nginx") == {8081}
    assert listening_ports({"command": ["sh"]}, "mysql:8") == set()  # the image's server does not run
    assert listening_ports({}, "mysql:8") == {3306}
