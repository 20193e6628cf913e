"""`attach` on the process runtime: the kubelet's end of a container's attach point.

    GET /attach/{namespace}/{pod}/{container}?stdin=1&stdout=1&stderr=1&tty=1   (WebSocket, streaming.py)

Kubernetes' kubelet asks the runtime (CRI Attach) to join a client to the streams of the
container's own process. Here:

  - a container with `stdin` or `tty` has an attach point kept by its shim (shim_attach.py): the
    kubelet connects to its socket, says whether the client brings stdin, and copies frames —
    the container's output to the client's stdout/stderr channels, the client's stdin, resize
    and close-stdin messages to the shim — until the shim closes (the container exited, or, for a
    container without `stdinOnce`, the client's stdin ended) or the client goes away;
  - any other container has no stdin to give, and its output is the log the shim writes: the
    session follows that log from its current end (stdout and stderr apart, a line at a time)
    until the container exits. Stdin sent to it is dropped, as containerd drops it for a
    container started without stdin.

The session always ends with a Success Status (CRI's Attach reports no exit code). Whether the
session has a terminal is the container's `tty`, not the request's (the kubelet's GetAttach); a
terminal has one output, so a request for stderr with it is refused as CRI's streaming server
refuses it ("tty and stderr cannot both be true") — which is what `kubectl attach` without `-i` gets
for a container with a terminal in Kubernetes too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubelet.proclogs import read_complete_lines
from kubelet.runs import Handle
from kubelet.shim_attach import CLOSE as SHIM_CLOSE
from kubelet.shim_attach import HEADER, HELLO, frame, short_path
from kubelet.shim_attach import RESIZE as SHIM_RESIZE
from kubelet.shim_attach import STDIN as SHIM_STDIN

if TYPE_CHECKING:
    from kubelet.streaming import Options, Session

FOLLOW_POLL = 0.1  # how often the log of a container without an attach point is read
CONNECT_TIMEOUT = 10.0  # how long a shim that is still starting may take to open its attach point


async def run_attach(session: Session, target: dict[str, Any], opts: Options) -> None:
    """Stream until the attach is over (the caller then sends the Success Status)."""
    if target["socket"]:
        await _through_shim(session, target, opts)
    else:
        await _follow_log(session, Path(target["directory"]), opts)


async def _through_shim(session: Session, target: dict[str, Any], opts: Options) -> None:
    from kubelet.streaming import CLOSE, RESIZE, STDERR, STDIN, STDOUT, messages, parse_resize

    reader, writer = await _connect(Path(target["directory"]))
    stdin = opts.stdin and target["stdin"]
    writer.write(frame(HELLO, b"1" if stdin else b"0"))

    async def output() -> None:
        while True:
            try:
                head = await reader.readexactly(HEADER)
                data = await reader.readexactly(int.from_bytes(head[1:], "big"))
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            if head[0] == STDOUT and opts.stdout:
                await session.send(STDOUT, data)
            elif head[0] == STDERR and opts.stderr:
                await session.send(STDERR, data)

    async def feed() -> None:
        async for channel, data in messages(session):
            if channel == STDIN and stdin and data:
                writer.write(frame(SHIM_STDIN, data))
            elif channel == RESIZE and target["tty"]:
                if (size := parse_resize(data)) is None:
                    continue
                writer.write(frame(SHIM_RESIZE, size[0].to_bytes(2, "big") + size[1].to_bytes(2, "big")))
            elif channel == CLOSE and data[:1] == bytes([STDIN]) and stdin:
                writer.write(frame(SHIM_CLOSE, b""))
            else:
                continue
            await writer.drain()

    tasks = [asyncio.create_task(output()), asyncio.create_task(feed())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        writer.close()  # a client that went away: the shim sees its stdin end
        with contextlib.suppress(Exception):
            await writer.wait_closed()


class NotRunning(Exception):
    """The container exited before the attach could begin."""


async def _connect(directory: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The shim's socket; a shim still starting has not made it yet (its container has not
    started either): wait for it, as long as the run is neither over nor without its shim."""
    deadline = asyncio.get_running_loop().time() + CONNECT_TIMEOUT
    while True:
        fd, path = short_path(str(directory))
        try:
            return await asyncio.open_unix_connection(path)
        except (FileNotFoundError, ConnectionRefusedError):
            if (directory / "exit.json").exists() or not Handle(directory).shim_alive() and (
                    directory / "pid.json").exists():  # fmt: skip
                raise NotRunning() from None
            if asyncio.get_running_loop().time() > deadline:
                raise
        finally:
            os.close(fd)
        await asyncio.sleep(0.02)


async def _follow_log(session: Session, directory: Path, opts: Options) -> None:
    """The run's CRI log from its current end until the container exits (see the module comment)."""
    from kubelet.streaming import STDERR, STDOUT, messages

    async def drain() -> None:
        async for _ in messages(session):
            pass  # no stdin here; the loop ends when the client goes away

    client = asyncio.create_task(drain())
    path = directory / "log"
    try:
        offset = path.stat().st_size
    except OSError:
        offset = 0
    partial: dict[bytes, bytes] = {b"stdout": b"", b"stderr": b""}
    channels = {b"stdout": STDOUT if opts.stdout else None, b"stderr": STDERR if opts.stderr else None}
    try:
        while not client.done():
            exited = (directory / "exit.json").exists()  # before reading: no line can come after
            lines, offset, drained = read_complete_lines(path, offset)
            for line in lines.splitlines():
                parts = line.split(b" ", 3)
                if len(parts) < 4 or parts[1] not in partial:
                    continue
                _, stream, tag, text = parts
                if tag == b"P":
                    partial[stream] += text
                    continue
                channel = channels[stream]
                text, partial[stream] = partial[stream] + text + b"\n", b""
                if channel is not None:
                    await session.send(channel, text)
            if exited and drained:
                return
            await asyncio.wait([client], timeout=FOLLOW_POLL)
    finally:
        client.cancel()
        await asyncio.gather(client, return_exceptions=True)
