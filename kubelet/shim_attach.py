"""The shim's attach point: a container's stdin (a pipe, or a pseudo-terminal) kept open, and a
Unix socket through which the kubelet attaches to it (`kubectl attach`, `kubectl run -i`).

Only a container with `stdin: true` or `tty: true` has one: the shim (shim.py) imports this module
for those alone, so every other container starts as light as before. What Kubernetes asks of the
runtime (CRI Attach, containerd's ContainerIO.Attach) and how it is done here:

  - the container's stdin is a pipe whose write end the shim holds (with `tty`: the container's
    stdin, stdout and stderr are a pty's slave, its controlling terminal; the shim holds the
    master), so the container reads nothing — and gets no EOF — until someone attaches;
  - `attach.sock` in the container directory accepts any number of attached clients. Each gets
    the container's output from the moment it attached (stdout and stderr apart; a terminal has
    one output, sent as stdout) while the shim keeps writing the log as always; what a client
    sends goes to the container's stdin, resize requests go to the terminal (TIOCSWINSZ);
  - a client whose stdin ends: with `stdinOnce` (and no tty) the container's stdin is closed — it
    reads EOF, and later attaches get no stdin — and the client keeps the output until the
    container exits; otherwise (a terminal's stdin is never closed: containerd's choice too)
    that client's session ends there, and the container's stdin stays open for the next one;
  - when the container exits, the output is sent and every client is closed: its attach is over.

A client is closed gently: its output ends first (a half close, shutdown(SHUT_WR)), and what it
still sends is read and dropped until it closes its end. Closing a Unix socket that holds unread
input resets the connection, and a reset makes the client's side fail its reads at once, output it
has received but not yet read included: a kubelet that passed on kubectl's "end of stdin" just as
the container exited would lose the container's last output (`kubectl run -i` printing nothing).

The socket exists before the container starts (an attach as early as `kubectl run -i` makes one
misses none of the output) and only its owner, root, may connect to it (mode 0600; it is bound
under umask 077, so it never exists with wider permissions). If it cannot be made, AttachPoint
raises (having closed and removed what it made) and the shim fails the container's start.

Frames both ways are `<channel: 1 byte><length: 4 bytes, big-endian><data>`, with the channels of
Kubernetes' remote command protocol: 0 stdin, 1 stdout, 2 stderr, 4 resize (`<width><height>`,
2 bytes each, big-endian), 255 the end of the client's stdin; a client opens with HELLO (254),
whose data says whether it brings stdin (b"1") or not. The kubelet side is kubelet/attach.py.

The socket's path is usually longer than a Unix socket address may be (108 bytes): both ends name
it through /proc/self/fd/<an open descriptor of the container directory>/attach.sock.
"""

from __future__ import annotations

import os
import select
import socket
import sys
import time

SOCKET = "attach.sock"
STDIN, STDOUT, STDERR, RESIZE, HELLO, CLOSE = 0, 1, 2, 4, 254, 255
HEADER = 5
MAX_BUFFERED = 4 << 20  # a client this far behind is dropped; stdin this far behind stops reading clients
LINGER = 5.0  # seconds a client may take, once the container has exited, to take its output and close


def frame(channel: int, data: bytes) -> bytes:
    return bytes([channel]) + len(data).to_bytes(4, "big") + data


