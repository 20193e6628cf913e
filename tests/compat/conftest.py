"""Fixtures for compatibility tests: the real `kubectl` binary and the official Python client.

These tests prove the wire contract of DESIGN §4 the only way that counts — by driving a real
mini-apiserver process with the real clients students use. One API server per backend serves the
whole package (starting servers is the slow part); every test works in its own namespace.

`kubectl` runs with a throw-away kubeconfig pointing at the test server and a throw-away HOME, so
it never reads the user's ~/.kube/config nor writes to their discovery cache.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.fixtures import new_namespace, server_for_backend
from tests.support.kubectl import kubectl_binary


@pytest.fixture(scope="package", params=["sqlite", "etcd"])
def apiserver(request: pytest.FixtureRequest) -> Iterator[APIServerProcess]:
    """One API server per backend for the whole compat package."""
    server = server_for_backend(request, request.param)
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def api(apiserver: APIServerProcess) -> Iterator[httpx.Client]:
    with apiserver.client() as c:
        yield c


@pytest.fixture
def ns(api: httpx.Client) -> str:
    """A fresh namespace for one test."""
    return new_namespace(api, "c")


@dataclass
class Result:
    rc: int
    out: str
    err: str

    def lines(self) -> list[str]:
        return [line for line in self.out.splitlines() if line.strip()]


class Kubectl:
    """Runs the real kubectl against one server: `kubectl("get", "pods", "-n", ns)`."""

    def __init__(self, binary: str, server_url: str, home: Path) -> None:
        self.binary = binary
        self.kubeconfig = home / "kubeconfig"
        self.kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: mini\n  cluster:\n    server: {server_url}\n"
            "users:\n- name: student\n  user: {}\n"
            "contexts:\n- name: mini\n  context:\n    cluster: mini\n    user: student\n"
            "current-context: mini\n"
        )
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("KUBE")},
            "KUBECONFIG": str(self.kubeconfig),
            "HOME": str(home),
        }

    def __call__(self, *args: str, stdin: str | None = None, timeout: float = 20.0) -> Result:
        p = subprocess.run(
            [self.binary, *args], input=stdin, capture_output=True, text=True, env=self.env, timeout=timeout
        )
        return Result(p.returncode, p.stdout, p.stderr)

    def ok(self, *args: str, stdin: str | None = None) -> Result:
        """Run and insist on exit code 0 (showing stderr when it is not)."""
        r = self(*args, stdin=stdin)
        assert r.rc == 0, f"kubectl {' '.join(args)} exited {r.rc}:\n{r.err}"
        return r

    def stream(self, *args: str) -> LineStream:
        p = subprocess.Popen(
            [self.binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env
        )
        return LineStream(p)


class LineStream:
    """A long-running kubectl (`get -w`) whose output lines are read with a deadline."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_line(self, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no line from kubectl within the deadline")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                err = self.proc.stderr.read() if self.proc.stderr else ""
                raise EOFError(f"kubectl exited ({self.proc.wait()}): {err}")
            if line.strip():
                return line

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(5)
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()


@pytest.fixture(scope="package")
def kubectl_home() -> Iterator[Path]:
    home = Path(tempfile.mkdtemp(prefix="mini-k8s-kubectl-"))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def kubectl(apiserver: APIServerProcess, kubectl_home: Path) -> Kubectl:
    home = kubectl_home / apiserver.backend
    home.mkdir(exist_ok=True)
    return Kubectl(kubectl_binary(), apiserver.url, home)


def columns(line: str) -> list[str]:
    """Split one line of kubectl's table output into cells (cells are 3+ spaces apart)."""
    import re

    return [c for c in re.split(r"\s{3,}", line.strip()) if c]


def pod(name: str, *, image: str = "nginx:1.25", labels: dict[str, str] | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels if labels is not None else {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }


def two_container_deployment(name: str, app_image: str = "nginx:1.7.9", replicas: int = 2) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "app", "image": app_image, "ports": [{"containerPort": 80}]},
                        {
                            "name": "sidecar",
                            "image": "busybox:1.36",
                            "ports": [{"containerPort": 9000, "name": "metrics"}],
                        },
                    ]
                },
            },
        },
    }


def event_for(obj: dict, name: str, reason: str, message: str, *, uid: str | None = None) -> dict:
    """A core/v1 Event about `obj` (as a controller's event recorder would write it)."""
    md = obj["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "name": md["name"],
            "namespace": md["namespace"],
            "uid": uid or md["uid"],
        },
        "reason": reason,
        "message": message,
        "type": "Normal",
        "source": {"component": "compat-test"},
        "firstTimestamp": md["creationTimestamp"],
        "lastTimestamp": md["creationTimestamp"],
        "count": 1,
    }
