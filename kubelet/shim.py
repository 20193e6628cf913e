"""The container shim: one small process per container, as containerd-shim or conmon is.

    python -m kubelet.shim <container-dir>

Why a shim: the kubelet must be able to die and come back while containers keep running, and
still learn their exit codes. The shim is started in its own session, so it outlives the kubelet;
it starts the container and stays its parent, so it alone can `wait()` for it. It

  1. reads spec.marshal (argv, env, cwd, hostname, cgroups, mounts) from the container directory;
  2. starts the container process in a new session (its own process group: the kubelet signals
     the whole group), inside the container's cgroups (memory, and cpu on cgroup v1), in the
     pod's network namespace, in new UTS and mount namespaces (the hostname is the pod's; /tmp is
     the container's own directory; the pod's resolv.conf and hosts file are bind-mounted over
     /etc's);
  3. copies its stdout and stderr into `log` in the CRI log format the kubelet reads back:
        2026-01-02T03:04:05.123456789Z stdout F hello
  4. when the container exits: kills what it left behind in its cgroup, writes exit.json
     (exitCode, finishedAt, reason: OOMKilled when the memory cgroup killed it) and removes the
     cgroups.

It ignores SIGTERM/SIGINT/SIGHUP: stopping a container is the kubelet's business, done to the
container's process group.
"""

from __future__ import annotations

import marshal
import os
import select
import signal
import sys
import time

# Imports are kept to builtins and tiny modules: one shim starts per container, and its start-up
# time and memory are part of every pod's (bench/runtime.py measures both). Hence marshal for the
# spec, hand-written JSON for the answers, os.path instead of pathlib, ctypes only when needed.

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
CLONE_NEWUTS = 0x04000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MS_BIND = 4096
PARTIAL_AT = 16 * 1024  # a line longer than this is written in parts (tag P), as the CRI does


def stamp(ts: float | None = None) -> str:
    ts = time.time() if ts is None else ts
    return time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(ts)) + f"{int((ts % 1) * 1e9):09d}Z"


def _isolate(spec: dict) -> None:  # type: ignore[type-arg]
    """In the child, before exec: session, cgroup, namespaces. Errors here fail the start."""
    os.setsid()
    for cgroup in (spec.get("cgroup"), spec.get("cpu_cgroup")):  # memory; cgroup v1's separate cpu one
        if cgroup:
            _write(os.path.join(cgroup, "cgroup.procs"), str(os.getpid()))
    if not spec.get("namespaces"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if spec.get("netns"):
        fd = os.open(spec["netns"], os.O_RDONLY)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {spec['netns']}")
        os.close(fd)
    if libc.unshare(CLONE_NEWUTS | CLONE_NEWNS) == 0:
        name = spec["hostname"].encode()
        libc.sethostname(name, len(name))
        libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)
        tmp = spec.get("tmp")
        if tmp:
            libc.mount(tmp.encode(), b"/tmp", None, MS_BIND, None)
        for source, target in spec.get("mounts") or ():  # the pod's resolv.conf and hosts (kubelet/dns.py)
            if libc.mount(source.encode(), target.encode(), None, MS_BIND, None) != 0:
                raise OSError(ctypes.get_errno(), f"bind mount {source} on {target}")
    if spec.get("cwd"):
        os.chdir(spec["cwd"])


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _cgroup_pids(cgroup: str) -> list[int]:
    try:
        return [int(x) for x in _read(os.path.join(cgroup, "cgroup.procs")).split()]
    except (OSError, ValueError):
        return []


def oom_killed(cgroup: str) -> bool:
    """Did the memory cgroup's OOM killer kill something? (v1 memory.oom_control, v2 memory.events)"""
    for name in ("memory.oom_control", "memory.events"):
        try:
            for line in _read(os.path.join(cgroup, name)).splitlines():
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
    def __init__(self, path: str) -> None:
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


def _write_json(path: str, doc: dict) -> None:  # type: ignore[type-arg]
    """Numbers and plain strings only (what the shim reports), written atomically."""
    body = ", ".join(f'"{k}": ' + (f'"{v}"' if isinstance(v, str) else repr(v)) for k, v in doc.items())
    _write(path + ".tmp", "{" + body + "}")
    os.replace(path + ".tmp", path)


def _exec_child(spec: dict, out_w: int, err_w: int) -> None:  # type: ignore[type-arg]
    """In the forked child: wire up stdio, isolate, exec. Never returns."""
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.closerange(3, 65536)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)  # ignored signals would stay ignored across exec
        _isolate(spec)
        os.execvpe(spec["argv"][0], spec["argv"], spec["env"])
    except BaseException as exc:  # noqa: BLE001 - report anything, then leave
        try:
            os.write(2, f"failed to start container: {exc}\n".encode())
        finally:
            os._exit(128)


def run(directory: str) -> int:
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    with open(os.path.join(directory, "spec.marshal"), "rb") as f:
        spec = marshal.load(f)
    cgroup = spec.get("cgroup") or ""
    log = LogWriter(os.path.join(directory, "log"))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        _exec_child(spec, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    _write_json(os.path.join(directory, "pid.json"), {"pid": pid, "shim": os.getpid()})
    streams = {out_r: "stdout", err_r: "stderr"}
    exited_at: float | None = None
    status: int | None = None
    while streams:
        readable, _, _ = select.select(list(streams), [], [], 0.2)
        for fd in readable:
            data = os.read(fd, 65536)
            if data:
                log.feed(streams[fd], data)
            else:
                del streams[fd]
                os.close(fd)
        if status is None:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status, exited_at = raw, time.time()
                # The container is gone: so is everything it started (a pod sandbox would do this).
                for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: kill_cgroup(cgroup)):
                    try:
                        target()
                    except (ProcessLookupError, PermissionError):
                        pass
        elif exited_at is not None and time.time() - exited_at > 2.0:
            break  # something outside our reach holds the pipes open: stop copying
    log.close()
    if status is None:
        _, status = os.waitpid(pid, 0)
        exited_at = time.time()
    exit_code = os.waitstatus_to_exitcode(status)
    exit_code = 128 - exit_code if exit_code < 0 else exit_code
    reason = "OOMKilled" if cgroup and exit_code == 137 and oom_killed(cgroup) else ""
    _write_json(os.path.join(directory, "exit.json"), {"exitCode": exit_code, "finishedAt": exited_at or time.time(),
                                          "reason": reason})  # fmt: skip
    for path in (cgroup, spec.get("cpu_cgroup") or ""):
        if not path:
            continue
        for _ in range(50):
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                kill_cgroup(path)
                time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1]))
