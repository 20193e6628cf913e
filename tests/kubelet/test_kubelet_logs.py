"""Container logs through the API server's pods/log proxy: the real kubectl and the kubernetes client."""

from __future__ import annotations

import os
import subprocess

import kubernetes
import pytest

from tests.kubelet.conftest import condition, create_pod, get, unique, wait_pod
from tests.support.component import wait_for

KUBECTL = "kubectl"


@pytest.fixture(scope="module")
def node(api, start_kubelet) -> str:
    name = unique("logs")
    start_kubelet(name)
    wait_for(lambda: condition(get(api, f"/api/v1/nodes/{name}"), "Ready"), what="node Ready")
    return name


def kubectl(apiserver, *args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": os.devnull}
    return subprocess.run([KUBECTL, "-s", apiserver.url, *args], capture_output=True, text=True, timeout=timeout,
                          env=env)  # fmt: skip


def test_kubectl_logs_shows_the_synthetic_log_and_tail(api, apiserver, node):
    name = unique("web")
    create_pod(api, name, node, container="nginx")
    wait_pod(api, name, lambda p: p["status"].get("phase") == "Running")
    out = kubectl(apiserver, "logs", name)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Starting container nginx with image nginx:1.25"
    assert lines[1] == "container nginx is running: runs until stopped"
    wait_for(lambda: "container nginx is alive (1)" in kubectl(apiserver, "logs", name).stdout, what="a probe line")
    tail = kubectl(apiserver, "logs", name, "--tail=1")
    assert tail.returncode == 0 and len(tail.stdout.splitlines()) == 1
    assert tail.stdout.startswith("container nginx is alive (")
    stamped = kubectl(apiserver, "logs", name, "--tail=1", "--timestamps").stdout
    assert stamped[:4].isdigit() and "Z container nginx is alive (" in stamped


def test_kubectl_logs_follow_streams_until_the_container_exits(apiserver, api, node):
    name = unique("sleep")
    create_pod(api, name, node, command=["sleep", "2"], restart_policy="Never")
    wait_pod(api, name, lambda p: p["status"].get("phase") == "Running")
    out = kubectl(apiserver, "logs", "-f", name, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "container c exited with code 0"
    assert wait_pod(api, name, lambda p: p["status"].get("phase") == "Succeeded")


def test_previous_logs_of_a_restarted_container(apiserver, api, node):
    name = unique("crash")
    create_pod(api, name, node, command=["exit", "3"])
    wait_pod(api, name, lambda p: (p["status"].get("containerStatuses") or [{}])[0].get("restartCount", 0) >= 1)
    out = kubectl(apiserver, "logs", name, "--previous")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "container c exited with code 3"


def test_python_client_reads_pod_logs(apiserver, api, node):
    name = unique("py")
    create_pod(api, name, node)
    wait_pod(api, name, lambda p: p["status"].get("phase") == "Running")
    config = kubernetes.client.Configuration()
    config.host = apiserver.url
    with kubernetes.client.ApiClient(config) as client:
        core = kubernetes.client.CoreV1Api(client)
        text = core.read_namespaced_pod_log(name, "default")
        assert text.startswith("Starting container c with image nginx:1.25\n")
        assert core.read_namespaced_pod_log(name, "default", tail_lines=1).count("\n") == 1


@pytest.mark.parametrize("tool", ["kubectl", "mini-kubectl"])
def test_logs_follow_prints_the_same_lines_with_kubectl_and_mini_kubectl(apiserver, api, node, tool):
    import sys

    name = unique("follow")
    create_pod(api, name, node, command=["sleep", "2"], restart_policy="Never")
    wait_pod(api, name, lambda p: p["status"].get("phase") == "Running")
    cmd = [KUBECTL] if tool == "kubectl" else [sys.executable, "-m", "kubectl"]
    out = subprocess.run([*cmd, "-s", apiserver.url, "logs", "-f", name], capture_output=True, text=True,
                         timeout=30, env={**os.environ, "KUBECONFIG": os.devnull})  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Starting container c with image nginx:1.25"
    assert lines[-1] == "container c exited with code 0"