def short_path(directory: str) -> tuple[int, str]:
    """An open descriptor of `directory` and the socket's path through it (close the descriptor)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    return fd, f"/proc/self/fd/{fd}/{SOCKET}"


class Client:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.inbox = bytearray()
        self.outbox = bytearray()
        self.greeted = False
        self.stdin = False  # it brings stdin (its HELLO said so) and it has not ended yet
        self.closing = False  # send what is queued, then end the output; what it sends is dropped
        self.shut = False  # its output has ended (SHUT_WR): it is dropped when it closes its end


class AttachPoint:
    def __init__(self, directory: str, stdin_fd: int, tty: bool, once: bool) -> None:
        self.stdin_fd: int | None = stdin_fd  # the pipe's write end, or the pty's master
        self.tty = tty
        self.once = once
        self.to_stdin = bytearray()
        self.close_stdin = False  # once what is queued is written
        self.clients: dict[int, Client] = {}
        os.set_blocking(stdin_fd, False)
        fd, path = short_path(directory)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        bound = False
        try:
            umask = os.umask(0o077)  # the socket is born owner-only: no window before the chmod
            try:
                self.listener.bind(path)
            finally:
                os.umask(umask)
            bound = True
            os.chmod(SOCKET, 0o600, dir_fd=fd)
            self.listener.listen(16)
            self.listener.setblocking(False)
        except BaseException:  # no half-made attach point: the shim fails the start (shim.py)
            self.listener.close()
            if bound:
                try:
                    os.unlink(SOCKET, dir_fd=fd)
                except OSError:
                    pass
            raise
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ the select loop's view

    def readers(self) -> list[int]:
        fds = [self.listener.fileno()] + [fd for fd, c in self.clients.items() if c.shut]
        if len(self.to_stdin) < MAX_BUFFERED:
            fds += [fd for fd, c in self.clients.items() if not c.closing]
        return fds

    def writers(self) -> list[int]:
        fds = [fd for fd, c in self.clients.items() if c.outbox]
        if self.stdin_fd is not None and self.to_stdin:
            fds.append(self.stdin_fd)
        return fds

    def readable(self, fd: int) -> None:
        if fd == self.listener.fileno():
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            sock.setblocking(False)
            self.clients[sock.fileno()] = Client(sock)
            return
        client = self.clients.get(fd)
        if client is None:
            return
        try:
            data = client.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._stdin_ended(client)
            self._drop(client)
            return
        if client.closing:
            return  # its attach is over: what it still sends goes nowhere
        client.inbox += data
        while len(client.inbox) >= HEADER:
            size = int.from_bytes(client.inbox[1:HEADER], "big")
            if len(client.inbox) < HEADER + size:
                break
            channel, payload = client.inbox[0], bytes(client.inbox[HEADER : HEADER + size])
            del client.inbox[: HEADER + size]
            self._message(client, channel, payload)

    def writable(self, fds: list[int]) -> None:
        for fd in fds:
            if fd == self.stdin_fd:
                self._write_stdin()
            elif fd in self.clients:
                self._flush(self.clients[fd])

    def output(self, stream: str, data: bytes) -> None:
        """The container wrote `data` (the shim has logged it): every client gets it."""
        message = frame(STDOUT if stream == "stdout" else STDERR, data)
        for client in list(self.clients.values()):
            if client.closing:
                continue
            client.outbox += message
            if len(client.outbox) > MAX_BUFFERED:
                self._drop(client)
            else:
                self._flush(client)

    def close(self) -> None:
        """The container is gone: send every client what is queued (briefly) and end its output,
        then read what the clients still send until each has closed (at most LINGER seconds: see
        the module comment) and close them and the socket."""
        self.listener.close()  # a kubelet attaching from now on is refused and waits for the exit (attach.py)
        clients = list(self.clients.values())
        for client in clients:
            client.sock.setblocking(True)
            client.sock.settimeout(1.0)
            try:
                client.sock.sendall(client.outbox)
            except OSError:
                pass
            try:
                client.sock.shutdown(socket.SHUT_WR)  # even after a partial send: the client sees an end
            except OSError:
                pass
        linger([c.sock for c in clients], LINGER)
        for client in clients:
            self._drop(client)
        if self.stdin_fd is not None and not self.tty:
            os.close(self.stdin_fd)  # the pty's master is the shim's output stream: shim.py closes it
        self.stdin_fd = None

    # ------------------------------------------------------------------ one client

    def _message(self, client: Client, channel: int, data: bytes) -> None:
        if not client.greeted:
            client.greeted = True
            client.stdin = channel == HELLO and data == b"1"
            return
        if channel == STDIN and client.stdin and self.stdin_fd is not None and not self.close_stdin:
            self.to_stdin += data
            self._write_stdin()
        elif channel == RESIZE and self.tty and self.stdin_fd is not None and len(data) == 4:
            resize(self.stdin_fd, int.from_bytes(data[:2], "big"), int.from_bytes(data[2:], "big"))
        elif channel == CLOSE and client.stdin:
            self._stdin_ended(client)
            if not (self.once and not self.tty):  # this attach is over (containerd's way)
                client.closing = True
                self._flush(client)

    def _stdin_ended(self, client: Client) -> None:
        if not client.stdin:
            return
        client.stdin = False
        if self.once and not self.tty and self.stdin_fd is not None:
            self.close_stdin = True
            self._write_stdin()

    def _write_stdin(self) -> None:
        if self.stdin_fd is None:
            return
        while self.to_stdin:
            try:
                written = os.write(self.stdin_fd, self.to_stdin)
            except BlockingIOError:
                return
            except OSError:  # nobody reads it any more
                self.to_stdin.clear()
                break
            del self.to_stdin[:written]
        if self.close_stdin and not self.tty:
            os.close(self.stdin_fd)
            self.stdin_fd = None

    def _flush(self, client: Client) -> None:
        while client.outbox:
            try:
                sent = client.sock.send(client.outbox)
            except BlockingIOError:
                return
            except OSError:
                self._drop(client)
                return
            del client.outbox[:sent]
        if client.closing and not client.shut:
            client.shut = True
            try:
                client.sock.shutdown(socket.SHUT_WR)
            except OSError:
                self._drop(client)

    def _drop(self, client: Client) -> None:
        fd = client.sock.fileno()
        if fd >= 0:
            self.clients.pop(fd, None)
        client.sock.close()


def linger(socks: list[socket.socket], seconds: float) -> None:
    """Read and drop what these sockets receive until each has been closed by its peer, or `seconds` pass."""
    deadline = time.monotonic() + seconds
    waiting = list(socks)
    while waiting and (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select(waiting, [], [], left)
        for s in ready:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                waiting.remove(s)


def resize(fd: int, width: int, height: int) -> None:
    import fcntl
    import termios

    winsize = b"".join(n.to_bytes(2, sys.byteorder) for n in (height, width, 0, 0))  # struct winsize
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, winsize)
    except OSError:
        pass
