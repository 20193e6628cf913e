"""A `port-forward` command (the real kubectl or mini-kubectl) running in the background, with
its output read line by line as it comes, so tests wait for "Forwarding from ..." instead of sleeping."""

from __future__ import annotations

import queue
import socket
import subprocess
import threading
import time
from typing import Any


class Forwarder:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: str | None = None) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                                     text=True)  # fmt: skip
        self.lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self.out: list[str] = []
        self.err: list[str] = []
        for name, stream in (("out", self.proc.stdout), ("err", self.proc.stderr)):
            threading.Thread(target=self._pump, args=(name, stream), daemon=True).start()

    def _pump(self, name: str, stream: Any) -> None:
        for line in stream:
            (self.out if name == "out" else self.err).append(line)
            self.lines.put((name, line))
        self.lines.put((name, ""))

    def wait_line(self, text: str, timeout: float = 30.0) -> str:
        """The first line (stdout or stderr) containing `text` from now on."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line with {text!r}; stdout={self.out!r} stderr={self.err!r}")
            try:
                _, line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if text in line:
                return line

    def exit_code(self, timeout: float = 20.0) -> int:
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> Forwarder:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


def http_get(port: int, path: str = "/", host: str = "127.0.0.1", timeout: float = 20.0) -> bytes:
    """A raw HTTP/1.0 GET (the server closes the connection after the response)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(f"GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n".encode())
        return receive_all(sock)


def receive_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def echo_round_trip(port: int, payload: bytes, timeout: float = 60.0) -> bytes:
    """Send `payload` (from a thread, so the echo can flow back meanwhile), half-close, read all."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:

        def send() -> None:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        data = receive_all(sock)
        sender.join(timeout)
        return data


# A TCP echo server bound to 127.0.0.1 only (run by the catalog's `python` image): what a pod
# serves to itself, reachable through port-forward and not through the pod's IP.
ECHO_SERVER = """
import socket, threading
def serve(c):
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d)
    c.shutdown(socket.SHUT_WR)
    c.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 9000))
s.listen(16)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""
