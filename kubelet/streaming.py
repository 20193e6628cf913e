"""The kubelet's streaming endpoints: `exec` and `attach`, over WebSocket.

    GET /exec/{namespace}/{pod}/{container}?command=sh&command=-c&command=...&stdin=1&stdout=1&stderr=1&tty=1
    GET /attach/{namespace}/{pod}/{container}?stdin=1&stdout=1&tty=1

The API server's `pods/exec` relays kubectl's WebSocket here (apiserver/handlers/streaming.py).
The protocol is Kubernetes' remote command protocol as kubectl 1.32 speaks it over WebSocket:
subprotocol `v5.channel.k8s.io` (or `v4.channel.k8s.io`), binary messages whose first byte is
the channel:

    0 stdin      client → us       1 stdout   us → client        2 stderr   us → client
    3 error      us → client: one `Status` when the command is over — {"status":"Success"}, or
                 Failure with reason NonZeroExitCode and a cause {"reason":"ExitCode","message":"3"},
                 which kubectl turns into its own exit code; any other Failure is printed as is
    4 resize     client → us: {"Width":80,"Height":24} (the terminal's size, with tty)
    255 close    client → us (v5 only): [255, 0] = no more stdin (how `kubectl exec -i … -- cat` ends)

As Kubernetes' kubelet does, the lowest writable channel gets an empty message at once (the
client learns the connection stands), and the connection closes after the Status.

How a command runs "inside the container" with the process runtime: the container's process
(pid.json, written by the shim) is the anchor. `nsenter` joins its UTS, mount and network
namespaces — so the hostname is the pod's, /etc/resolv.conf and the volumes are the container's,
and a container with its own root (kubelet/shim.py) is entered at that root — and starts the
command with the container's environment (spec.marshal) in its working directory; a tiny `sh`
puts itself into the container's cgroups first (memory limit, CPU; killed with the container).
With `tty` the command gets a pseudo-terminal (os.openpty; `setsid -c` makes it the controlling
terminal) whose size follows the resize channel (TIOCSWINSZ) and TERM=xterm, as containerd sets.
Without it, stdout and stderr stay apart.

`attach` joins the client to the streams of the container's own process (attach.py: the attach
point of the container's shim, or its log), with the container's `tty` deciding whether there is
a terminal; it ends with a Success Status when the container exits.

Ephemeral containers (`kubectl debug`) are found like the others, by name.
The simulated runtime runs no processes: it answers both with a Failure Status that says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from kubelet.shim_attach import resize

if TYPE_CHECKING:
    from kubelet.kubelet import Kubelet

log = logging.getLogger("kubelet.streaming")

V5, V4 = "v5.channel.k8s.io", "v4.channel.k8s.io"
PROTOCOLS = (V5, V4)
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
CHUNK = 32 * 1024  # client-go's WebSocket buffer
DRAIN = 2.0  # seconds to wait for the output after the command exited (a child may hold it open)
SIMULATED = "the simulated runtime runs no processes; start the cluster with --runtime process"
TRUE = ("1", "true", "True")
# joins the cgroups named before "--" (best effort: a cgroup that is gone is skipped), then execs the rest
JOIN_CGROUPS = 'while [ "$1" != -- ]; do { echo $$ >"$1"; } 2>/dev/null; shift; done; shift; exec "$@"'


@dataclass
class Options:
    command: list[str]
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool


def parse_options(query: Any, *, exec_: bool) -> Options:
    """The query of /exec or /attach, checked as Kubernetes' remotecommand.NewOptions does."""
    flag = {name: query.get(name, "") in TRUE for name in ("stdin", "stdout", "stderr", "tty")}
    if flag["tty"] and flag["stderr"]:
        flag["stderr"] = False  # a terminal has one output; Kubernetes drops stderr the same way
    if not (flag["stdin"] or flag["stdout"] or flag["stderr"]):
        raise ValueError("you must specify at least 1 of stdin, stdout, stderr")
    command = list(query.getlist("command")) if exec_ else []
    if exec_ and not command:
        raise ValueError("you must specify at least one command for the container")
    return Options(command, flag["stdin"], flag["stdout"], flag["stderr"], flag["tty"])


def negotiate(offered: list[str]) -> str | None:
    """The first subprotocol the client offers that we speak (kubectl 1.32 offers only v5)."""
    return next((p for p in offered if p in PROTOCOLS), None)


def status_success() -> dict[str, Any]:
    return {"metadata": {}, "status": "Success"}


