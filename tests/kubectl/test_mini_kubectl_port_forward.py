"""mini-kubectl `port-forward` side by side with the real kubectl, on the secure process-runtime
cluster of tests/runtime/test_exec.py (real processes: Linux and root). mini-kubectl speaks SPDY/3.1
in the WebSocket too, with flow control both ways (the kubelet and mini-kubectl both announce it)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.test_exec import Secure, secure  # noqa: F401  (fixture)
from tests.runtime.test_port_forward import _serving, echo, forward, nginx  # noqa: F401  (fixtures)
from tests.support.component import free_port, wait_for
from tests.support.portforward import Forwarder, echo_round_trip, http_get

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0,
                                reason="the process runtime needs Linux and root")  # fmt: skip


def mini(secure: Secure, *args: str) -> Forwarder:  # noqa: F811
    env = {**os.environ, "KUBECONFIG": os.devnull, "PYTHONPATH": str(REPO)}
    return Forwarder([sys.executable, "-m", "kubectl", "-s", secure.apiserver.url, "port-forward", *args], env,
                     cwd=str(REPO))  # fmt: skip


def _session(secure: Secure, tool: str, target: str, remote: str) -> list[str]:  # noqa: F811
    """Forward, fetch the page twice, stop: the output with the local port written as LOCAL."""
    local = free_port()
    start = forward if tool == "kubectl" else mini
    with start(secure, target, f"{local}:{remote}") as pf:
        pf.wait_line(f"Forwarding from [::1]:{local}")
        for _ in range(2):
            assert b"Welcome to nginx!" in http_get(local)
            pf.wait_line("Handling connection")
    return [line.replace(str(local), "LOCAL") for line in pf.out]


def test_mini_kubectl_forwards_and_prints_like_kubectl(secure: Secure, nginx: str) -> None:  # noqa: F811
    wait_for(lambda: _serving(secure, nginx, 80), timeout=30, what="nginx listening")
    real = _session(secure, "kubectl", f"pod/{nginx}", "80")
    ours = _session(secure, "mini", f"pod/{nginx}", "80")
    assert ours == real == ["Forwarding from 127.0.0.1:LOCAL -> 80\n", "Forwarding from [::1]:LOCAL -> 80\n",
                            "Handling connection for LOCAL\n", "Handling connection for LOCAL\n"]  # fmt: skip


def test_mini_kubectl_moves_megabytes_both_ways(secure: Secure, echo: str) -> None:  # noqa: F811
    wait_for(lambda: _serving(secure, echo, 9000), timeout=30, what="echo server listening")
    local = free_port()
    payload = os.urandom(5 * 1024 * 1024)
    with mini(secure, echo, f"{local}:9000") as pf:
        pf.wait_line("Forwarding from [::1]")
        back = echo_round_trip(local, payload)
        assert len(back) == len(payload) and back == payload
        assert echo_round_trip(local, b"again\n") == b"again\n"
        assert pf.proc.poll() is None


def test_mini_kubectl_reports_a_port_nothing_listens_on_as_kubectl(secure: Secure, nginx: str) -> None:  # noqa: F811
    outputs = []
    for start in (forward, mini):
        local = free_port()
        with start(secure, f"pod/{nginx}", f"{local}:81") as pf:
            pf.wait_line("Forwarding from [::1]")
            with socket.create_connection(("127.0.0.1", local), timeout=20) as sock:
                sock.settimeout(20)
                assert sock.recv(100) == b""
            code = pf.exit_code()
        klog = re.sub(r"^E\d{4} [\d:.]+ +\d+ ", "E<time> <pid> ", pf.err[0]).replace(str(local), "LOCAL")
        outputs.append((code, klog, pf.err[1:]))
    assert outputs[1] == outputs[0], outputs
    assert outputs[0][0] == 1 and outputs[0][2] == ["error: lost connection to pod\n"]
    assert 'err="an error occurred forwarding LOCAL -> 81: error forwarding port 81 to pod ' in outputs[0][1]


def test_service_and_deployment_resolve_to_a_pod_and_its_target_port(secure: Secure) -> None:  # noqa: F811
    labels = {"app": "pf-web"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pf-web", "labels": labels},
           "spec": {"nodeName": secure.node, "terminationGracePeriodSeconds": 1,
                    "containers": [{"name": "web", "image": "nginx", "env": [{"name": "NGINX_PORT", "value": "8080"}],
                                    "ports": [{"name": "http", "containerPort": 8080}]}]}}  # fmt: skip
    secure.api.post("/api/v1/namespaces/default/pods", json=pod).raise_for_status()
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "pf-web"},
           "spec": {"selector": labels, "ports": [{"name": "web", "port": 80, "targetPort": "http"}]}}  # fmt: skip
    secure.api.post("/api/v1/namespaces/default/services", json=svc).raise_for_status()
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "pf-web"},
              "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                       "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}  # fmt: skip
    secure.api.post("/apis/apps/v1/namespaces/default/deployments", json=deploy).raise_for_status()
    wait_for(lambda: secure.api.get("/api/v1/namespaces/default/pods/pf-web").json()["status"].get("phase")
             == "Running", timeout=30, what="pf-web Running")  # fmt: skip
    wait_for(lambda: _serving(secure, "pf-web", 8080), timeout=30, what="pf-web listening")
    for target, remote, shown in (("svc/pf-web", "80", "8080"), ("svc/pf-web", "web", "8080"),
                                  ("deploy/pf-web", "http", "8080")):  # fmt: skip
        real = _session(secure, "kubectl", target, remote)
        ours = _session(secure, "mini", target, remote)
        assert ours == real, (target, remote)
        assert real[0] == f"Forwarding from 127.0.0.1:LOCAL -> {shown}\n", (target, real)


def test_port_forward_needs_create_on_pods_portforward(secure: Secure, nginx: str) -> None:  # noqa: F811
    """alice may view pods (ClusterRole view), not forward to them: both tools report the refusal."""
    secure.api.delete("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/mini-pf")
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "mini-pf"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
               "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}  # fmt: skip
    secure.api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", json=binding)
    env = {**os.environ, "KUBECONFIG": str(secure.kubeconfigs["alice"]), "PYTHONPATH": str(REPO)}
    args = ["port-forward", f"pod/{nginx}", f"{free_port()}:80"]
    real = subprocess.run([secure.kubectl_path, *args], capture_output=True, text=True, timeout=60, env=env)
    ours = subprocess.run([sys.executable, "-m", "kubectl", *args], capture_output=True, text=True, timeout=60,
                          env=env, cwd=str(REPO))  # fmt: skip
    assert real.returncode == 1 and 'cannot create resource "pods/portforward"' in real.stderr, real.stderr
    assert (ours.returncode, ours.stdout, ours.stderr) == (real.returncode, real.stdout, real.stderr)


def test_addresses_and_a_random_local_port_like_kubectl(secure: Secure, nginx: str) -> None:  # noqa: F811
    wait_for(lambda: _serving(secure, nginx, 80), timeout=30, what="nginx listening")
    for start in (forward, mini):
        with start(secure, f"pod/{nginx}", ":80") as pf:  # a free port, the same on 127.0.0.1 and ::1
            first = pf.wait_line("Forwarding from 127.0.0.1:")
            local = int(first.split(":")[1].split()[0])
            assert pf.wait_line("Forwarding from [::1]") == f"Forwarding from [::1]:{local} -> 80\n"
            assert b"Welcome to nginx!" in http_get(local, host="::1")
        local = free_port()
        with start(secure, f"pod/{nginx}", f"{local}:80", "--address", "127.0.0.1") as pf:
            assert pf.wait_line("Forwarding from") == f"Forwarding from 127.0.0.1:{local} -> 80\n"
            assert b"Welcome to nginx!" in http_get(local)
            pf.wait_line("Handling connection")
        assert pf.out == [f"Forwarding from 127.0.0.1:{local} -> 80\n", f"Handling connection for {local}\n"]
