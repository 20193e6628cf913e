"""gRPC probes on real processes: Kubernetes' docs example (etcd with a grpc liveness probe) runs
unchanged and stays up; a port with nothing listening restarts the container with Kubernetes'
timeout text; a named `service` that is NOT_SERVING, unknown, or a server without the health
service keeps the container unready with Kubernetes' words.
"""

from __future__ import annotations

import calendar
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.conftest import Cluster, state, unique
from tests.runtime.test_probes import events_of
from tests.runtime.test_process_runtime import apply, pod_doc
from tests.support.component import free_port

pytest.importorskip("grpc_health.v1.health", reason="grpcio-health-checking is not installed")

SERVER = str(Path(__file__).with_name("grpc_health_server.py"))
# https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
ETCD_COMMAND = ["/usr/local/bin/etcd", "--data-dir", "/var/lib/etcd", "--listen-client-urls", "http://0.0.0.0:2379",
                "--advertise-client-urls", "http://127.0.0.1:2379", "--log-level", "debug"]  # fmt: skip


def status_of(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return next((s for s in pod["status"].get("containerStatuses") or [] if s["name"] == name), {})


def running_for(pod: dict[str, Any], seconds: float) -> bool:
    started = (state(pod).get("state") or {}).get("running", {}).get("startedAt")
    return bool(started) and time.time() - calendar.timegm(time.strptime(started, "%Y-%m-%dT%H:%M:%SZ")) >= seconds


def host_dir(path: str) -> tuple[list[str], int] | None:
    try:
        return sorted(os.listdir(path)), os.stat(path).st_mtime_ns
    except OSError:
        return None


@pytest.mark.skipif(shutil.which("etcd") is None, reason="etcd is not installed (Debian's etcd-server)")
def test_the_docs_etcd_pod_passes_its_grpc_probes(cluster: Cluster) -> None:
    name = unique("etcd-with-grpc")
    before = host_dir("/var/lib/etcd")
    # the docs' pod; only the probe's timing is shorter (docs: initialDelaySeconds 10), and a grpc
    # readiness probe shows the first successful Check (it may fail before etcd listens)
    container = {
        "image": "registry.k8s.io/etcd:3.5.1-0",
        "command": ETCD_COMMAND,
        "ports": [{"containerPort": 2379}],
        "livenessProbe": {"grpc": {"port": 2379}, "initialDelaySeconds": 3, "periodSeconds": 1},
        "readinessProbe": {"grpc": {"port": 2379}, "periodSeconds": 1},
    }
    apply(cluster, pod_doc(name, container, terminationGracePeriodSeconds=1))
    cluster.wait_pod(name, lambda p: state(p).get("ready") is True, timeout=30, what="etcd ready")
    pod = cluster.wait_pod(name, lambda p: running_for(p, 7), timeout=20, what="etcd up for 4 liveness periods")
    assert state(pod)["restartCount"] == 0 and state(pod)["ready"] is True
    events = events_of(cluster, name)
    assert "Liveness probe failed" not in events and "failed liveness probe" not in events
    assert "/grpc.health.v1.Health/Check" in cluster.kubectl("logs", name).stdout  # --log-level debug shows them
    # etcd wrote its data into the run's own /var/lib/etcd, not the host's
    assert list(cluster.root_dir.glob("containers/*/image/var/lib/etcd/member"))
    assert host_dir("/var/lib/etcd") == before
    cluster.kubectl("delete", "pod", name, "--wait=false")


def test_nothing_listening_is_a_timeout_and_a_restart(cluster: Cluster) -> None:
    name = unique("grpc-liveness")
    port = free_port()
    container = {
        "image": "busybox",
        "command": ["sleep", "600"],
        "livenessProbe": {"grpc": {"port": port}, "periodSeconds": 1, "failureThreshold": 2, "timeoutSeconds": 1},
    }
    apply(cluster, pod_doc(name, container, terminationGracePeriodSeconds=1))
    pod = cluster.wait_pod(name, lambda p: state(p).get("restartCount", 0) >= 1, timeout=40)
    events = events_of(cluster, name)
    ip = pod["status"]["podIP"]
    timeout = f'timeout: failed to connect service "{ip}:{port}" within 1s: context deadline exceeded'
    assert f"Liveness probe failed: {timeout}" in events
    assert "Container c failed liveness probe, will be restarted" in events
    assert "Killing" in events
    cluster.kubectl("delete", "pod", name, "--wait=false")


def test_readiness_asks_about_the_named_service(cluster: Cluster) -> None:
    name = unique("grpc-readiness")
    port, bare = free_port(), free_port()

    def probe(service: str | None, on: int = port) -> dict[str, Any]:
        grpc = {"port": on} if service is None else {"port": on, "service": service}
        return {"grpc": grpc, "periodSeconds": 1, "failureThreshold": 1}

    containers = [
        {"name": "down", "image": "python", "command": [sys.executable, SERVER, str(port)],
         "readinessProbe": probe("down")},
        {"name": "ready", "image": "busybox", "command": ["sleep", "600"], "readinessProbe": probe("ready")},
        {"name": "unknown", "image": "busybox", "command": ["sleep", "600"], "readinessProbe": probe("nosuch")},
        {"name": "bare", "image": "python", "command": [sys.executable, SERVER, str(bare), "--bare"],
         "readinessProbe": probe(None, bare)},
    ]  # fmt: skip
    doc = pod_doc(name, {}, terminationGracePeriodSeconds=1)
    doc["spec"]["containers"] = containers
    apply(cluster, doc)
    expected = [
        'Readiness probe failed: service unhealthy (responded with "NOT_SERVING")',
        "Readiness probe failed: error: health rpc probe failed: rpc error: code = NotFound desc = unknown service",
        "Readiness probe failed: error: this server does not implement the grpc health protocol "
        "(grpc.health.v1.Health): Method not found!",
    ]
    cluster.wait_pod(name, lambda p: all(e in events_of(cluster, name) for e in expected), timeout=30,
                     what="the three failures")  # fmt: skip
    pod = cluster.wait_pod(name, lambda p: status_of(p, "ready").get("ready") is True, timeout=20)
    assert [status_of(pod, c)["ready"] for c in ("down", "unknown", "bare")] == [False, False, False]
    assert all(status_of(pod, c)["state"].get("running") for c in ("down", "ready", "unknown", "bare"))
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ContainersNotReady")
    cluster.kubectl("delete", "pod", name, "--wait=false")