def status_exit(code: int, command: list[str]) -> dict[str, Any]:
    """What kubectl turns into `command terminated with exit code N` and its own exit code N.
    (A StatusCause's `type` is spelled `reason` in JSON.)"""
    return {
        "metadata": {}, "status": "Failure",
        "message": f"command terminated with non-zero exit code: error executing command [{' '.join(command)}], "
                   f"exit code {code}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }  # fmt: skip


def status_internal(message: str) -> dict[str, Any]:
    """Kubernetes' apierrors.NewInternalError, as the kubelet sends it when the exec itself fails."""
    return {
        "metadata": {}, "status": "Failure", "message": f"Internal error occurred: {message}",
        "reason": "InternalError", "details": {"causes": [{"message": message}]}, "code": 500,
    }  # fmt: skip


class Session:
    """One accepted WebSocket: framed, serialized writes; the v5 close signal."""

    def __init__(self, ws: WebSocket, protocol: str) -> None:
        self.ws = ws
        self.protocol = protocol
        self.lock = asyncio.Lock()
        self.open = True

    async def send(self, channel: int, data: bytes = b"") -> None:
        if not self.open:
            return
        async with self.lock:
            try:
                await self.ws.send_bytes(bytes([channel]) + data)
            except (WebSocketDisconnect, RuntimeError, OSError):
                self.open = False

    async def finish(self, status: dict[str, Any]) -> None:
        await self.send(ERROR, json.dumps(status, separators=(",", ":")).encode())
        if self.open:
            self.open = False
            with contextlib.suppress(Exception):
                await self.ws.close(1000)


async def serve(kubelet: Kubelet, ws: WebSocket, action: str) -> None:
    """/exec and /attach (authentication and authorization are done: server.py)."""
    p = ws.path_params
    namespace, pod, container = p["namespace"], p["pod"], p["container"]
    try:
        opts = parse_options(ws.query_params, exec_=action == "exec")
    except ValueError as exc:
        await deny(ws, 400, str(exc))
        return
    protocol = negotiate(list(ws.scope.get("subprotocols") or []))
    if protocol is None:
        await deny(ws, 400, f"unable to upgrade: none of the subprotocols offered is supported: {', '.join(PROTOCOLS)}")
        return
    worker = kubelet.workers.get(f"{namespace}/{pod}")
    if worker is None:
        await deny(ws, 404, "pod does not exist")
        return
    c = next((c for c in [*worker.inits, *worker.mains, *worker.ephemerals] if c.name == container), None)
    if c is None:
        await deny(ws, 404, f'container not found ("{container}")')
        return
    await ws.accept(subprotocol=protocol)
    session = Session(ws, protocol)
    # the lowest writable channel learns at once that the connection stands (as Kubernetes does)
    await session.send(STDOUT if opts.stdout else STDERR if opts.stderr else ERROR)
    target_of = getattr(kubelet.runtime, "exec_target", None)
    if target_of is None:
        await session.finish(status_internal(f"error executing command in container: {SIMULATED}"))
        return
    if action == "attach":
        await serve_attach(kubelet, session, c, container, opts)
        return
    target = target_of(c)
    if target is None:
        await session.finish(status_internal(
            f"error executing command in container: container {container} is not running"))  # fmt: skip
        return
    try:
        code = await run_exec(session, target, opts)
    except OSError as exc:
        await session.finish(status_internal(f"error executing command in container: {exc}"))
        return
    await session.finish(status_success() if code == 0 else status_exit(code, opts.command))


async def serve_attach(kubelet: Kubelet, session: Session, c: Any, container: str, opts: Options) -> None:
    """The checks of the kubelet's GetAttach and CRI's streaming server, then attach.py."""
    from kubelet.attach import NotRunning, run_attach

    target = kubelet.runtime.attach_target(c)  # type: ignore[attr-defined]
    if target is None:  # the kubelet finds only running containers
        await session.finish(status_internal(f'container not found ("{container}")'))
        return
    if target["tty"] and opts.stderr:  # the container's tty, not the request's (a terminal has no stderr)
        await session.finish(status_internal("tty and stderr cannot both be true"))
        return
    try:
        await run_attach(session, target, opts)
    except NotRunning:
        await session.finish(status_internal(f'container not found ("{container}")'))
        return
    except OSError as exc:
        await session.finish(status_internal(f"error attaching to container: {exc}"))
        return
    await session.finish(status_success())


async def deny(ws: WebSocket, code: int, message: str) -> None:
    """Refuse before the upgrade, with the plain-text answer Kubernetes' kubelet gives."""
    from starlette.responses import PlainTextResponse

    await ws.send_denial_response(PlainTextResponse(message, status_code=code))


def exec_argv(target: dict[str, Any], command: list[str], tty: bool) -> list[str]:
    """sh (join the cgroups) → [setsid -c: the terminal controls it] → nsenter (the namespaces) → command."""
    sh, nsenter, setsid = (shutil.which(x) or f"/usr/bin/{x}" for x in ("sh", "nsenter", "setsid"))
    argv = [sh, "-c", JOIN_CGROUPS, "exec", *(os.path.join(g, "cgroup.procs") for g in target["cgroups"]), "--"]
    if tty:
        argv += [setsid, "-c"]
    return argv + [nsenter, "-t", str(target["pid"]), "-u", "-m", "-n", f"--wdns={target['cwd']}", "--", *command]


async def run_exec(session: Session, target: dict[str, Any], opts: Options) -> int:
    """Run the command in the container, copy its streams to and from the client; its exit code."""
    env = dict(target["env"])
    if opts.tty:
        env.setdefault("TERM", "xterm")
    argv = exec_argv(target, opts.command, opts.tty)
    loop = asyncio.get_running_loop()
    if opts.tty:
        master, slave = os.openpty()
        try:
            proc = await asyncio.create_subprocess_exec(*argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                                        cwd="/")  # fmt: skip
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        outputs = [asyncio.create_task(_pump_fd(session, master, STDOUT if opts.stdout else None, loop))]
        feeder = asyncio.create_task(_feed_tty(session, master, proc, opts))
    else:
        proc = await asyncio.create_subprocess_exec(
            *argv, env=env, cwd="/", start_new_session=True,
            stdin=asyncio.subprocess.PIPE if opts.stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if opts.stdout else asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE if opts.stderr else asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        outputs = [asyncio.create_task(_pump_stream(session, s, ch))
                   for s, ch in ((proc.stdout, STDOUT), (proc.stderr, STDERR)) if s is not None]  # fmt: skip
        feeder = asyncio.create_task(_feed_pipe(session, proc))
    waiter = asyncio.create_task(proc.wait())
    try:
        await asyncio.wait([waiter, feeder], return_when=asyncio.FIRST_COMPLETED)
        if not waiter.done():  # the client went away: so does the command
            _kill(proc)
            await waiter
        if outputs:
            _, late = await asyncio.wait(outputs, timeout=DRAIN)
            for task in late:
                task.cancel()
    finally:
        feeder.cancel()
        for task in outputs:
            task.cancel()
        await asyncio.gather(feeder, *outputs, return_exceptions=True)
        if opts.tty:
            with contextlib.suppress(OSError):
                os.close(master)
        if proc.returncode is None:
            _kill(proc)
            await proc.wait()
    code = proc.returncode or 0
    return 128 - code if code < 0 else code


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


async def _pump_stream(session: Session, stream: asyncio.StreamReader, channel: int) -> None:
    while data := await stream.read(CHUNK):
        await session.send(channel, data)


async def _pump_fd(session: Session, fd: int, channel: int | None, loop: asyncio.AbstractEventLoop) -> None:
    """A pty's master side: read until EIO (no process holds the terminal any more)."""
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def readable() -> None:
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            loop.remove_reader(fd)
        queue.put_nowait(data)

    loop.add_reader(fd, readable)
    try:
        while data := await queue.get():
            if channel is not None:
                await session.send(channel, data)
    finally:
        loop.remove_reader(fd)


async def messages(session: Session) -> Any:
    """The client's messages as (channel, data) until it closes the connection."""
    while True:
        try:
            message = await session.ws.receive()
        except (RuntimeError, OSError):
            return
        if message["type"] == "websocket.disconnect":
            session.open = False
            return
        raw = message.get("bytes")
        if raw is None:
            raw = (message.get("text") or "").encode()
        if raw:
            yield raw[0], raw[1:]


async def _feed_pipe(session: Session, proc: asyncio.subprocess.Process) -> None:
    stdin = proc.stdin
    async for channel, data in messages(session):
        if stdin is None:
            continue
        try:
            if channel == STDIN and data:
                stdin.write(data)
                await stdin.drain()
            elif channel == CLOSE and data[:1] == bytes([STDIN]):
                stdin.close()
                stdin = None
        except (BrokenPipeError, ConnectionResetError):
            stdin = None


def parse_resize(data: bytes) -> tuple[int, int] | None:
    """A resize message's {"Width":80,"Height":24} as (width, height); None for anything else
    (Kubernetes' TerminalSize has two uint16: a size outside 0..65535 is not one)."""
    try:
        size = json.loads(data)
        width, height = int(size.get("Width") or 0), int(size.get("Height") or 0)
    except (ValueError, TypeError, AttributeError, OverflowError):  # OverflowError: int(1e400)
        return None
    if not (0 <= width <= 0xFFFF and 0 <= height <= 0xFFFF):
        return None
    return width, height


async def _feed_tty(session: Session, master: int, proc: asyncio.subprocess.Process, opts: Options) -> None:
    async for channel, data in messages(session):
        if channel == STDIN and data and opts.stdin:
            await _write_all(master, data)
        elif channel == RESIZE:
            size = parse_resize(data)
            if size is None:
                log.debug("ignoring a bad resize message %r", data)
            else:
                resize(master, *size)  # TIOCSWINSZ, as the shim does for an attached terminal
        elif channel == CLOSE and data[:1] == bytes([STDIN]):
            with contextlib.suppress(OSError):
                await _write_all(master, b"\x04")  # end of input on a terminal: ^D


async def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await asyncio.sleep(0.005)
