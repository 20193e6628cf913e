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

    def _read(self, wait: float) -> bytes | None:
        """What the terminal printed within `wait` seconds (b"" once it is closed; None: nothing yet)."""
        if not select.select([self.fd], [], [], wait)[0]:
            return None
        try:
            data = os.read(self.fd, 4096)
        except OSError:  # EIO: nobody holds the terminal any more
            data = b""
        self.seen += data
        return data

    def read_until(self, marker: bytes, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while marker not in self.seen:
            assert time.monotonic() < deadline, f"no {marker!r} in {self.seen!r}"
            assert self._read(0.2) != b"", f"the terminal closed before {marker!r}: {self.seen!r}"

    def type(self, text: bytes) -> None:
        os.write(self.fd, text)

    def wait(self, timeout: float = 30) -> int:
        """The exit code, reading what is left meanwhile."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                while self._read(0):  # what it printed last
                    pass
                return os.waitstatus_to_exitcode(status)
            self._read(0.1)
        raise AssertionError(f"still running after {timeout} s: {self.seen!r}")

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)
