"""The client side of `pods/exec` and `pods/attach`: kubectl 1.32's WebSocket remote command protocol.

    GET /api/v1/namespaces/<ns>/pods/<pod>/exec?command=ls&command=-l&container=c&stdin=true&stdout=true
    Upgrade: websocket; Sec-WebSocket-Protocol: v5.channel.k8s.io

Every message is binary, its first byte the channel: 0 stdin (ours), 1 stdout, 2 stderr, 3 the
final Status, 4 resize (ours, `{"Width":…,"Height":…}`), 255 close (ours: `[255, 0]` = no more stdin).
The Status decides the exit code as client-go's errorDecoderV4 does: Success → 0; reason
NonZeroExitCode → the code in its ExitCode cause ("command terminated with exit code N" on
stderr, as kubectl prints it); any other Failure → its message, exit 1. A refused upgrade carries
a Status too (Forbidden, NotFound …): as kubectl then retries with SPDY's POST and reports *that*
answer (`create pods/exec` is what RBAC checks there), the same POST is sent and its Status shown
as `Error from server (…)`.

With a terminal (`-t` with `-i` on a real tty) the local terminal goes raw for the session,
its size is sent first and again on every SIGWINCH, and stderr is not asked for (a terminal has
one output), as kubectl does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from api.errors import StatusError
from client.rest import resource_path
from kubectl.cli import CmdError, Session

PROTOCOL = "v5.channel.k8s.io"
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


@dataclass
class Outcome:
    code: int  # what kubectl exits with
    message: str = ""  # what it prints on stderr (already worded), "" for nothing


def decode_status(raw: bytes) -> Outcome:
    """client-go's errorDecoderV4, then kubectl's wording of the error."""
    try:
        status = json.loads(raw)
    except ValueError:
        return Outcome(1, f"error: error stream protocol error: invalid JSON in {raw.decode(errors='replace')!r}")
    if status.get("status") == "Success":
        return Outcome(0)
    if status.get("status") != "Failure":
        return Outcome(1, "error: error stream protocol error: unknown error")
    if status.get("reason") == "NonZeroExitCode":
        for cause in (status.get("details") or {}).get("causes") or []:
            if cause.get("reason") == "ExitCode":
                code = int(cause.get("message") or 1)
                return Outcome(code, f"command terminated with exit code {code}")
        return Outcome(1, "error: error stream protocol error: no ExitCode cause given")
    return Outcome(1, f"error: {status.get('message') or ''}")


async def stream(
    s: Session, pod: str, subresource: str, params: list[tuple[str, str]], *,
    stdin: Callable[[], bytes] | None, stdout: Callable[[bytes], None], stderr: Callable[[bytes], None] | None,
    tty: bool = False,
) -> Outcome:  # fmt: skip
    """One exec/attach session. `stdin` is a blocking read (run in a thread; b"" = end), the
    sinks are called with each chunk in order."""
    import websockets

    client = s.client
    base = client.base_url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
    url = base + resource_path("pods", s.namespace, pod, subresource) + "?" + urlencode(params)
    headers = {k: v for k, v in client._headers.items() if k.lower() not in ("accept",)}
    try:
        conn = await websockets.connect(
            url, subprotocols=[PROTOCOL], additional_headers=headers,  # type: ignore[list-item]
            ssl=client.ssl_context, max_size=None, compression=None, proxy=None, ping_interval=None,
            user_agent_header=None,
        )  # fmt: skip
    except websockets.InvalidStatus as exc:
        # kubectl falls back to SPDY (a POST) when the upgrade is refused, and reports that answer:
        # the same POST here (the API server answers it, and runs nothing: it serves no SPDY)
        await client.raw("POST", resource_path("pods", s.namespace, pod, subresource) + "?" + urlencode(params))
        body = exc.response.body or b""
        try:
            raise StatusError.from_status(json.loads(body)) from None
        except ValueError:
            raise CmdError(f"unable to upgrade connection: {body.decode(errors='replace').strip()}") from None
    except OSError as exc:
        raise CmdError(f"unable to upgrade connection: {exc}") from None
    outcome: Outcome | None = None
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Future[Any]] = []
    restore = _raw_terminal() if tty else None
    try:
        if tty:
            await conn.send(bytes([RESIZE]) + _size())

            def resized() -> None:
                tasks.append(asyncio.ensure_future(conn.send(bytes([RESIZE]) + _size())))

            with contextlib.suppress(ValueError, RuntimeError):
                loop.add_signal_handler(signal.SIGWINCH, resized)
        if stdin is not None:
            tasks.append(asyncio.ensure_future(_send_stdin(conn, stdin, loop)))
        async for message in conn:
            if isinstance(message, str):
                message = message.encode()
            if not message:
                continue
            channel, data = message[0], message[1:]
            if channel == STDOUT and data:
                stdout(data)
            elif channel == STDERR and data and stderr is not None:
                stderr(data)
            elif channel == ERROR and data:
                outcome = decode_status(data)
    except websockets.ConnectionClosedError as exc:
        outcome = outcome or Outcome(1, f"error: {exc}")
    finally:
        with contextlib.suppress(ValueError, RuntimeError):
            loop.remove_signal_handler(signal.SIGWINCH)
        if restore is not None:
            restore()
        for task in tasks:
            task.cancel()
        await conn.close()
    return outcome or Outcome(0)


async def _send_stdin(conn: Any, read: Callable[[], bytes], loop: asyncio.AbstractEventLoop) -> None:
    """Copy stdin (blocking reads in a daemon thread: a read cannot be interrupted) until its end,
    then say so with the v5 close signal."""
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        while True:
            try:
                data = read()
            except (OSError, ValueError):
                data = b""
            loop.call_soon_threadsafe(queue.put_nowait, data)
            if not data:
                return

    threading.Thread(target=pump, daemon=True).start()
    while data := await queue.get():
        await conn.send(bytes([STDIN]) + data)
    await conn.send(bytes([CLOSE, STDIN]))


def _size() -> bytes:
    size = shutil.get_terminal_size()
    return json.dumps({"Width": size.columns, "Height": size.lines}).encode()


def _raw_terminal() -> Callable[[], None] | None:
    import termios
    import tty

    fd = sys.stdin.fileno()
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        return None
    tty.setraw(fd, termios.TCSANOW)  # as Go's term.MakeRaw: what was typed ahead is kept, not flushed
    return lambda: termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def stdin_reader() -> Callable[[], bytes]:
    """Blocking reads of stdin as bytes (a text stream without a descriptor, e.g. in tests: encoded)."""
    try:
        fd = sys.stdin.fileno()
    except (OSError, ValueError, AttributeError):
        return lambda: sys.stdin.read(32 * 1024).encode()
    return lambda: os.read(fd, 32 * 1024)


def writer(stream: Any) -> Callable[[bytes], None]:
    """Write bytes to stdout or stderr as they come (a text stream without a buffer: decoded)."""
    target = getattr(stream, "buffer", None)

    def write(data: bytes) -> None:
        if target is not None:
            target.write(data)
            target.flush()
        else:
            stream.write(data.decode(errors="replace"))
            stream.flush()

    return write
