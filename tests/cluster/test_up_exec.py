"""`mini-k8s up --secure` makes what `kubectl exec` needs: each kubelet's serving certificate (its
node's address as SAN), the API server's apiserver-kubelet-client certificate (system:masters, as
kubeadm makes it), and the flags that join them; with `--runtime process` the real kubectl then
execs into a pod, and logs and metrics keep working."""

from __future__ import annotations

import ipaddress
import os
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from cryptography import x509

from cluster.pki import cluster_pki
from cluster.plan import ClusterOptions, plan
from tests.cluster.test_up import REPO, Cluster, cluster  # noqa: F401  (fixture)
from tests.support.component import wait_for
from tests.support.kubectl import kubectl_binary


def test_plan_secure_gives_kubelets_https_and_the_api_server_a_client_certificate(tmp_path: Path) -> None:
    opts = ClusterOptions(data_dir=tmp_path, nodes=2, kubelet_ports=[10250, 10251], secure_port=6443)
    cluster_pki(opts.pki_dir)
    components = {c.name: c for c in plan(opts)}
    api = list(components["apiserver"].args)
    pki = opts.pki_dir
    assert api[api.index("--kubelet-client-certificate") + 1] == str(pki / "apiserver-kubelet-client.crt")
    assert api[api.index("--kubelet-certificate-authority") + 1] == str(pki / "ca.crt")
    for node in ("node-1", "node-2"):
        args = list(components[f"kubelet-{node}"].args)
        assert args[args.index("--tls-cert-file") + 1] == str(pki / f"kubelet-{node}.crt")
        assert args[args.index("--client-ca-file") + 1] == str(pki / "ca.crt")
        assert args[args.index("--authorization-mode") + 1] == "Webhook"
        cert = x509.load_pem_x509_certificate((pki / f"kubelet-{node}.crt").read_bytes())
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
        assert node in sans.get_values_for_type(x509.DNSName)
    client = x509.load_pem_x509_certificate((pki / "apiserver-kubelet-client.crt").read_bytes())
    assert client.subject.rfc4514_string() == "CN=kube-apiserver-kubelet-client,O=system:masters"
    plain = {c.name: c for c in plan(ClusterOptions(data_dir=tmp_path, nodes=1, kubelet_ports=[10250]))}
    assert "--tls-cert-file" not in plain["kubelet-node-1"].args
    assert "--kubelet-client-certificate" not in plain["apiserver"].args


@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="the process runtime needs Linux and root")
def test_up_secure_with_real_pods_lets_kubectl_exec(cluster: Cluster) -> None:  # noqa: F811
    from tests.support.component import free_port

    result = cluster.up(1, "--secure", "--secure-port", str(free_port()), "--runtime", "process")
    assert result.returncode == 0, result.stdout + result.stderr
    kubectl = kubectl_binary()

    def k(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([kubectl, *args], capture_output=True, text=True, env=cluster.env, cwd=REPO, timeout=60)

    assert k("run", "shell", "--image=busybox", "--restart=Never", "--", "sh", "-c", "echo started; sleep 600"
             ).returncode == 0  # fmt: skip
    wait_for(lambda: k("get", "pod", "shell", "-o", "jsonpath={.status.phase}").stdout == "Running",
             timeout=30, what="pod Running")  # fmt: skip
    out = k("exec", "shell", "--", "hostname")
    assert (out.returncode, out.stdout) == (0, "shell\n"), out.stderr
    wait_for(lambda: k("logs", "shell").stdout == "started\n", what="logs through HTTPS")
    mini = subprocess.run([sys.executable, "-m", "kubectl", "exec", "shell", "--", "sh", "-c", "exit 7"],
                          capture_output=True, text=True, env=cluster.env, cwd=REPO, timeout=60)  # fmt: skip
    assert (mini.returncode, mini.stderr) == (7, "command terminated with exit code 7\n")

    # the ServiceAccount admission plugin gave the pod its token volume, where in-cluster clients look
    sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount"
    volumes = k("get", "pod", "shell", "-o", "jsonpath={.spec.volumes[*].name}").stdout.split()
    assert [v for v in volumes if v.startswith("kube-api-access-")], volumes
    assert k("exec", "shell", "--", "cat", f"{sa_dir}/namespace").stdout == "default"
    ca = cluster.data_dir / "pki" / "ca.crt"
    assert k("exec", "shell", "--", "cat", f"{sa_dir}/ca.crt").stdout == ca.read_text()
    token = k("exec", "shell", "--", "cat", f"{sa_dir}/token").stdout
    clusters = yaml.safe_load(cluster.kubeconfig.read_text())["clusters"]
    server = {c["name"]: c["cluster"] for c in clusters}["mini-k8s"]["server"]
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}

    def whoami() -> httpx.Response:
        return httpx.post(f"{server}/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review,
                          headers={"Authorization": f"Bearer {token}"}, timeout=10,
                          verify=ssl.create_default_context(cafile=str(ca)))  # fmt: skip

    me = whoami().json()["status"]["userInfo"]
    assert me["username"] == "system:serviceaccount:default:default"
    assert me["extra"]["authentication.kubernetes.io/pod-name"] == ["shell"]
    k("delete", "pod", "shell", "--grace-period=1", "--wait=false")
    # bound to the pod: once the pod is gone, so is the token
    wait_for(lambda: whoami().status_code == 401, timeout=60, what="the token refused after its pod")
