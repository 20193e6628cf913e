"""Start a component as its own process; stop it by PID.

Each component runs as `<python> -m <package> <flags>`, with stdout and stderr appended to
`<data-dir>/logs/<name>.log`. Two details decide whether Ctrl-C leaves orphans behind:

- Every child gets its own session (`start_new_session`). A Ctrl-C in the terminal then reaches
  only `mini-k8s up`, which stops the children *in order* (kubelets, then the control loops, then
  the API server) instead of all of them dying at once and logging each other's disappearance.
- In the foreground, every child also asks Linux to send it SIGTERM if `mini-k8s up` itself dies
  (`prctl(PR_SET_PDEATHSIG)`), so even `kill -9` of the supervisor leaves nothing running.
  With `--detach` that is exactly what we do *not* want, so detached children skip it and
  `mini-k8s down` stops them by the PIDs in the data dir.

Stopping is SIGTERM (each component shuts down cleanly: tasks cancelled, leases released), a
deadline, then SIGKILL for whatever is still alive.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from cluster.plan import Component

# Stop order: kubelets first, then the controllers and the scheduler, the API server last.
_TIER = {"kubelet": 0, "kube-proxy": 1, "scheduler": 1, "controller-manager": 1, "cluster-dns": 1, "metrics-server": 1,
         "apiserver": 2}  # fmt: skip


def _load_libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None  # not Linux: Ctrl-C still stops everything, only `kill -9 mini-k8s` would not


# Found once, here in the parent: between fork and exec the child should do as little as possible
# (find_library even runs other programs).
_LIBC = _load_libc()


def _pdeathsig_sigterm() -> None:
    """Runs in the child between fork and exec: "SIGTERM me when my parent dies" (Linux only)."""
    prctl = getattr(_LIBC, "prctl", None)  # Linux only
    if prctl is not None:
        prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def command(component: Component) -> list[str]:
    return [sys.executable, "-m", component.module, *component.args]


def spawn(component: Component, log_path: Path, *, detach: bool) -> subprocess.Popen[bytes]:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    cmd = command(component)
    env = dict(os.environ, PYTHONUNBUFFERED="1")  # log lines reach the file as they happen
    with open(log_path, "ab") as log:  # the child keeps its own copy of the descriptor
        stamp = datetime.now().isoformat(timespec="seconds")
        log.write(f"==== {stamp} mini-k8s up: {' '.join(cmd)}\n".encode())
        log.flush()
        return subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=None if detach else _pdeathsig_sigterm,
        )


def pid_alive(pid: int) -> bool:
    """Is `pid` a live process (not a zombie)? Reaps it if it is our own exited child."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass  # not our child: ask the kernel below
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):  # no /proc (not Linux): signal 0 only tests existence
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def runs_module(pid: int, module: str) -> bool:
    """Is `pid` still `python -m <module>`? Guards against a PID reused by something else."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell (not Linux): trust the PID file
    return any(a == b"-m" and b == module.encode() for a, b in zip(argv, argv[1:], strict=False))


@dataclass
class Handle:
    """A running component: ours (`proc` set) or found through a PID file (`proc` None)."""

    name: str
    kind: str
    pid: int
    proc: subprocess.Popen[bytes] | None = None

    def alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        return pid_alive(self.pid)

    def signal(self, sig: int) -> None:
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass


def _wait_gone(handles: Sequence[Handle], timeout: float) -> list[Handle]:
    deadline = time.monotonic() + timeout
    left = [h for h in handles if h.alive()]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)  # polling interval of a wait with a deadline
        left = [h for h in left if h.alive()]
    return left


def stop_all(
    handles: Sequence[Handle], *, timeout: float = 10.0, report: Callable[[str], None] | None = None
) -> None:
    """Stop tier by tier (kubelets, controllers+scheduler, API server): SIGTERM, wait up to
    `timeout`, then SIGKILL the stragglers."""
    for tier in sorted({_TIER[h.kind] for h in handles}):
        group = [h for h in handles if _TIER[h.kind] == tier and h.alive()]
        for h in group:
            h.signal(signal.SIGTERM)
        for h in _wait_gone(group, timeout):
            if report:
                report(f"{h.name} (pid {h.pid}) did not stop within {timeout:g}s: SIGKILL")
            h.signal(signal.SIGKILL)
            _wait_gone([h], 5.0)
        if report:
            for h in group:
                report(f"stopped {h.name} (pid {h.pid})")


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def remove_containers(data_dir: Path, report: Callable[[str], None] | None = None) -> None:
    """After the kubelets stopped: remove the containers of process-runtime kubelets (their
    processes, cgroups and directories under <data-dir>/kubelet/<node>), as deleting a kind
    cluster removes its node containers. The kubelet's own cleanup does it, in a process of its
    own (components never import each other)."""
    base = data_dir / "kubelet"
    if not base.is_dir():
        return
    for root in sorted(p for p in base.iterdir() if (p / "containers").is_dir()):
        cmd = [sys.executable, "-m", "kubelet.cleanup", "--root-dir", str(root)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if report:
            report(f"{root.name}: {(done.stdout or done.stderr).strip()}")


def _flag_value(args: list[str], flag: str) -> str:
    """The last value given to `flag` (as `--flag value` or `--flag=value`), or ""."""
    value = ""
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(flag + "="):
            value = arg.split("=", 1)[1]
    return value


def remove_proxy_rules(components: list[dict[str, Any]], report: Callable[[str], None] | None = None) -> None:
    """After kube-proxy stopped: its own exit removes its nftables table and undoes its sysctls and
    routes, but a SIGKILL skips that, so `down` runs `mini-kube-proxy --cleanup` with the table it was
    started with (`--kube-proxy-arg=--nftables-table=…`, else the default)."""
    for c in components:
        if c.get("kind") != "kube-proxy":
            continue
        table = _flag_value(list(c.get("args") or []), "--nftables-table")
        command = [sys.executable, "-m", "kube_proxy", "--cleanup", *(["--nftables-table", table] if table else [])]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if report and done.returncode != 0:
            report(f"kube-proxy cleanup: {(done.stderr or done.stdout).strip()}")
