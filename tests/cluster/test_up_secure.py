"""`mini-k8s up --secure`: a CA and certificates in <data-dir>/pki, the API server on HTTPS with
RBAC, and a kubeconfig whose context carries the CA and the administrator's certificate — so the
real kubectl and mini-kubectl work with no flags, as `kubernetes-admin` in `system:masters`; the
controller-manager fills token Secrets and publishes `kube-root-ca.crt`; a ServiceAccount with
no grants is refused."""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import yaml
from cryptography import x509

from tests.cluster.test_up import REPO, Cluster, cluster  # noqa: F401  (fixture)
from tests.support.component import free_port, wait_for


def test_up_secure_serves_https_with_rbac_and_an_admin_kubeconfig(cluster: Cluster) -> None:  # noqa: F811
    secure_port = free_port()
    # as `make up` starts it: no --port, so no plain port (it would bypass authentication); `up`
    # itself checks readiness and creates the add-ons over HTTPS as the administrator
    result = cluster.up(1, "--secure", "--secure-port", str(secure_port), plain_port=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "✓ certificates: CA" in result.stdout
    assert f"✓ apiserver ready at https://127.0.0.1:{secure_port}" in result.stdout
    state = json.loads((cluster.data_dir / "run" / "cluster.json").read_text())
    api_args = next(c["args"] for c in state["components"] if c["name"] == "apiserver")
    assert api_args[api_args.index("--port") + 1] == "0"
    status = cluster.run("status")
    assert status.returncode == 0 and f"API server https://127.0.0.1:{secure_port}: 1 node(s)" in status.stdout
    assert "node-1" in status.stdout and "Ready" in status.stdout, status.stdout
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
    admin = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    admin.load_cert_chain(pki / "admin.crt", pki / "admin.key")
    https_admin = httpx.Client(base_url=ours["server"], timeout=5, verify=admin)
    wait_for(lambda: https_admin.get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt").status_code == 200,
             what="kube-root-ca.crt")  # fmt: skip
    https_admin.post("/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "nobody"}})
    token = subprocess.run([sys.executable, "-m", "kubectl", "create", "token", "nobody"], capture_output=True,
                           text=True, env=cluster.env, cwd=REPO, timeout=60).stdout.strip()  # fmt: skip
    assert token
    refused = subprocess.run([sys.executable, "-m", "kubectl", "--token", token, "get", "pods"], capture_output=True,
                             text=True, env=cluster.env, cwd=REPO, timeout=60)  # fmt: skip
    assert refused.returncode == 1
    assert 'User "system:serviceaccount:default:nobody" cannot list resource "pods"' in refused.stderr


def _audit(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _who(events: list[dict[str, Any]], verb: str, resource: str, subresource: str = "") -> set[str]:
    """The users who did `verb` on `resource[/subresource]` and were allowed (2xx)."""
    return {e["user"]["username"] for e in events
            if e["verb"] == verb and 200 <= e["responseStatus"]["code"] < 300
            and (ref := e.get("objectRef") or {}).get("resource") == resource
            and ref.get("subresource", "") == subresource}  # fmt: skip


def test_up_secure_runs_every_component_as_itself(cluster: Cluster) -> None:  # noqa: F811
    """Each component has its own certificate and kubeconfig (HTTPS), and the audit log shows each
    doing its own job as itself: the scheduler binds, the ReplicaSet controller's ServiceAccount
    creates the pods, the node's kubelet writes their status — none as `system:unsecured`."""
    audit = cluster.data_dir.parent / "audit.log"
    result = cluster.up(2, "--secure", "--secure-port", str(free_port()), "--metric-resolution", "1s",
                        f"--kube-apiserver-arg=--audit-log-path={audit}")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    confs = {p.stem for p in (cluster.data_dir / "kubeconfigs").iterdir()}
    assert confs >= {"controller-manager", "scheduler", "kubelet-node-1", "kubelet-node-2", "cluster-dns",
                     "metrics-server"}, confs  # fmt: skip
    kubelet_conf = yaml.safe_load((cluster.data_dir / "kubeconfigs" / "kubelet-node-1.conf").read_text())
    assert kubelet_conf["clusters"][0]["cluster"]["server"].startswith("https://")
    cert = x509.load_pem_x509_certificate(Path(kubelet_conf["users"][0]["user"]["client-certificate"]).read_bytes())
    assert cert.subject.rfc4514_string() == "CN=system:node:node-1,O=system:nodes"

    kubectl = [sys.executable, "-m", "kubectl"]
    made = subprocess.run([*kubectl, "create", "deployment", "web", "--image=nginx", "--replicas=2"],
                          capture_output=True, text=True, env=cluster.env, cwd=REPO, timeout=60)  # fmt: skip
    assert made.returncode == 0, made.stderr

    def running() -> bool:
        out = subprocess.run([*kubectl, "get", "pods", "-l", "app=web", "--no-headers"], capture_output=True,
                             text=True, env=cluster.env, cwd=REPO, timeout=60).stdout  # fmt: skip
        return out.count("Running") == 2

    wait_for(running, timeout=60, what="two web pods Running")
    # metrics-server scrapes the kubelets over HTTPS as itself, and they let it (nodes/metrics)
    def top_nodes() -> str:
        return subprocess.run([*kubectl, "top", "nodes", "--no-headers"], capture_output=True, text=True,
                              env=cluster.env, cwd=REPO, timeout=60).stdout  # fmt: skip

    wait_for(lambda: top_nodes().count("node-") == 2, timeout=60, what="kubectl top nodes")
    ms_args = json.loads((cluster.data_dir / "run" / "cluster.json").read_text())["components"]
    ms = next(c["args"] for c in ms_args if c["name"] == "metrics-server")
    assert ms[ms.index("--kubelet-certificate-authority") + 1] == str(cluster.data_dir / "pki" / "ca.crt")
    events = _audit(audit)
    assert _who(events, "create", "pods", "binding") == {"system:kube-scheduler"}
    assert _who(events, "create", "pods") == {"system:serviceaccount:kube-system:replicaset-controller"}
    assert _who(events, "create", "replicasets") == {"system:serviceaccount:kube-system:deployment-controller"}
    status_writers = _who(events, "patch", "pods", "status") | _who(events, "update", "pods", "status")
    assert status_writers and status_writers <= {"system:node:node-1", "system:node:node-2"}, status_writers
    assert _who(events, "create", "leases") >= {"system:node:node-1", "system:node:node-2"}
    assert {"system:kube-controller-manager"} <= _who(events, "list", "pods")  # the shared informers
    # `up` itself and this test use the plain port; the components never do
    components = ("mini-scheduler", "mini-controller-manager", "mini-kubelet", "mini-cluster-dns",
                  "mini-metrics-server")  # fmt: skip
    by_component = {e["user"]["username"] for e in events if e["userAgent"].startswith(components)}
    assert "system:unsecured" not in by_component and "system:kube-scheduler" in by_component
    refused = {(e["user"]["username"], e["verb"], e["requestURI"]) for e in events
               if e["userAgent"].startswith(components) and e["responseStatus"]["code"] == 403}  # fmt: skip
    assert not refused, sorted(refused)  # every component's role covers what it does
    # each controller's ServiceAccount was made in kube-system, as kube-controller-manager makes them
    plain = httpx.Client(base_url=cluster.url, timeout=5)
    accounts = {sa["metadata"]["name"] for sa in
                plain.get("/api/v1/namespaces/kube-system/serviceaccounts").json()["items"]}  # fmt: skip
    assert {"replicaset-controller", "deployment-controller", "node-controller"} <= accounts
