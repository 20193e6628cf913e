"""The container shim: one small process per container, as containerd-shim or conmon is.

    python -m kubelet.shim <container-dir>

Why a shim: the kubelet must be able to die and come back while containers keep running, and
still learn their exit codes. The shim is started in its own session, so it outlives the kubelet;
it starts the container and stays its parent, so it alone can `wait()` for it. It

  1. reads spec.json (argv, env, cwd, hostname, cgroup) from the container directory;
  2. starts the container process in a new session (its own process group: the kubelet signals
     the whole group), inside the container's cgroup, in new UTS and mount namespaces (the
     hostname is the pod name; /tmp is the container's own directory);
  3. copies its stdout and stderr into `log` in the CRI log format the kubelet reads back:
        2026-01-02T03:04:05.123456789Z stdout F hello
  4. when the container exits: kills what it left behind in its cgroup, writes exit.json
     (exitCode, finishedAt, reason: OOMKilled when the memory cgroup killed it) and removes the
     cgroup.

It ignores SIGTERM/SIGINT/SIGHUP: stopping a container is the kubelet's business, done to the
container's process group.
"""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MS_BIND = 4096
PARTIAL_AT = 16 * 1024  # a line longer than this is written in parts (tag P), as the CRI does


def stamp(ts: float | None = None) -> str:
    ts = time.time() if ts is None else ts
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int((ts % 1) * 1e9):09d}Z"


def _isolate(spec: dict[str, Any]) -> None:
    """In the child, before exec: session, cgroup, namespaces. Errors here fail the start."""
    os.setsid()
    cgroup = spec.get("cgroup")
    if cgroup:
        Path(cgroup, "cgroup.procs").write_text(str(os.getpid()))
    libc = ctypes.CDLL(None, use_errno=True)
    if spec.get("namespaces") and libc.unshare(CLONE_NEWUTS | CLONE_NEWNS) == 0:
        name = spec["hostname"].encode()
        libc.sethostname(name, len(name))
        libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)
        tmp = spec.get("tmp")
        if tmp:
            libc.mount(tmp.encode(), b"/tmp", None, MS_BIND, None)
    if spec.get("cwd"):
        os.chdir(spec["cwd"])


def _cgroup_pids(cgroup: str) -> list[int]:
    try:
        return [int(x) for x in Path(cgroup, "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def oom_killed(cgroup: str) -> bool:
    """Did the memory cgroup's OOM killer kill something? (v1 memory.oom_control, v2 memory.events)"""
    for name in ("memory.oom_control", "memory.events"):
        try:
            for line in Path(cgroup, name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value or 0) > 0:
                    return True
        except (OSError, ValueError):
            continue
    return False


def kill_cgroup(cgroup: str, sig: int = signal.SIGKILL) -> None:
    for pid in _cgroup_pids(cgroup):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


class LogWriter:
    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
        self.partial: dict[str, bytes] = {"stdout": b"", "stderr": b""}

    def feed(self, stream: str, data: bytes) -> None:
        buf = self.partial[stream] + data
        lines = buf.split(b"\n")
        self.partial[stream] = lines.pop()
        out = [f"{stamp()} {stream} F ".encode() + line + b"\n" for line in lines]
        while len(self.partial[stream]) > PARTIAL_AT:
            part, self.partial[stream] = self.partial[stream][:PARTIAL_AT], self.partial[stream][PARTIAL_AT:]
            out.append(f"{stamp()} {stream} P ".encode() + part + b"\n")
        if out:
            os.write(self.fd, b"".join(out))

    def close(self) -> None:
        for stream, rest in self.partial.items():
            if rest:
                os.write(self.fd, f"{stamp()} {stream} F ".encode() + rest + b"\n")
        os.close(self.fd)


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, path)


def run(directory: Path) -> int:
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    spec = json.loads((directory / "spec.json").read_text())
    cgroup = spec.get("cgroup") or ""
    log = LogWriter(directory / "log")
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        child = subprocess.Popen(
            spec["argv"], env=spec["env"], stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w,
            preexec_fn=lambda: _isolate(spec), close_fds=True,
            restore_signals=True,
        )  # fmt: skip
    except OSError as exc:
        log.feed("stderr", f"{exc}\n".encode())
        log.close()
        _write_json(directory / "exit.json", {"exitCode": 128, "finishedAt": time.time(), "reason": "StartError"})
        return 0
    finally:
        os.close(out_w)
        os.close(err_w)
    _write_json(directory / "pid.json", {"pid": child.pid, "shim": os.getpid()})
    sel = selectors.DefaultSelector()
    sel.register(out_r, selectors.EVENT_READ, "stdout")
    sel.register(err_r, selectors.EVENT_READ, "stderr")
    exited_at: float | None = None
    while sel.get_map():
        for key, _ in sel.select(timeout=0.2):
            data = os.read(key.fd, 65536)
            if data:
                log.feed(key.data, data)
            else:
                sel.unregister(key.fd)
                os.close(key.fd)
        if exited_at is None and child.poll() is not None:
            exited_at = time.time()
            # The container is gone: so is everything it started (a pod sandbox would do this).
            for target in (lambda: os.killpg(child.pid, signal.SIGKILL), lambda: kill_cgroup(cgroup)):
                try:
                    target()
                except (ProcessLookupError, PermissionError):
                    pass
        elif exited_at is not None and time.time() - exited_at > 2.0:
            break  # something outside our reach holds the pipes open: stop copying
    log.close()
    code = child.wait()
    exit_code = 128 - code if code < 0 else code
    reason = "OOMKilled" if cgroup and exit_code == 137 and oom_killed(cgroup) else ""
    _write_json(directory / "exit.json", {"exitCode": exit_code, "finishedAt": exited_at or time.time(),
                                          "reason": reason})  # fmt: skip
    if cgroup:
        for _ in range(50):
            try:
                os.rmdir(cgroup)
                break
            except FileNotFoundError:
                break
            except OSError:
                kill_cgroup(cgroup)
                time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1])))
