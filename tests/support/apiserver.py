"""A real mini-apiserver for tests: the `mini-apiserver` process on a free loopback port.

Tests talk to it over HTTP exactly as kubectl would; nothing of the server is imported into the
test process. Each backend is exercised: the embedded SQLite store in a temporary data dir, or the
shared test etcd under a fresh key prefix (`--etcd-prefix`), so many servers can share one etcd.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

from tests.support import scratch
from tests.support.etcd import _die_with_parent, _free_port

_READY_TIMEOUT = 20.0


class APIServerProcess:
    def __init__(self, *, etcd_url: str | None = None, args: list[str] | None = None) -> None:
        self.etcd_url = etcd_url
        self.etcd_prefix = f"/t-{uuid.uuid4().hex[:10]}" if etcd_url else ""
        home = Path(scratch.mkdtemp("mini-k8s-apiserver-"))
        self.data_dir = str(home / "data")  # removed by cleanup(); the log beside it stays with the run's logs
        os.mkdir(self.data_dir, 0o700)
        self.port = _free_port()
        self.args = list(args or [])
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = home / "apiserver.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def backend(self) -> str:
        return "etcd" if self.etcd_url else "sqlite"

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "apiserver", "--port", str(self.port), "--data-dir", self.data_dir]
        if self.etcd_url:
            cmd += ["--etcd-servers", self.etcd_url, "--etcd-prefix", self.etcd_prefix]
        return cmd + self.args

    def start(self) -> APIServerProcess:
        with open(self.log_path, "ab") as log:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(
                _die_with_parent(self.command()),
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=str(Path(__file__).resolve().parents[2]),
                env=scratch.child_env(),
            )
        self.wait_ready()
        return self

    def wait_ready(self, timeout: float = _READY_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"mini-apiserver exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(self.url + "/readyz", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"mini-apiserver not ready after {timeout}s:\n{self.log_tail()}")

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def client(self, **kw: object) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=10.0, **kw)  # type: ignore[arg-type]
