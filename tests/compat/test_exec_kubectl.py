"""The real kubectl's `exec`, `attach` and `cp` against mini-k8s where no process runs (no root
needed): the API server's pods/exec checks, the kubelet's refusals, the simulated runtime's answer
— and mini-kubectl saying the same, word for word, with the same exit codes.

Its own API server (with --kubelet-client-certificate, as `mini-k8s up --secure` starts it) and
two simulated kubelets on HTTPS: one with --client-ca-file and Webhook authorization, one without
a client CA (it must run nothing for anyone and say which flags it lacks).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for
from tests.support.kubectl import kubectl_binary
from tests.support.pki import CA

REPO = Path(__file__).resolve().parents[2]
FAST = ["--pod-startup-delay", "0", "--node-status-update-frequency", "1"]


@dataclass
class Setup:
    server: APIServerProcess
    api: httpx.Client
    node: str  # TLS + client CA + Webhook
    open_node: str  # TLS, no client CA
    kubectl_path: str

    def both(self, *args: str, stdin: str | None = None) -> tuple[subprocess.CompletedProcess[str], ...]:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("KUBE")}, "KUBECONFIG": os.devnull,
               "PYTHONPATH": str(REPO)}  # fmt: skip
        real = subprocess.run([self.kubectl_path, "-s", self.server.url, *args], input=stdin, capture_output=True,
                              text=True, timeout=60, env=env)  # fmt: skip
        mini = subprocess.run([sys.executable, "-m", "kubectl", "-s", self.server.url, *args], input=stdin,
                              capture_output=True, text=True, timeout=60, env=env, cwd=str(REPO))  # fmt: skip
        return real, mini

    def pod(self, name: str, node: str | None, containers: int = 1, phase: str = "Running") -> str:
        spec: dict[str, object] = {"containers": [{"name": f"c{i}", "image": "busybox", "command": ["sleep", "1h"]}
                                                  for i in range(containers)]}  # fmt: skip
        if node:
            spec["nodeName"] = node
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
        self.api.post("/api/v1/namespaces/default/pods", json=body).raise_for_status()
        if node:
            wait_for(lambda: self.api.get(f"/api/v1/namespaces/default/pods/{name}").json()["status"].get("phase")
                     == phase, what=f"{name} {phase}")  # fmt: skip
        return name


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    kubectl_path = kubectl_binary()
    d = tmp_path_factory.mktemp("pki")
    ca = CA(d)
    client = ca.issue("apiserver-kubelet-client", cn="kube-apiserver-kubelet-client", groups=("system:masters",))
    serving = ca.issue("kubelet", cn="kubelet", server=True)
    server = APIServerProcess(args=[
        "--kubelet-client-certificate", str(client.cert), "--kubelet-client-key", str(client.key),
        "--kubelet-certificate-authority", str(ca.pair.cert),
    ]).start()  # fmt: skip
    suffix = uuid.uuid4().hex[:6]
    node, open_node = f"cx-{suffix}", f"cxopen-{suffix}"
    tls = ["--tls-cert-file", str(serving.cert), "--tls-private-key-file", str(serving.key)]
    p1, p2 = free_port(), free_port()
    kubelets = [
        ComponentProcess("kubelet", ["--master", server.url, "--node-name", node, "--port", str(p1), *FAST, *tls,
                                     "--client-ca-file", str(ca.pair.cert), "--authorization-mode", "Webhook"],
                         health_port=p1).start(),  # fmt: skip
        ComponentProcess("kubelet", ["--master", server.url, "--node-name", open_node, "--port", str(p2), *FAST,
                                     *tls], health_port=p2).start(),  # fmt: skip
    ]
    with server.client() as api:
        try:
            yield Setup(server, api, node, open_node, kubectl_path)
        finally:
            for k in kubelets:
                k.stop()
            server.cleanup()


def same(real: subprocess.CompletedProcess[str], mini: subprocess.CompletedProcess[str]) -> None:
    assert (mini.returncode, mini.stdout, mini.stderr) == (real.returncode, real.stdout, real.stderr)


def test_discovery_lists_pods_exec_and_attach(setup: Setup) -> None:
    resources = {r["name"]: r for r in setup.api.get("/api/v1").json()["resources"]}
    assert resources["pods/exec"]["verbs"] == ["create", "get"]
    assert resources["pods/exec"]["kind"] == "PodExecOptions"
    assert resources["pods/attach"]["kind"] == "PodAttachOptions"


def test_the_simulated_runtime_answers_that_it_runs_no_processes(setup: Setup) -> None:
    name = setup.pod("sim", setup.node)
    real, mini = setup.both("exec", name, "--", "hostname")
    assert real.returncode == 1
    assert real.stderr == ("error: Internal error occurred: error executing command in container: the simulated "
                           "runtime runs no processes; start the cluster with --runtime process\n")  # fmt: skip
    same(real, mini)
    real, mini = setup.both("cp", f"{name}:/etc/hostname", "/dev/null")
    assert real.returncode == 1 and "the simulated runtime runs no processes" in real.stderr
    same(real, mini)


def test_a_kubelet_without_a_client_ca_runs_nothing_and_names_the_flags(setup: Setup) -> None:
    name = setup.pod("open", setup.open_node)
    real, mini = setup.both("exec", name, "--", "hostname")
    assert real.returncode == 1
    assert real.stderr.startswith(f"Error from server (Forbidden): kubelet on node {setup.open_node}: this kubelet "
                                  "runs commands only for callers it authenticates: start it with --tls-cert-file, "
                                  "--tls-private-key-file and --client-ca-file")  # fmt: skip
    same(real, mini)


def test_api_server_errors_before_the_upgrade(setup: Setup) -> None:
    two = setup.pod("two", setup.node, containers=2)
    nowhere = setup.pod("nowhere", None)
    for args in (["exec", "missing", "--", "true"], ["exec", two, "-c", "nope", "--", "true"],
                 ["exec", nowhere, "--", "true"], ["exec", two, "hostname"], ["exec", two],
                 ["cp", "/etc/hostname", "/tmp/x"], ["cp", "nope-local-file", f"{two}:/tmp"]):  # fmt: skip
        real, mini = setup.both(*args)
        assert real.returncode == 1, (args, real)
        same(real, mini)
    real, _ = setup.both("exec", nowhere, "--", "true")
    assert real.stderr == "Error from server (BadRequest): pod nowhere does not have a host assigned\n"
    real, _ = setup.both("exec", two, "-c", "nope", "--", "true")
    assert real.stderr == "Error from server (BadRequest): container nope is not valid for pod two\n"


def test_the_default_container_is_announced(setup: Setup) -> None:
    name = setup.pod("pair", setup.node, containers=2)
    real, mini = setup.both("exec", name, "--", "true")
    assert real.stderr.startswith('Defaulted container "c0" out of: c0, c1\n')
    same(real, mini)


def test_attach_on_the_simulated_runtime(setup: Setup) -> None:
    name = setup.pod("att", setup.node)
    real, mini = setup.both("attach", name)
    assert real.returncode == 1 and "the simulated runtime runs no processes" in real.stderr
    same(real, mini)


def test_kubectl_debug_on_the_simulated_runtime(setup: Setup) -> None:
    """Its ephemeral containers are reported as its other containers are (running); nothing runs to
    attach to, which both kubectls report alike."""
    name = setup.pod("dbg", setup.node)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("KUBE")}, "KUBECONFIG": os.devnull}
    out = subprocess.run([setup.kubectl_path, "-s", setup.server.url, "debug", name, "--image=busybox", "-c", "eph",
                          "--", "sleep", "1h"], capture_output=True, text=True, timeout=60, env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr

    def eph() -> dict[str, object] | None:
        status = setup.api.get(f"/api/v1/namespaces/default/pods/{name}").json()["status"]
        found = [s for s in status.get("ephemeralContainerStatuses") or [] if s["name"] == "eph"]
        return found[0] if found and "running" in found[0]["state"] else None

    running = wait_for(eph, what="the ephemeral container running")
    assert running["ready"] is False and running["restartCount"] == 0  # type: ignore[index]
    real, mini = setup.both("attach", name, "-c", "eph")
    assert real.returncode == 1 and "the simulated runtime runs no processes" in real.stderr
    same(real, mini)
