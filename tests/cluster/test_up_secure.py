"""`mini-k8s up --secure`: a CA and certificates in <data-dir>/pki, the API server on HTTPS with
RBAC, and a kubeconfig whose context carries the CA and the administrator's certificate — so the
real kubectl and mini-kubectl work with no flags, as `kubernetes-admin` in `system:masters`; the
controller-manager fills token Secrets and publishes `kube-root-ca.crt`; a ServiceAccount with
no grants is refused."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys

import httpx
import yaml

from tests.cluster.test_up import REPO, Cluster, cluster  # noqa: F401  (fixture)
from tests.support.component import free_port, wait_for


def test_up_secure_serves_https_with_rbac_and_an_admin_kubeconfig(cluster: Cluster) -> None:  # noqa: F811
    secure_port = free_port()
    result = cluster.up(1, "--secure", "--secure-port", str(secure_port))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "✓ certificates: CA" in result.stdout
    pki = cluster.data_dir / "pki"
    assert {p.name for p in pki.iterdir()} >= {"ca.crt", "ca.key", "apiserver.crt", "admin.crt", "admin.key",
                                                "sa.key"}  # fmt: skip
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    ours = {c["name"]: c["cluster"] for c in config["clusters"]}["mini-k8s"]
    assert ours["server"] == f"https://127.0.0.1:{secure_port}"
    assert base64.b64decode(ours["certificate-authority-data"]) == (pki / "ca.crt").read_bytes()

    tools = [[sys.executable, "-m", "kubectl"]] + ([[real]] if (real := shutil.which("kubectl")) else [])
    for tool in tools:
        who = subprocess.run([*tool, "auth", "whoami"], capture_output=True, text=True, env=cluster.env, cwd=REPO,
                             timeout=60)  # fmt: skip
        assert who.returncode == 0, who.stderr
        assert "kubernetes-admin" in who.stdout and "system:masters" in who.stdout
        nodes = subprocess.run([*tool, "get", "nodes"], capture_output=True, text=True, env=cluster.env, cwd=REPO,
                               timeout=60)  # fmt: skip
        assert nodes.returncode == 0 and "node-1" in nodes.stdout, nodes.stderr

    # the controller-manager runs the token controller and the root-CA publisher with the cluster's files
    plain = httpx.Client(base_url=cluster.url, timeout=5)
    wait_for(lambda: plain.get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt").status_code == 200,
             what="kube-root-ca.crt")  # fmt: skip
    plain.post("/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "nobody"}})
    token = subprocess.run([sys.executable, "-m", "kubectl", "create", "token", "nobody"], capture_output=True,
                           text=True, env=cluster.env, cwd=REPO, timeout=60).stdout.strip()  # fmt: skip
    assert token
    refused = subprocess.run([sys.executable, "-m", "kubectl", "--token", token, "get", "pods"], capture_output=True,
                             text=True, env=cluster.env, cwd=REPO, timeout=60)  # fmt: skip
    assert refused.returncode == 1
    assert 'User "system:serviceaccount:default:nobody" cannot list resource "pods"' in refused.stderr
