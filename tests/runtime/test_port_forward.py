"""`kubectl port-forward` end to end on real processes: the real kubectl v1.32 (SPDY/3.1 tunneled in
a WebSocket) and the official Python client (the v4 channel protocol), through the API server's
pods/portforward to the kubelet's /portForward, into the pod's network namespace.

The secure cluster of tests/runtime/test_exec.py (HTTPS kubelet with --client-ca-file and
Webhook authorization, the API server presenting its kubelet client certificate).
"""

from __future__ import annotations

import os
import socket

import pytest

from tests.runtime.test_exec import Secure, secure  # noqa: F401  (fixture)
from tests.support.component import free_port, wait_for
from tests.support.portforward import ECHO_SERVER, Forwarder, echo_round_trip, http_get


def forward(secure: Secure, *args: str) -> Forwarder:  # noqa: F811
    env = {**os.environ, "KUBECONFIG": os.devnull}
    return Forwarder([secure.kubectl_path, "-s", secure.apiserver.url, "port-forward", *args], env)


@pytest.fixture(scope="module")
def nginx(secure: Secure) -> str:  # noqa: F811
    return secure.pod("pf-nginx", containers=[{"name": "web", "image": "nginx"}])


@pytest.fixture(scope="module")
def echo(secure: Secure) -> str:  # noqa: F811
    return secure.pod("pf-echo", containers=[{"name": "echo", "image": "python",
                                              "command": ["python3", "-c", ECHO_SERVER]}])  # fmt: skip


def _serving(secure: Secure, pod: str, port: int) -> bool:  # noqa: F811
    """The pod's server listens (checked from inside, with exec), so a test does not race its start."""
    probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2).close()"
    return secure.kubectl("exec", pod, "--", "python3", "-c", probe).returncode == 0


def test_kubectl_port_forward_serves_nginx_on_localhost(secure: Secure, nginx: str) -> None:  # noqa: F811
    wait_for(lambda: _serving(secure, nginx, 80), timeout=30, what="nginx listening")
    local = free_port()
    with forward(secure, f"pod/{nginx}", f"{local}:80") as pf:
        assert pf.wait_line("Forwarding from") == f"Forwarding from 127.0.0.1:{local} -> 80\n"
        page = http_get(local)
        assert page.startswith(b"HTTP/1.0 200 OK") and b"Welcome to nginx!" in page, page
        assert pf.wait_line("Handling connection") == f"Handling connection for {local}\n"
        again = http_get(local)  # a second connection over the same SPDY connection
        assert b"Welcome to nginx!" in again
        assert pf.proc.poll() is None
    # kubectl opens one listener per loopback address and prints each as it opens: a connection to
    # the first may be handled (and said so) before the second line, so only their own order is fixed.
    forwarding = [line for line in pf.out if line.startswith("Forwarding from")]
    assert forwarding == [f"Forwarding from 127.0.0.1:{local} -> 80\n", f"Forwarding from [::1]:{local} -> 80\n"]


def test_a_server_bound_to_localhost_in_the_pod_is_reachable_and_megabytes_round_trip(
    secure: Secure, echo: str,  # noqa: F811
) -> None:  # fmt: skip
    wait_for(lambda: _serving(secure, echo, 9000), timeout=30, what="echo server listening")
    pod_ip = secure.api.get(f"/api/v1/namespaces/default/pods/{echo}").json()["status"]["podIP"]
    with pytest.raises(OSError):  # bound to the pod's localhost: not reachable at the pod's IP
        socket.create_connection((pod_ip, 9000), timeout=3).close()
    local = free_port()
    payload = os.urandom(6 * 1024 * 1024)
    with forward(secure, echo, f"{local}:9000") as pf:
        pf.wait_line("Forwarding from")
        assert echo_round_trip(local, b"hello\n") == b"hello\n"
        back = echo_round_trip(local, payload)
        assert len(back) == len(payload) and back == payload
        assert pf.proc.poll() is None


def test_a_port_nothing_listens_on_reports_kubeletes_error(secure: Secure, nginx: str) -> None:  # noqa: F811
    local = free_port()
    with forward(secure, f"pod/{nginx}", f"{local}:81") as pf:
        pf.wait_line("Forwarding from")
        with socket.create_connection(("127.0.0.1", local), timeout=20) as sock:
            sock.settimeout(20)
            assert sock.recv(100) == b""  # closed without a byte
        line = pf.wait_line("error forwarding port 81")
        pod = secure.api.get(f"/api/v1/namespaces/default/pods/{nginx}").json()
        assert f"error forwarding port 81 to pod {pod['metadata']['uid']}, uid : " in line, line
        assert "failed to connect to localhost:81" in line and "connection refused" in line, line
        code = pf.exit_code()
    assert code == 1
    assert pf.err[-1] == "error: lost connection to pod\n", pf.err  # kubectl 1.32 ends on a forwarding error
    with pytest.raises(ConnectionRefusedError):  # and its listener with it
        socket.create_connection(("127.0.0.1", local), timeout=5).close()


def test_official_python_client_forwards_over_the_v4_channel_protocol(secure: Secure, nginx: str) -> None:  # noqa: F811
    from kubernetes import client
    from kubernetes.stream import portforward

    wait_for(lambda: _serving(secure, nginx, 80), timeout=30, what="nginx listening")
    config = client.Configuration(host=secure.apiserver.url)
    with client.ApiClient(config) as api_client:
        core = client.CoreV1Api(api_client)
        pf = portforward(core.connect_get_namespaced_pod_portforward, nginx, "default", ports="80,81")
        sock = pf.socket(80)
        sock.settimeout(20)
        sock.sendall(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
        page = b""
        while chunk := sock.recv(65536):
            page += chunk
        assert b"Welcome to nginx!" in page, page
        sock.close()
        wait_for(lambda: pf.error(81) is not None, timeout=20, what="the error of port 81")
        assert "error forwarding port 81 to pod" in (pf.error(81) or "")
        assert pf.error(80) is None
        pf.close()
