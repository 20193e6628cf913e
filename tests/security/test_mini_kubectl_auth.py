"""mini-kubectl on the secure port, side by side with the real kubectl, with the same kubeconfigs:
client certificates and tokens from the kubeconfig, `--token`, `--as`, `auth whoami`,
`auth can-i` (one action, `--list`, a path, a subresource), a 403, and `create token`."""

from __future__ import annotations

import subprocess
import sys

import httpx
import jwt

from tests.security.conftest import REPO, SecureCluster
from tests.support.fixtures import new_namespace


def mini(secure: SecureCluster, who: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubectl", "--kubeconfig", str(secure.kubeconfigs[who]), *args],
                          capture_output=True, text=True, timeout=60, cwd=REPO)  # fmt: skip


def test_auth_and_errors_match_kubectl(secure: SecureCluster, plain: httpx.Client) -> None:
    ns = new_namespace(plain, "mk")
    role = {"metadata": {"name": "reader", "namespace": ns},
            "rules": [{"apiGroups": ["", "apps"], "resources": ["pods", "pods/log", "deployments"],
                       "verbs": ["get", "list"]},
                      {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"],
                       "verbs": ["get", "update"]}]}  # fmt: skip
    binding = {"metadata": {"name": "alice", "namespace": ns},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
               "subjects": [{"kind": "User", "name": "alice"}]}  # fmt: skip
    for kind, body in (("roles", role), ("rolebindings", binding)):
        assert plain.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/{kind}", json=body).status_code == 201
    commands = [
        ("admin", "auth", "whoami"), ("bob", "auth", "whoami"), ("alice", "auth", "whoami", "-o", "json"),
        ("alice", "auth", "can-i", "--list", "-n", ns), ("bob", "auth", "can-i", "--list"),
        ("alice", "auth", "can-i", "list", "pods", "-n", ns), ("alice", "auth", "can-i", "delete", "pods", "-n", ns),
        ("alice", "auth", "can-i", "get", "pods", "--subresource=log", "-n", ns),
        ("alice", "auth", "can-i", "update", "configmaps/settings", "-n", ns),
        ("alice", "auth", "can-i", "get", "/healthz"), ("alice", "get", "pods"), ("alice", "get", "pods", "-n", ns),
        ("admin", "--as", "alice", "get", "deployments", "-n", ns), ("alice", "--as", "bob", "get", "pods"),
        ("anonymous", "--token", "nonsense", "get", "pods"),
    ]  # fmt: skip
    for who, *args in commands:
        real, ours = secure.kubectl(who, *args), mini(secure, who, *args)
        if args[:1] == ["get"] and real.returncode == 1 and "logged in" in real.stderr:
            real_err = real.stderr.strip().splitlines()[-1]  # kubectl's discovery noise above it
            assert (ours.returncode, ours.stderr.strip().splitlines()[-1]) == (1, real_err), (who, args)
            continue
        assert (ours.returncode, ours.stdout, ours.stderr) == (real.returncode, real.stdout, real.stderr), (who, args)


def test_create_token_matches_kubectl(secure: SecureCluster, plain: httpx.Client) -> None:
    ns = new_namespace(plain, "mktok")
    plain.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "ci"}})
    for tool in (secure.kubectl, lambda who, *a: mini(secure, who, *a)):
        done = tool("admin", "create", "token", "ci", "-n", ns, "--duration", "15m", "--audience", "vault")
        assert done.returncode == 0, done.stderr
        claims = jwt.decode(done.stdout.strip(), options={"verify_signature": False})
        assert claims["aud"] == ["vault"] and claims["exp"] - claims["iat"] == 900
        assert claims["sub"] == f"system:serviceaccount:{ns}:ci"
    real = secure.kubectl("admin", "create", "token", "nobody", "-n", ns)
    ours = mini(secure, "admin", "create", "token", "nobody", "-n", ns)
    assert (ours.returncode, ours.stderr) == (real.returncode, real.stderr)
