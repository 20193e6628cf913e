"""The container shim: one small process per container, as containerd-shim or conmon is.

    python -m kubelet.shim <container-dir>     (the kubelet: SHIM_COMMAND in process.py)

Why a shim: the kubelet must be able to die and come back while containers keep running, and
still learn their exit codes. The shim is started in its own session, so it outlives the kubelet;
it starts the container and stays its parent, so it alone can `wait()` for it. It

  1. reads spec.marshal (argv, env, cwd, hostname, cgroups, mounts) from the container directory;
  2. starts the container process in a new session (its own process group: the kubelet signals
     the whole group), inside the container's cgroups (memory, and cpu on cgroup v1), in the
     pod's network namespace, in new UTS and mount namespaces (the hostname is the pod's; /tmp is
     the container's own directory; the pod's resolv.conf and hosts file are bind-mounted over
     /etc's); a container with volumes gets its own root (below);
  3. copies its stdout and stderr into `log` in the CRI log format the kubelet reads back:
        2026-01-02T03:04:05.123456789Z stdout F hello
  4. when the container exits: kills what it left behind in its cgroup, writes exit.json
     (exitCode, finishedAt, reason: OOMKilled when the memory cgroup killed it) and removes the
     cgroups.

A container with `stdin: true` or `tty: true` also gets an attach point (shim_attach.py): its stdin
is a pipe the shim holds open (with `tty`, a pseudo-terminal is its stdin, stdout and stderr: the
shim holds the master, the log gets the terminal's output as stdout), and `attach.sock` lets the
kubelet attach to it. Other containers get /dev/null as stdin and nothing new, as before. If the
attach point cannot be made (the socket cannot be bound or protected), the container is not
started: such a container could never be given its input. The shim writes `failed to start
container: cannot make its attach point ...` to its log (stderr) and exit.json with exit code 128
and reason StartError — what Kubernetes reports for a container containerd failed to start —
so `kubectl get pod` shows it terminated (then restarted per restartPolicy) and `kubectl logs`
says why.

It ignores SIGTERM/SIGINT/SIGHUP: stopping a container is the kubelet's business, done to the
container's process group.

A container with volumeMounts (spec "root" and "volumes", kubelet/volumes.py) must see them at
paths the host usually lacks (/data, /etc/config) while the host stays as it was. So, in its
private mount namespace only, the shim makes it a root of its own: an overlay with the host's
root file system as the read-only lower layer and upper/work directories in the container
directory; the host's other mounts (/proc, /sys, /dev, /run, the file system of the data dir ...,
each with what is mounted below it) bound into it; then pivot_root into it, with the old root
kept at /.mini-k8s-old-root just long enough to bind the volumes, /tmp, resolv.conf and hosts
from it. A missing mountPath is created inside the new root, i.e. in the upper directory; one
that would have to be created on another of the host's file systems is refused. The mount
namespace dies with the container; the upper directory goes with the container directory.
Containers without volumeMounts keep the plain path above (no overlay).
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` wraps it in enums, which cost ~4 ms to import
import marshal
import os
import select
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
MS_RDONLY = 1
MS_REMOUNT = 32
MNT_DETACH = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}  # Linux syscall tables
OLD_ROOT = "/.mini-k8s-old-root"
PARTIAL_AT = 16 * 1024  # a line longer than this is written in parts (tag P), as the CRI does


def stamp(ts: float | None = None) -> str:
    ts = time.time() if ts is None else ts
    return time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(ts)) + f"{int((ts % 1) * 1e9):09d}Z"


def _isolate(spec: dict) -> None:  # type: ignore[type-arg]
    """In the child, before exec: session, cgroup, namespaces. Errors here fail the start."""
    os.setsid()
    if spec.get("tty"):  # the pty's slave (fds 0-2) becomes the new session's controlling terminal
        import fcntl
        import termios

        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
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
    if spec.get("root"):  # volumes: its own root, or no start at all
        if libc.unshare(CLONE_NEWUTS | CLONE_NEWNS) != 0:
            raise OSError(ctypes.get_errno(), "unshare the mount namespace")
        name = spec["hostname"].encode()
        libc.sethostname(name, len(name))
        _enter_root(libc, spec)
    elif libc.unshare(CLONE_NEWUTS | CLONE_NEWNS) == 0:
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


def _enter_root(libc, spec: dict) -> None:  # type: ignore[no-untyped-def,type-arg]
    """The container's own root (see the module comment), then its volumes. Errors fail the start."""
    import ctypes

    def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
        if libc.mount(source.encode(), target.encode(), fstype and fstype.encode(), flags, data and data.encode()):
            errno = ctypes.get_errno()
            raise OSError(errno, f"mount {source} on {target}: {os.strerror(errno)}")

    root = spec["root"]
    new = root["mnt"]
    mount("none", "/", None, MS_REC | MS_PRIVATE)
    tops = _top_mounts(new)
    mount("overlay", new, "overlay", 0, f"lowerdir=/,upperdir={root['upper']},workdir={root['work']}")
    for point in tops:  # best effort: a mount point the root file system lacks stays out
        libc.mount(point.encode(), (new + point).encode(), None, MS_BIND | MS_REC, None)
    os.mkdir(new + OLD_ROOT, 0o700)
    if libc.syscall(SYS_PIVOT_ROOT.get(os.uname().machine, 155), new.encode(), (new + OLD_ROOT).encode()) != 0:
        raise OSError(ctypes.get_errno(), "pivot_root")
    os.chdir("/")
    top = os.stat("/").st_dev
    tmp = spec.get("tmp")
    if tmp:
        mount(OLD_ROOT + tmp, "/tmp", None, MS_BIND)
    for source, target, read_only in spec.get("volumes") or ():
        _make_target(target, os.path.isdir(OLD_ROOT + source), top, bool(tmp))
        mount(OLD_ROOT + source, target, None, MS_BIND | MS_REC)
        if read_only:
            mount("none", target, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    for source, target in spec.get("mounts") or ():  # resolv.conf, hosts: unless a volume hides /etc's
        if os.path.isfile(target):
            mount(OLD_ROOT + source, target, None, MS_BIND)
    if libc.umount2(OLD_ROOT.encode(), MNT_DETACH) != 0:
        raise OSError(ctypes.get_errno(), "unmount the old root")
    os.rmdir(OLD_ROOT)


def _top_mounts(skip: str) -> list[str]:
    """The mount points right below the root mount (each is bound with what is mounted below it)."""
    rows = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = fields[4]
            if "\\" in point:
                for escaped, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
                    point = point.replace(escaped, char)
            rows.append((fields[0], fields[1], point))
    root = [mount_id for mount_id, _, point in rows if point == "/"][-1]
    return [p for _, parent, p in rows if parent == root and p != "/" and p != skip and not p.startswith(skip + "/")]


def _make_target(target: str, directory: bool, top: int, private_tmp: bool) -> None:
    """Create a missing mountPath inside the new root: only on the overlay (or the container's own
    /tmp), never on one of the host's other file systems bound into it."""
    if os.path.lexists(target):
        return
    parts = [p for p in target.split("/") if p]
    path = ""
    for i, part in enumerate(parts):
        parent, path = path or "/", path + "/" + part
        if os.path.lexists(path):
            continue
        real = os.path.realpath(parent)
        if os.stat(parent).st_dev != top and not (private_tmp and (real == "/tmp" or real.startswith("/tmp/"))):
            raise OSError(f"mountPath {target}: {path} would have to be created on the host's file system "
                          f"mounted at or above {real}; mini-k8s leaves the host as it is")  # fmt: skip
        if i == len(parts) - 1 and not directory:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
        else:
            os.mkdir(path, 0o755)


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


def _exec_child(spec: dict, in_r: int | None, out_w: int, err_w: int) -> None:  # type: ignore[type-arg]
    """In the forked child: wire up stdio, isolate, exec. Never returns."""
    try:
        os.dup2(os.open(os.devnull, os.O_RDONLY) if in_r is None else in_r, 0)
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
    in_r = in_w = None
    if spec.get("tty"):  # stdin, stdout and stderr are one terminal; the shim holds its master
        master, in_r = os.openpty()
        out_r, out_w, err_r, err_w = master, in_r, -1, in_r
    else:
        if spec.get("stdin"):
            in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
    attach = None
    if spec.get("stdin") or spec.get("tty"):  # only these pay for an attach point (shim_attach.py)
        from kubelet.shim_attach import SOCKET, AttachPoint

        # before the container starts: an attach as early as the kubelet can make misses nothing
        try:
            attach = AttachPoint(directory, out_r if spec.get("tty") else in_w, bool(spec.get("tty")),  # type: ignore[arg-type]
                                 bool(spec.get("stdin_once")))  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - whatever it is, the start fails visibly (see _start_failed)
            for fd in {in_r, in_w, out_r, out_w, err_r, err_w} - {None, -1}:
                os.close(fd)  # type: ignore[arg-type]
            return _start_failed(directory, spec, log, f"cannot make its attach point ({SOCKET}): {exc}")
    pid = os.fork()
    if pid == 0:
        _exec_child(spec, in_r, out_w, err_w)
    for fd in {out_w, err_w, in_r} - {None, -1}:
        os.close(fd)  # type: ignore[arg-type]
    # The child joins its cgroups itself before exec (_isolate); joining it from here too, before
    # pid.json is written, means whoever reads pid.json finds the process in its cgroups already.
    for group in (cgroup, spec.get("cpu_cgroup")):
        if group:
            try:
                _write(os.path.join(group, "cgroup.procs"), str(pid))
            except OSError:  # gone already, or refused: the child's own write decides
                pass
    _write_json(os.path.join(directory, "pid.json"), {"pid": pid, "shim": os.getpid()})
    streams = {out_r: "stdout", err_r: "stderr"} if err_r >= 0 else {out_r: "stdout"}
    exited_at: float | None = None
    status: int | None = None
    writable: list[int] = []
    while streams:
        if attach is None:
            readable, writable = select.select(list(streams), [], [], 0.2)[0], []
        else:
            readable, writable, _ = select.select(list(streams) + attach.readers(), attach.writers(), [], 0.2)
        for fd in readable:
            if fd not in streams:
                attach.readable(fd)  # type: ignore[union-attr]
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:  # a pty's master: EIO once no process holds the terminal
                data = b""
            if data:
                log.feed(streams[fd], data)
                if attach is not None:
                    attach.output(streams[fd], data)
            else:
                del streams[fd]
                if attach is None or fd != out_r or not spec.get("tty"):
                    os.close(fd)
        if writable:
            attach.writable(writable)  # type: ignore[union-attr]
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
    if attach is not None:  # every attached client's session ends with the container
        attach.close()
        if spec.get("tty"):
            os.close(out_r)
    if status is None:
        _, status = os.waitpid(pid, 0)
        exited_at = time.time()
    exit_code = os.waitstatus_to_exitcode(status)
    exit_code = 128 - exit_code if exit_code < 0 else exit_code
    reason = "OOMKilled" if cgroup and exit_code == 137 and oom_killed(cgroup) else ""
    _write_json(os.path.join(directory, "exit.json"), {"exitCode": exit_code, "finishedAt": exited_at or time.time(),
                                          "reason": reason})  # fmt: skip
    _remove_cgroups(spec)
    return 0


def _start_failed(directory: str, spec: dict, log: LogWriter, why: str) -> int:  # type: ignore[type-arg]
    """The shim could not prepare the container: it is not started, and it ends as a failed start
    does in Kubernetes with containerd — terminated, exit code 128, reason StartError — with the
    cause in the container's log (what `kubectl logs` shows; the same words a failed exec
    writes there) and in shim.log. The kubelet reads exit.json as for any run, so restartPolicy
    and CrashLoopBackOff apply as usual."""
    message = f"failed to start container: {why}"
    log.feed("stderr", message.encode() + b"\n")
    log.close()
    os.write(2, message.encode() + b"\n")  # shim.log
    _write_json(os.path.join(directory, "exit.json"), {"exitCode": 128, "finishedAt": time.time(),
                                                       "reason": "StartError"})  # fmt: skip
    _remove_cgroups(spec)
    return 1


def _remove_cgroups(spec: dict) -> None:  # type: ignore[type-arg]
    """The container's cgroups, once it is gone (killing what is still left in them)."""
    for path in (spec.get("cgroup") or "", spec.get("cpu_cgroup") or ""):
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


if __name__ == "__main__":
    sys.exit(run(sys.argv[1]))
