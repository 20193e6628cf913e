"""A secure cluster for the security tests: the API server on HTTPS with x509, a token file and
ServiceAccount tokens, RBAC and an audit log; a controller-manager that makes token Secrets; and
kubeconfigs for the real kubectl — an administrator (`system:masters` certificate), alice (a
certificate, no groups), bob (a static token).

The plain `--port` stays on (loopback) for the fixtures' own set-up, as `system:unsecured`."""

from __future__ import annotations

import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, free_port, wait_for
from tests.support.kubectl import kubectl_binary
from tests.support.pki import CA

REPO = Path(__file__).resolve().parents[2]
BOB_TOKEN = "bob-secret-token-0123456789"
ISSUER = "https://kubernetes.default.svc.cluster.local"


@dataclass
class SecureCluster:
    apiserver: APIServerProcess
    secure_url: str
    ca: Path
    audit_log: Path
    kubeconfigs: dict[str, Path] = field(default_factory=dict)

    def kubectl(self, who: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([kubectl_binary(), "--kubeconfig", str(self.kubeconfigs[who]), *args],
                              input=stdin, capture_output=True, text=True, timeout=60)  # fmt: skip

    def https(self, **kw: object) -> httpx.Client:
        tls = ssl.create_default_context(cafile=str(self.ca))
        return httpx.Client(base_url=self.secure_url, verify=tls, timeout=10.0, **kw)  # type: ignore[arg-type]


def _kubeconfig(path: Path, server: str, ca: Path, user: dict[str, str]) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": "default"}}],
    }))  # fmt: skip
    return path


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureCluster]:
    d = tmp_path_factory.mktemp("pki")
    ca = CA(d)
    serving = ca.issue("apiserver", cn="kube-apiserver", server=True)
    admin = ca.issue("admin", cn="kubernetes-admin", groups=("system:masters",))
    alice = ca.issue("alice", cn="alice")
    (d / "tokens.csv").write_text(f'{BOB_TOKEN},bob,1001,"dev,qa"\n')
    sa_key = ec.generate_private_key(ec.SECP256R1())
    (d / "sa.key").write_bytes(sa_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))  # fmt: skip
    port = free_port()
    server = APIServerProcess(args=[
        "--secure-port", str(port), "--tls-cert-file", str(serving.cert), "--tls-private-key-file", str(serving.key),
        "--client-ca-file", str(ca.pair.cert), "--token-auth-file", str(d / "tokens.csv"),
        "--service-account-key-file", str(d / "sa.key"), "--authorization-mode", "RBAC",
        "--service-account-signing-key-file", str(d / "sa.key"), "--service-account-issuer", ISSUER,
        "--audit-log-path", str(d / "audit.log"),
    ]).start()  # fmt: skip
    url = f"https://127.0.0.1:{port}"
    tls = ssl.create_default_context(cafile=str(ca.pair.cert))
    wait_for(lambda: httpx.get(url + "/healthz", verify=tls).status_code == 200, what="HTTPS")
    cm_port = free_port()
    manager = ComponentProcess("controller_manager", [
        "--master", server.url, "--port", str(cm_port), "--controllers", "serviceaccount,serviceaccount-token",
        "--service-account-private-key-file", str(d / "sa.key"), "--root-ca-file", str(ca.pair.cert),
    ], health_port=cm_port).start()  # fmt: skip
    cluster = SecureCluster(server, url, ca.pair.cert, d / "audit.log")
    cluster.kubeconfigs = {
        "admin": _kubeconfig(d / "admin.conf", url, ca.pair.cert,
                             {"client-certificate": str(admin.cert), "client-key": str(admin.key)}),
        "alice": _kubeconfig(d / "alice.conf", url, ca.pair.cert,
                             {"client-certificate": str(alice.cert), "client-key": str(alice.key)}),
        "bob": _kubeconfig(d / "bob.conf", url, ca.pair.cert, {"token": BOB_TOKEN}),
        "anonymous": _kubeconfig(d / "anon.conf", url, ca.pair.cert, {}),
        "forged": _kubeconfig(d / "forged.conf", url, ca.pair.cert, {"token": "not-a-real-token"}),
    }  # fmt: skip
    try:
        yield cluster
    finally:
        manager.stop()
        server.cleanup()


@pytest.fixture
def plain(secure: SecureCluster) -> Iterator[httpx.Client]:
    """The plain port (system:unsecured): for setting up what a test needs."""
    with secure.apiserver.client() as c:
        yield c
