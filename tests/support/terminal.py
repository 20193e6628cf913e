"""A command on a pseudo-terminal (pty.fork), driven as a person at a terminal would: what it
prints, what is typed, its exit code. For the tests of `exec -it` and `attach -it`."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import termios
import time


class Terminal:
    """A command on a pseudo-terminal of a given size: what it prints, what is typed, its exit code."""

    def __init__(self, argv: list[str], env: dict[str, str], rows: int = 24, cols: int = 80,
                 cwd: str | None = None) -> None:  # fmt: skip
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the command on the terminal
            if cwd:
                os.chdir(cwd)
            os.execve(argv[0], argv, env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.seen = b""

    def read_until(self, marker: bytes, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while marker not in self.seen:
            assert time.monotonic() < deadline, f"no {marker!r} in {self.seen!r}"
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    data = b""
                assert data, f"the terminal closed before {marker!r}: {self.seen!r}"
                self.seen += data

    def type(self, text: bytes) -> None:
        os.write(self.fd, text)

    def wait(self, timeout: float = 30) -> int:
        """The exit code, reading what is left meanwhile."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self._drain()
                return os.waitstatus_to_exitcode(status)
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    self.seen += os.read(self.fd, 4096)
                except OSError:
                    pass
        raise AssertionError(f"still running after {timeout} s: {self.seen!r}")

    def _drain(self) -> None:
        while select.select([self.fd], [], [], 0)[0]:
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                return
            if not data:
                return
            self.seen += data

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)
