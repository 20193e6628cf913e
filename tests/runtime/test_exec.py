"""`kubectl exec`, `exec -it`, `cp` and the security around them, end to end on real processes.

One secure cluster for the module, made as `mini-k8s up --secure` makes it (cluster/pki.py): the
API server on HTTPS with RBAC and `--kubelet-client-certificate` (group system:masters), a
process-runtime kubelet serving HTTPS with `--client-ca-file` and `--authorization-mode Webhook`,
a simulated-runtime kubelet with the same TLS, and a plain simulated kubelet without any (whose
exec endpoint must refuse everyone). Pods are pinned to their nodes with `spec.nodeName`.
The real kubectl drives it: over the plain port (system:unsecured) unless a test says otherwise.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
import yaml

from tests.runtime.conftest import KUBELET_FAST, random_pod_cidr
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for
from tests.support.kubectl import kubectl_binary
from tests.support.pki import CA
from tests.support.terminal import Terminal


@dataclass
class Secure:
    apiserver: APIServerProcess
    api: httpx.Client
    secure_url: str
    pki: Path
    ca: CA
    node: str  # process runtime, TLS
    sim_node: str  # simulated runtime, TLS
    kubelet_port: int
    plain_kubelet_port: int  # simulated, no TLS at all
    kubectl_path: str
    kubeconfigs: dict[str, Path]
    root: Path  # the process-runtime kubelet's --root-dir
    kubelet: ComponentProcess  # the process-runtime kubelet

    def restart_kubelet(self) -> None:
        """SIGKILL the process-runtime kubelet (a crash) and start it again: it adopts its runs."""
        self.kubelet.kill()
        self.kubelet = ComponentProcess("kubelet", self.kubelet.args, health_port=self.kubelet.health_port).start()

    def kubectl(self, *args: str, stdin: str | bytes | None = None, who: str = "",
                timeout: float = 60) -> subprocess.CompletedProcess[str]:  # fmt: skip
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfigs[who]) if who else os.devnull}
        head = [self.kubectl_path] if who else [self.kubectl_path, "-s", self.apiserver.url]
        return subprocess.run([*head, *args], input=stdin, capture_output=True, text=True, timeout=timeout,
                              env=env)  # fmt: skip

    def pod(self, name: str, node: str = "", **spec: Any) -> str:
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"nodeName": node or self.node, "terminationGracePeriodSeconds": 1,
                         "containers": [{"name": "main", "image": "busybox", "command": ["sleep", "3600"]}],
                         **spec}}  # fmt: skip
        self.api.post("/api/v1/namespaces/default/pods", json=body).raise_for_status()
        wait_for(lambda: self.api.get(f"/api/v1/namespaces/default/pods/{name}").json()["status"].get("phase")
                 == "Running", timeout=30, what=f"pod {name} Running")  # fmt: skip
        return name


def _kubeconfig(path: Path, server: str, ca: Path, cert: Any) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": "u", "user": {"client-certificate": str(cert.cert), "client-key": str(cert.key)}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": "default"}}],
    }))  # fmt: skip
    return path


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secure]:
    d = tmp_path_factory.mktemp("pki")
    ca = CA(d)
    serving = ca.issue("apiserver", cn="kube-apiserver", server=True)
    kubelet_serving = ca.issue("kubelet", cn="kubelet", server=True)  # 127.0.0.1: every node's address here
    to_kubelets = ca.issue("apiserver-kubelet-client", cn="kube-apiserver-kubelet-client", groups=("system:masters",))
    alice = ca.issue("alice", cn="alice")
    port = free_port()
    server = APIServerProcess(args=[
        "--secure-port", str(port), "--tls-cert-file", str(serving.cert), "--tls-private-key-file", str(serving.key),
        "--client-ca-file", str(ca.pair.cert), "--authorization-mode", "RBAC",
        "--kubelet-client-certificate", str(to_kubelets.cert), "--kubelet-client-key", str(to_kubelets.key),
        "--kubelet-certificate-authority", str(ca.pair.cert),
    ]).start()  # fmt: skip
    tls = ["--tls-cert-file", str(kubelet_serving.cert), "--tls-private-key-file", str(kubelet_serving.key),
           "--client-ca-file", str(ca.pair.cert), "--authorization-mode", "Webhook"]  # fmt: skip
    suffix = uuid.uuid4().hex[:6]
    node, sim, plain = f"ex-{suffix}", f"exsim-{suffix}", f"explain-{suffix}"
    root = tmp_path_factory.mktemp("kubelet-root")
    kl, sim_port, plain_port = free_port(), free_port(), free_port()
    kubelets = [
        ComponentProcess("kubelet", ["--master", server.url, "--node-name", node, "--port", str(kl), "--runtime",
                                     "process", "--root-dir", str(root), "--pod-cidr", random_pod_cidr(),
                                     "--cluster-dns", "10.96.0.10", "--cluster-domain", "cluster.local",
                                     *KUBELET_FAST, *tls], health_port=kl),  # fmt: skip
        ComponentProcess("kubelet", ["--master", server.url, "--node-name", sim, "--port", str(sim_port),
                                     *KUBELET_FAST, *tls], health_port=sim_port),  # fmt: skip
        ComponentProcess("kubelet", ["--master", server.url, "--node-name", plain, "--port", str(plain_port),
                                     *KUBELET_FAST], health_port=plain_port),  # fmt: skip
    ]
    for k in kubelets:
        k.start()
    url = f"https://127.0.0.1:{port}"
    configs = {"alice": _kubeconfig(d / "alice.conf", url, ca.pair.cert, alice)}
    with server.client() as api:
        s = Secure(server, api, url, d, ca, node, sim, kl, plain_port, kubectl_binary(), configs, root, kubelets[0])
        for n in (node, sim):
            wait_for(lambda n=n: api.get(f"/api/v1/nodes/{n}").status_code == 200, what=f"node {n}")  # type: ignore[misc]
        try:
            yield s
        finally:
            s.kubectl("delete", "pods", "--all", "--wait=false")
            for k in [s.kubelet, *kubelets[1:]]:
                k.stop()
            done = subprocess.run([sys.executable, "-m", "kubelet.cleanup", "--root-dir", str(root)],
                                  capture_output=True, text=True)  # fmt: skip
            assert done.returncode == 0, f"kubelet.cleanup failed: {done.stderr}"  # else runs stay behind
            server.cleanup()


@pytest.fixture(scope="module")
def pod(secure: Secure) -> str:
    """A running busybox pod with a configMap volume at a path the host lacks."""
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "exec-conf"}, "data": {"greeting": "hello"}}
    secure.api.post("/api/v1/namespaces/default/configmaps", json=body).raise_for_status()
    return secure.pod("exec-target", volumes=[{"name": "conf", "configMap": {"name": "exec-conf"}}],
                      containers=[{"name": "main", "image": "busybox", "command": ["sleep", "3600"],
                                   "volumeMounts": [{"name": "conf", "mountPath": "/etc/exec-conf"}]}])  # fmt: skip


def test_exec_runs_in_the_container_namespaces(secure: Secure, pod: str) -> None:
    out = secure.kubectl("exec", pod, "--", "hostname")
    assert (out.returncode, out.stdout, out.stderr) == (0, f"{pod}\n", "")
    resolv = secure.kubectl("exec", pod, "--", "cat", "/etc/resolv.conf")
    search = "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\n"
    assert resolv.returncode == 0 and resolv.stdout.startswith(search), resolv  # the pod's, not the host's
    volume = secure.kubectl("exec", pod, "-c", "main", "--", "cat", "/etc/exec-conf/greeting")
    assert (volume.returncode, volume.stdout) == (0, "hello"), volume
    env = secure.kubectl("exec", pod, "--", "sh", "-c", "echo $HOSTNAME; echo oops >&2")
    assert (env.stdout, env.stderr) == (f"{pod}\n", "oops\n")


def test_exec_exit_code_becomes_kubectls(secure: Secure, pod: str) -> None:
    out = secure.kubectl("exec", pod, "--", "sh", "-c", "exit 3")
    assert out.returncode == 3
    assert out.stderr == "command terminated with exit code 3\n"


def test_exec_stdin_reaches_the_command_and_its_end_ends_it(secure: Secure, pod: str) -> None:
    text = "line one\nline two\n" * 1000
    out = secure.kubectl("exec", "-i", pod, "--", "cat", stdin=text)
    assert (out.returncode, out.stdout) == (0, text)


def test_exec_with_a_terminal(secure: Secure, pod: str) -> None:
    env = {**os.environ, "KUBECONFIG": os.devnull}
    term = Terminal([secure.kubectl_path, "-s", secure.apiserver.url, "exec", "-it", pod, "--", "sh"], env)
    try:
        term.read_until(b"# ", timeout=20)  # the shell's prompt, through the terminal
        term.type(b"tty; echo h''i-$((40+2))\n")
        term.read_until(b"hi-42", timeout=20)
        assert b"/dev/pts/" in term.seen  # the command has a terminal of its own
        term.type(b"exit 5\n")
        assert term.wait() == 5
    finally:
        term.close()


def test_kubectl_cp_into_the_pod_and_back_byte_identical(secure: Secure, pod: str, tmp_path: Path) -> None:
    source = tmp_path / "payload.bin"
    source.write_bytes(os.urandom(200_000) + b"\x00\xff end")
    into = secure.kubectl("cp", str(source), f"default/{pod}:/tmp/payload.bin")
    assert into.returncode == 0, into.stderr
    back = tmp_path / "back.bin"
    out = secure.kubectl("cp", f"default/{pod}:/tmp/payload.bin", str(back))
    assert out.returncode == 0, out.stderr
    assert back.read_bytes() == source.read_bytes()


def test_rbac_needs_create_on_pods_exec(secure: Secure, pod: str) -> None:
    def role(verbs: list[str]) -> None:
        secure.api.delete("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/exec")
        body = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "exec"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                          {"apiGroups": [""], "resources": ["pods/exec"], "verbs": verbs}]}  # fmt: skip
        secure.api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", json=body).raise_for_status()

    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "exec"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "exec"},
               "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}  # fmt: skip
    secure.api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", json=binding)
    role(["get"])  # read-only: enough for the WebSocket's GET in Kubernetes < 1.35, never here
    out = secure.kubectl("exec", pod, "--", "hostname", who="alice")
    assert out.returncode == 1
    assert out.stderr.startswith(f'Error from server (Forbidden): pods "{pod}" is forbidden: User "alice" cannot '
                                 'create resource "pods/exec" in API group "" in the namespace "default"'), out.stderr
    role(["get", "create"])
    out = wait_for(lambda: (r := secure.kubectl("exec", pod, "--", "hostname", who="alice")).returncode == 0 and r,
                   what="alice may exec")  # fmt: skip
    assert out.stdout == f"{pod}\n"


# Every streaming endpoint of the kubelet (kubelet/server.py's STREAMING), with a query and a
# subprotocol it would serve: the refusals below must come from the Guard in front of them all.
STREAMING_CALLS = {
    "exec": ("/exec/default/{pod}/main?command=hostname&stdout=1", "v5.channel.k8s.io"),
    "attach": ("/attach/default/{pod}/main?stdout=1&stderr=1", "v5.channel.k8s.io"),
    "portForward": ("/portForward/default/{pod}?port=80", "v4.channel.k8s.io"),
}


@pytest.mark.parametrize("endpoint", list(STREAMING_CALLS))
def test_the_kubelet_refuses_exec_without_a_client_certificate(secure: Secure, pod: str, endpoint: str) -> None:
    """exec, attach and portForward alike: 401 without a verified client certificate, 403 naming
    the flags on a kubelet without a client CA, 403 when the Webhook refuses the certificate's user."""
    template, protocol = STREAMING_CALLS[endpoint]
    path = template.format(pod=pod)
    offered = [protocol]

    async def dial(url: str, context: ssl.SSLContext | None) -> tuple[int, str]:
        try:
            async with websockets.connect(url, subprotocols=offered, ssl=context, proxy=None):  # type: ignore[arg-type]
                return 101, ""
        except websockets.InvalidStatus as exc:
            return exc.response.status_code, (exc.response.body or b"").decode()

    def tls_as(name: str, groups: tuple[str, ...] = ()) -> ssl.SSLContext:
        pair = secure.ca.issue(name, cn=name, groups=groups)
        context = ssl.create_default_context(cafile=str(secure.ca.pair.cert))
        context.load_cert_chain(pair.cert, pair.key)
        return context

    no_cert = ssl.create_default_context(cafile=str(secure.ca.pair.cert))
    code, text = asyncio.run(dial(f"wss://127.0.0.1:{secure.kubelet_port}{path}", no_cert))
    assert (code, text) == (401, "Unauthorized")
    code, text = asyncio.run(dial(f"ws://127.0.0.1:{secure.kubelet_port}{path}", None))  # plain HTTP: no certificate
    assert (code, text) == (401, "Unauthorized")
    # a kubelet without a client CA runs nothing for anyone, and says which flags it lacks
    code, text = asyncio.run(dial(f"ws://127.0.0.1:{secure.plain_kubelet_port}{path}", None))
    assert code == 403 and "--client-ca-file" in text and "--tls-cert-file" in text, (code, text)
    # a certificate of the cluster CA whose user may not use nodes/proxy: the Webhook says no
    code, text = asyncio.run(dial(f"wss://127.0.0.1:{secure.kubelet_port}{path}", tls_as("stranger")))
    assert (code, text) == (403, "Forbidden (user=stranger, verb=create, resource=nodes, subresource=proxy)")
    # the same call with a certificate the Webhook allows is served: the refusals were the Guard's
    trusted = tls_as("streaming-admin", groups=("system:masters",))
    assert asyncio.run(dial(f"wss://127.0.0.1:{secure.kubelet_port}{path}", trusted)) == (101, "")
    # the logs stay readable on plain HTTP only where no client CA is configured
    assert httpx.get(f"http://127.0.0.1:{secure.kubelet_port}/containerLogs/default/{pod}/main").status_code == 401
    assert httpx.get(f"http://127.0.0.1:{secure.kubelet_port}/healthz").text == "ok"


