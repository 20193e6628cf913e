"""`kubectl attach` and `kubectl run -i [-t] --rm` on real processes, with the real kubectl.

The secure process-runtime cluster of test_exec.py (kubelets serve exec/attach only to callers they
authenticate). A container with `stdin`/`tty` gets an attach point from its shim (kubelet/shim_attach.py,
kubelet/attach.py); any container can be attached for its output. Interactive sessions run kubectl
on a pseudo-terminal (pty.fork), as a person at a terminal would.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
from typing import Any

import pytest

from tests.runtime.test_exec import Secure, secure  # noqa: F401  (the module's cluster)
from tests.support.component import wait_for

PROMPT = "If you don't see a command prompt, try pressing enter."


class Terminal:
    """A command on a pseudo-terminal of a given size: what it prints, what is typed, its exit code."""

    def __init__(self, argv: list[str], env: dict[str, str], rows: int = 24, cols: int = 80) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the command on the terminal
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


def kubectl_on_a_terminal(s: Secure, *args: str, rows: int = 24, cols: int = 80) -> Terminal:
    env = {**os.environ, "KUBECONFIG": os.devnull, "TERM": "xterm"}
    return Terminal([s.kubectl_path, "-s", s.apiserver.url, *args], env, rows, cols)


def pod_of(s: Secure, name: str) -> dict[str, Any]:
    return s.api.get(f"/api/v1/namespaces/default/pods/{name}").json()  # type: ignore[no-any-return]


def make_pod(s: Secure, name: str, command: list[str], policy: str = "Never", **container: Any) -> str:
    return s.pod(name, restartPolicy=policy,
                 containers=[{"name": "main", "image": "busybox", "command": command, **container}])  # fmt: skip


def terminated(s: Secure, name: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        statuses = (pod_of(s, name).get("status") or {}).get("containerStatuses") or [{}]
        return statuses[0].get("state", {}).get("terminated")

    return wait_for(done, timeout=30, what=f"{name} terminated")  # type: ignore[no-any-return]


def gone(s: Secure, name: str) -> None:
    wait_for(lambda: s.api.get(f"/api/v1/namespaces/default/pods/{name}").status_code == 404, timeout=30,
             what=f"pod {name} gone")  # fmt: skip


def test_attach_with_a_terminal_types_into_the_containers_shell(secure: Secure) -> None:  # noqa: F811
    name = make_pod(secure, "att-tty", ["sh"], policy="Always", stdin=True, tty=True)
    term = kubectl_on_a_terminal(secure, "attach", name, "-c", "main", "-i", "-t", rows=33, cols=111)
    try:
        term.read_until(PROMPT.encode())
        term.type(b"tty; stty size; echo $TERM; echo h''i-$((40+2))\n")
        term.read_until(b"hi-42")
        assert b"/dev/pts/" in term.seen  # the container's own terminal
        assert b"33 111" in term.seen  # kubectl's size reached it (TIOCSWINSZ)
        assert b"xterm" in term.seen
        term.type(b"exit 3\n")
        assert term.wait() == 0  # attach reports no exit code: the session ended well
    finally:
        term.close()
    assert term.seen.endswith(f"Session ended, resume using 'kubectl attach {name} -c main -i -t' command when the "
                              "pod is running\r\n".encode()), term.seen  # fmt: skip
    last = wait_for(lambda: (pod_of(secure, name)["status"]["containerStatuses"][0].get("lastState") or {}).get(
        "terminated"), what="the shell restarted")  # fmt: skip
    assert last["exitCode"] == 3
    logs = secure.kubectl("logs", name, "--previous")
    assert "hi-42" in logs.stdout, logs  # a terminal's output is logged as stdout


def test_attach_streams_output_from_now_on_stdout_and_stderr_apart(secure: Secure) -> None:  # noqa: F811
    script = "i=0; while [ $i -lt 25 ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); sleep 0.2; done"
    name = make_pod(secure, "att-out", ["sh", "-c", script])  # no stdin: output only (from the log)
    out = secure.kubectl("attach", name, timeout=60)
    assert out.returncode == 0, out.stderr  # it ends with the container
    assert out.stderr.startswith(PROMPT + "\n"), out.stderr
    lines = out.stdout.splitlines()
    assert lines and lines[-1] == "out-24", out.stdout
    first = int(lines[0].removeprefix("out-"))
    assert first > 0 and lines == [f"out-{i}" for i in range(first, 25)]  # from the time of attaching
    assert f"err-{first}\n" in out.stderr and "err-24\n" in out.stderr and "out-" not in out.stderr


def test_stdin_once_gives_eof_when_the_first_attach_ends_its_input(secure: Secure) -> None:  # noqa: F811
    name = make_pod(secure, "att-once", ["sh", "-c", "cat; echo cat-ended; read x || echo eof-again; sleep 3600"],
                    stdin=True, stdinOnce=True)  # fmt: skip
    head = [secure.kubectl_path, "-s", secure.apiserver.url, "attach", "-i", name]
    proc = subprocess.Popen(head, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "KUBECONFIG": os.devnull})  # fmt: skip
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"hello once\n")
        proc.stdin.close()  # kubectl closes the stream; with stdinOnce the container's stdin closes
        seen = b""
        while b"eof-again" not in seen:  # the session goes on: the output of what follows
            chunk = proc.stdout.read1(4096)  # type: ignore[attr-defined]
            assert chunk, seen
            seen += chunk
        assert seen == b"hello once\ncat-ended\neof-again\n"  # stdin stays closed: a second read gets EOF
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_stdin_without_once_stays_open_across_attaches(secure: Secure) -> None:  # noqa: F811
    name = make_pod(secure, "att-open", ["sh", "-c", "while read l; do echo got-$l; done; echo stdin-closed"],
                    stdin=True)  # fmt: skip
    for word in ("one", "two"):  # each attach ends with its input; the container keeps reading
        out = secure.kubectl("attach", "-i", name, stdin=f"{word}\n")
        assert out.returncode == 0, out.stderr
        wait_for(lambda w=word: f"got-{w}" in secure.kubectl("logs", name).stdout, what=f"got-{word}")  # type: ignore[misc]
    assert "stdin-closed" not in secure.kubectl("logs", name).stdout


def test_attach_errors_as_kubernetes_words_them(secure: Secure) -> None:  # noqa: F811
    tty = make_pod(secure, "att-err", ["sh"], stdin=True, tty=True)
    # without -i kubectl asks for stderr, which a terminal does not have (CRI's streaming server)
    out = secure.kubectl("attach", tty)
    assert out.returncode == 1
    assert out.stderr.endswith("error: Internal error occurred: tty and stderr cannot both be true\n"), out.stderr
    # -t for a container without a terminal: kubectl says so and attaches without one
    plain = make_pod(secure, "att-notty", ["sh", "-c", "read x; echo read-$x"], stdin=True)
    out = secure.kubectl("attach", plain, "-i", "-t", stdin="it\n")
    assert out.returncode == 0, out.stderr
    assert out.stderr.startswith(f"error: Unable to use a TTY - container main did not allocate one\n{PROMPT}\n")
    # a container that is not running (the pod is): the kubelet finds no such container
    terminated(secure, plain)
    two = secure.pod("att-two", restartPolicy="Never", containers=[
        {"name": "main", "image": "busybox", "command": ["sleep", "3600"]},
        {"name": "quick", "image": "busybox", "command": ["true"]}])  # fmt: skip
    wait_for(lambda: "terminated" in pod_of(secure, two)["status"]["containerStatuses"][1]["state"], what="quick done")
    out = secure.kubectl("attach", two, "-c", "quick")
    assert out.returncode == 1
    assert out.stderr == f'{PROMPT}\nerror: Internal error occurred: container not found ("quick")\n', out.stderr


def test_a_kubelet_restart_finds_the_attach_point(secure: Secure) -> None:  # noqa: F811
    name = make_pod(secure, "att-adopt", ["sh", "-c", "while read l; do echo got-$l; done"], stdin=True)
    secure.restart_kubelet()
    out = wait_for(lambda: (r := secure.kubectl("attach", "-i", name, stdin="after\n")).returncode == 0 and r,
                   timeout=30, what="attach after the restart")  # fmt: skip
    assert out.returncode == 0
    wait_for(lambda: "got-after" in secure.kubectl("logs", name).stdout, what="got-after")


def test_kubectl_run_it_rm_sh(secure: Secure) -> None:  # noqa: F811
    overrides = json.dumps({"spec": {"nodeName": secure.node, "terminationGracePeriodSeconds": 1}})
    term = kubectl_on_a_terminal(secure, "run", "-i", "-t", "tmp-it", "--image=busybox", "--restart=Never", "--rm",
                                 f"--overrides={overrides}", "--", "sh")  # fmt: skip
    try:
        term.read_until(PROMPT.encode())
        term.type(b"echo h''i-$((40+2)); exit\n")
        term.read_until(b"hi-42")
        assert term.wait(60) == 0
    finally:
        term.close()
    assert b'pod "tmp-it" deleted' in term.seen, term.seen
    gone(secure, "tmp-it")


def test_kubectl_run_i_rm_prints_the_output(secure: Secure) -> None:  # noqa: F811
    overrides = json.dumps({"spec": {"nodeName": secure.node, "terminationGracePeriodSeconds": 1}})
    run = ["run", "-i", "--image=busybox", "--restart=Never", "--rm", f"--overrides={overrides}"]
    out = secure.kubectl(*run, "tmp-echo", "--", "sh", "-c", "echo hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout == 'hi\npod "tmp-echo" deleted\n', out  # attached, or (too late for it) from the logs
    data = "".join(f"line {i}\n" for i in range(200))
    out = secure.kubectl(*run, "tmp-cat", "--", "cat", stdin=data)
    assert out.returncode == 0, out.stderr
    assert out.stdout == data + 'pod "tmp-cat" deleted\n', out
    out = secure.kubectl(*run, "tmp-fail", "--", "sh", "-c", "echo failing; exit 4")
    assert out.returncode == 4 and out.stdout.startswith("failing\n"), out
    for name in ("tmp-echo", "tmp-cat", "tmp-fail"):
        gone(secure, name)


@pytest.fixture(autouse=True)
def _delete_this_tests_pods(secure: Secure) -> Any:  # noqa: F811
    before = {p["metadata"]["name"] for p in secure.api.get("/api/v1/namespaces/default/pods").json()["items"]}
    yield
    for p in secure.api.get("/api/v1/namespaces/default/pods").json()["items"]:
        if p["metadata"]["name"] not in before:
            secure.api.delete(f"/api/v1/namespaces/default/pods/{p['metadata']['name']}")
