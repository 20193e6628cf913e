"""Run any mini-k8s component as a real process in a test, and wait for conditions properly.

The scheduler, kubelet and controller-manager are started exactly as a user starts them
(`python -m <package> --flags`), talk to a real API server, and are stopped by PID — SIGTERM for a
clean stop, SIGKILL to simulate a crash. Tests observe the cluster only through the API, the way
kubectl would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import httpx

from tests.support import scratch
from tests.support.etcd import _die_with_parent, _free_port

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    return _free_port()


FIRST_POLL, LAST_POLL = 0.05, 0.3  # wait_for's back-off


def wait_for(condition: Callable[[], T], *, timeout: float = 20.0, interval: float | None = None,
             what: str = "") -> T:  # fmt: skip
    """Poll `condition` until it returns something truthy (returned) or the deadline passes.

    Without an `interval` the polls start 50 ms apart and back off (x1.5) to one every 0.3 s:
    a condition that holds soon is seen at once, and a long wait does not spend the CPU the
    components it waits for need (most conditions are an HTTP request or a kubectl run, and a
    `make test` of three workers on two cores has no CPU to spare). An explicit `interval` is kept."""
    deadline = time.monotonic() + timeout
    pause = interval if interval is not None else FIRST_POLL
    last: object = None
    while True:
        try:
            last = condition()
        except (httpx.HTTPError, KeyError, IndexError, TypeError) as exc:  # not there yet
            last = exc
        if last and not isinstance(last, Exception):
            return last  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}: last={last!r}")
        time.sleep(pause)
        if interval is None:
            pause = min(pause * 1.5, LAST_POLL)


class ComponentProcess:
    """`python -m <module> <args>` with its log in a scratch dir (tests/support/scratch.py); optional
    /healthz readiness."""

    def __init__(self, module: str, args: list[str], *, health_port: int | None = None) -> None:
        self.module = module
        self.args = args
        self.health_port = health_port
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = Path(scratch.mkdtemp(f"mini-k8s-{module}-")) / "component.log"  # kept after stop()

    def start(self, timeout: float = 20.0) -> ComponentProcess:
        with open(self.log_path, "ab") as log:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(
                _die_with_parent([sys.executable, "-m", self.module, *self.args]),
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=str(REPO),
                env=scratch.child_env(),
            )
        if self.health_port:
            wait_for(self._healthy, timeout=timeout, what=f"{self.module} /healthz")
        return self

    def _healthy(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"{self.module} exited with {self.proc.returncode}:\n{self.log_tail()}")
        return httpx.get(f"http://127.0.0.1:{self.health_port}/healthz", timeout=1.0).status_code == 200

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.running:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def kill(self) -> None:
        if self.running:
            assert self.proc is not None
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