def test_the_kubelets_metrics_need_a_certificate_whose_user_may_get_nodes_metrics(secure: Secure, pod: str) -> None:
    """Once a kubelet has a client CA, its metrics are Kubernetes' `nodes/metrics` (metrics-server
    scrapes them with its own certificate: --kubelet-certificate-authority); /healthz stays open."""
    url = f"https://127.0.0.1:{secure.kubelet_port}/metrics/resource?node={secure.node}"

    def tls_as(name: str) -> ssl.SSLContext:
        pair = secure.ca.issue(name, cn=name)
        context = ssl.create_default_context(cafile=str(secure.ca.pair.cert))
        context.load_cert_chain(pair.cert, pair.key)
        return context

    assert httpx.get(url.replace("https", "http")).status_code == 401  # plain HTTP: no certificate
    refused = httpx.get(url, verify=tls_as("stranger"))
    assert (refused.status_code, refused.text) == (
        403, "Forbidden (user=stranger, verb=get, resource=nodes, subresource=metrics)")  # fmt: skip
    for kind, body in (
        ("clusterroles", {"metadata": {"name": "scrape-kubelets"},
                          "rules": [{"apiGroups": [""], "resources": ["nodes/metrics"], "verbs": ["get"]}]}),
        ("clusterrolebindings", {"metadata": {"name": "scrape-kubelets"},
                                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                             "name": "scrape-kubelets"},
                                 "subjects": [{"kind": "User", "name": "scraper",
                                               "apiGroup": "rbac.authorization.k8s.io"}]}),
    ):  # fmt: skip
        secure.api.post(f"/apis/rbac.authorization.k8s.io/v1/{kind}", json=body).raise_for_status()
    allowed = httpx.get(url, verify=tls_as("scraper"))
    assert allowed.status_code == 200 and "node_cpu_usage_seconds_total" in allowed.text, allowed.text[:300]
    assert httpx.get(f"http://127.0.0.1:{secure.kubelet_port}/healthz").text == "ok"
    # a kubelet without a client CA keeps its metrics open (the plain clusters' metrics-server)
    assert httpx.get(f"http://127.0.0.1:{secure.plain_kubelet_port}/metrics/resource").status_code == 200


def test_exec_through_the_api_server_errors(secure: Secure, pod: str) -> None:
    missing = secure.kubectl("exec", "no-such-pod", "--", "true")
    assert (missing.returncode, missing.stderr) == (1, 'Error from server (NotFound): pods "no-such-pod" not found\n')
    bad = secure.kubectl("exec", pod, "-c", "nope", "--", "true")
    assert bad.returncode == 1 and f"container nope is not valid for pod {pod}" in bad.stderr, bad.stderr
    logs = secure.kubectl("logs", pod)  # the log proxy speaks HTTPS with its client certificate too
    assert logs.returncode == 0, logs.stderr


def test_the_simulated_runtime_says_it_runs_no_processes(secure: Secure) -> None:
    name = secure.pod("exec-sim", node=secure.sim_node)
    out = secure.kubectl("exec", name, "--", "hostname")
    assert out.returncode == 1
    assert "the simulated runtime runs no processes; start the cluster with --runtime process" in out.stderr
    assert out.stdout == ""

