"""A kubeconfig's embedded credentials (`client-certificate-data`, `client-key-data`) are used from
memory (client/credentials.py): a client that is killed, which runs no exit handler, leaves no
private key in its temp dir."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.security.conftest import REPO, SecureCluster


def embedded(kubeconfig: Path, into: Path) -> Path:
    """`kubeconfig` with its client certificate and key files replaced by their `-data` forms."""
    config = yaml.safe_load(kubeconfig.read_text())
    user = config["users"][0]["user"]
    config["users"][0]["user"] = {
        f"{field}-data": base64.b64encode(Path(user[field]).read_bytes()).decode()
        for field in ("client-certificate", "client-key")
    }
    into.write_text(yaml.safe_dump(config))
    return into


def test_a_killed_client_leaves_no_key_behind(secure: SecureCluster, tmp_path: Path) -> None:
    kubeconfig = embedded(secure.kubeconfigs["admin"], tmp_path / "admin.conf")
    temp = tmp_path / "tmp"
    temp.mkdir()
    kubectl = [sys.executable, "-m", "kubectl", "--kubeconfig", str(kubeconfig)]
    env = {**os.environ, "TMPDIR": str(temp)}
    whoami = subprocess.run([*kubectl, "auth", "whoami"], capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert whoami.returncode == 0 and "kubernetes-admin" in whoami.stdout, whoami.stderr
    with subprocess.Popen([*kubectl, "get", "namespaces", "--watch"], stdout=subprocess.PIPE, text=True, env=env,
                          cwd=REPO) as watch:  # fmt: skip
        try:
            assert watch.stdout is not None
            first = watch.stdout.readline()  # the table's header: connected, the credentials in use
        finally:
            watch.kill()  # SIGKILL: no exit handler runs
    assert first.startswith("NAME"), first
    assert sorted(p.name for p in temp.iterdir()) == []
