"""Fixtures for mini-kubectl: the real kubectl and mini-kubectl side by side on one API server.

Every comparison runs both binaries against the same real mini-apiserver with the same
kubeconfig, and compares what they print. One server per test module (starting it is the slow
part); each test works in its own namespace. `kubectl` missing means the parity tests skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support import fixtures
from tests.support.apiserver import APIServerProcess
from tests.support.kubectl import kubectl_binary

apiserver = fixtures.apiserver  # the shared module-scoped fixture

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    rc: int
    out: str
    err: str


def write_kubeconfig(path: Path, server: str, namespace: str | None = None) -> Path:
    ns_line = f"    namespace: {namespace}\n" if namespace else ""
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: mini\n  cluster:\n    server: {server}\n"
        "users:\n- name: student\n  user: {}\n"
        "contexts:\n- name: mini\n  context:\n    cluster: mini\n    user: student\n"
        f"- name: other\n  context:\n    cluster: mini\n    user: student\n{ns_line}"
        "current-context: mini\n"
    )
    return path


class Pair:
    """Runs the real kubectl (`real`) and mini-kubectl (`mini`) with one environment."""

    def __init__(self, server: APIServerProcess, home: Path) -> None:
        self.server = server
        self.home = home
        self.kubeconfig = write_kubeconfig(home / "kubeconfig", server.url)
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("KUBE")},
            "KUBECONFIG": str(self.kubeconfig),
            "HOME": str(home),
            "PYTHONPATH": str(REPO),
        }
        # mini-kubectl command lines run in one long-lived worker process (see mini_worker.py);
        # `fresh=True` runs a new `python -m kubectl` process instead.
        self._worker = subprocess.Popen(
            [sys.executable, "-m", "tests.kubectl.mini_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=self.env,
            cwd=str(REPO),
        )
        self._lock = threading.Lock()

    def close(self) -> None:
        if self._worker.poll() is None:
            self._worker.kill()
        self._worker.wait(5)
        for f in (self._worker.stdin, self._worker.stdout):
            if f is not None:
                f.close()

    def _via_worker(self, args: tuple[str, ...], stdin: str | None, env: dict[str, str] | None) -> Result:
        request = {"argv": list(args), "stdin": stdin or "", "env": env or {}}
        with self._lock:
            assert self._worker.stdin is not None and self._worker.stdout is not None
            self._worker.stdin.write(json.dumps(request) + "\n")
            self._worker.stdin.flush()
            reply = json.loads(self._worker.stdout.readline())
        return Result(reply["rc"], reply["out"], reply["err"])

    def _cmd(self, which: str, args: tuple[str, ...]) -> list[str]:
        if which == "real":
            return [kubectl_binary(), *args]
        return [sys.executable, "-m", "kubectl", *args]

    def run(
        self,
        which: str,
        *args: str,
        stdin: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 60.0,
        fresh: bool = False,
    ) -> Result:
        if which == "mini" and not fresh:
            return self._via_worker(args, stdin, env)
        p = subprocess.run(
            self._cmd(which, args),
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            cwd=str(REPO),
            timeout=timeout,
        )
        return Result(p.returncode, p.stdout, p.stderr)

    def mini(
        self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None, fresh: bool = False
    ) -> Result:
        return self.run("mini", *args, stdin=stdin, env=env, fresh=fresh)

    def real(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Result:
        return self.run("real", *args, stdin=stdin, env=env)

    def both(self, *args: str, stdin: str | None = None) -> tuple[Result, Result]:
        """(real, mini) run at the same time, so server-side ages agree as far as possible."""
        with ThreadPoolExecutor(2) as pool:
            r = pool.submit(self.real, *args, stdin=stdin)
            m = pool.submit(self.mini, *args, stdin=stdin)
            return r.result(), m.result()

    def many(self, commands: list[tuple[str, ...]]) -> list[tuple[Result, Result]]:
        """Several read-only comparisons at once (each a (real, mini) pair)."""
        with ThreadPoolExecutor(6) as pool:
            futures = [(pool.submit(self.real, *c), pool.submit(self.mini, *c)) for c in commands]
            return [(r.result(), m.result()) for r, m in futures]

    def stream(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self._cmd("mini", args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
            cwd=str(REPO),
        )


_AGE = re.compile(r"(?<![\w./:-])(\d+[smhdy])+(\d+[smh])?(?![\w./:-])|<invalid>")


def cells(text: str) -> list[list[str]]:
    """A table as cells (split on 2+ spaces), with durations (ages) replaced by <age>."""
    out = []
    for line in text.splitlines():
        line = _AGE.sub("<age>", line)
        out.append([c for c in re.split(r"\s{2,}", line.strip())])
    return out


def normalise(text: str) -> str:
    """Durations replaced by <age> and runs of spaces collapsed: for describe comparisons."""
    return "\n".join(re.sub(r"\s+", " ", _AGE.sub("<age>", line)).rstrip() for line in text.splitlines())


@pytest.fixture(scope="module")
def pair(apiserver: APIServerProcess) -> Iterator[Pair]:
    kubectl_binary()
    home = Path(tempfile.mkdtemp(prefix="mini-kubectl-test-"))
    p = Pair(apiserver, home)
    try:
        yield p
    finally:
        p.close()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def api(apiserver: APIServerProcess) -> Iterator[httpx.Client]:
    with apiserver.client() as c:
        yield c


@pytest.fixture
def ns(api: httpx.Client) -> str:
    name = f"k-{uuid.uuid4().hex[:8]}"
    r = api.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert r.status_code == 201, r.text
    return name
