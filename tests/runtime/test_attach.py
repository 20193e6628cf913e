"""`kubectl attach` and `kubectl run -i [-t] --rm` on real processes, with the real kubectl.

The secure process-runtime cluster of test_exec.py (kubelets serve exec/attach only to callers they
authenticate). A container with `stdin`/`tty` gets an attach point from its shim (kubelet/shim_attach.py,
kubelet/attach.py); any container can be attached for its output. Interactive sessions run kubectl
on a pseudo-terminal (pty.fork), as a person at a terminal would.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import select
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from kubelet.process import SHIM_COMMAND
from kubelet.shim_attach import CLOSE, HELLO, STDIN, STDOUT, frame, short_path
from kubelet.streaming import parse_resize
from tests.runtime.test_exec import Secure, secure  # noqa: F401  (the module's cluster)
from tests.support.component import wait_for
from tests.support.terminal import Terminal

PROMPT = "If you don't see a command prompt, try pressing enter."


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
        # kubectl sends the size twice, one row and column larger and then as it is (so that a
        # re-attach redraws the screen), from a goroutine of its own: input typed at once can reach
        # the shell before the second resize. So the shell waits for the size (written so that the
        # echoed command line does not contain it) and only then prints it.
        term.type(b'until [ "$(stty size)" = "$((32+1)) $((110+1))" ]; do sleep 0.1; done; '
                  b"tty; stty size; echo $TERM; echo h''i-$((40+2))\n")  # fmt: skip
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


class Output:
    """A command's stdout and stderr as they come (select and os.read: nothing is left in a buffer)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.out, self.err = proc.stdout.fileno(), proc.stderr.fileno()
        self.seen = {self.out: b"", self.err: b""}
        self.open = {self.out, self.err}

    @property
    def stdout(self) -> str:
        return self.seen[self.out].decode()

    @property
    def stderr(self) -> str:
        return self.seen[self.err].decode()

    def read_until(self, condition: Any, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"timed out: stdout {self.stdout!r}, stderr {self.stderr!r}"
            assert self.open, f"both streams ended: stdout {self.stdout!r}, stderr {self.stderr!r}"
            for fd in select.select(list(self.open), [], [], 0.2)[0]:
                chunk = os.read(fd, 4096)
                if chunk:
                    self.seen[fd] += chunk
                else:
                    self.open.discard(fd)

    def wait(self, timeout: float = 60) -> int:
        """Read both streams to their end; the exit code."""
        self.read_until(lambda: not self.open, timeout)
        return self.proc.wait(timeout)


def test_attach_streams_output_from_now_on_stdout_and_stderr_apart(secure: Secure) -> None:  # noqa: F811
    # No timing assumptions: the container prints before-N (stdout) and before-err-N (stderr) until
    # a marker file exists, then out-0..4 and err-0..4 and exits. The attach begins once the log has
    # lines (so that "from the time of attaching" shows), the test waits until live output arrives
    # through it (so the attach stands), and only then creates the marker with `kubectl exec`.
    go = f"/tmp/att-out-go-{uuid.uuid4().hex[:8]}"  # in the container's /tmp (the host's, under a --root-dir in /tmp)
    script = (f"i=0; while [ ! -e {go} ]; do echo before-$i; echo before-err-$i >&2; i=$((i+1)); sleep 0.1; done; "
              f"rm -f {go}; i=0; while [ $i -lt 5 ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); done")  # fmt: skip
    name = make_pod(secure, "att-out", ["sh", "-c", script])  # no stdin: output only (from the log)
    wait_for(lambda: "before-3\n" in secure.kubectl("logs", name).stdout, timeout=30, what="lines before the attach")
    proc = subprocess.Popen([secure.kubectl_path, "-s", secure.apiserver.url, "attach", name],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "KUBECONFIG": os.devnull})  # fmt: skip
    try:
        out = Output(proc)
        out.read_until(lambda: "before-" in out.stdout)  # streaming live: the attach is established
        touch = secure.kubectl("exec", name, "--", "touch", go)
        assert touch.returncode == 0, touch.stderr
        assert out.wait() == 0, out.stderr  # it ends with the container
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        if os.path.exists(go):  # where the container's /tmp is the host's and it did not get to remove it
            os.unlink(go)
    assert out.stderr.startswith(PROMPT + "\n"), out.stderr
    lines = out.stdout.splitlines()
    assert lines[-5:] == [f"out-{i}" for i in range(5)], out.stdout
    first, last = (int(line.removeprefix("before-")) for line in (lines[0], lines[-6]))
    assert first > 3 and lines[:-5] == [f"before-{i}" for i in range(first, last + 1)], out.stdout  # from now on
    errors = out.stderr.removeprefix(PROMPT + "\n").splitlines()
    assert errors[-5:] == [f"err-{i}" for i in range(5)], out.stderr
    assert all(line.startswith("before-err-") for line in errors[:-5]), out.stderr  # stderr apart from stdout
    if errors[:-5]:
        start = int(errors[0].removeprefix("before-err-"))
        assert errors[:-5] == [f"before-err-{i}" for i in range(start, start + len(errors) - 5)], out.stderr


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
    # Each attach ends with its input; the container's stdin stays open. Proven, not assumed: after
    # every detach the next attach's input still reaches the same process (restartPolicy Never: had
    # a detach closed its stdin, `read` would have ended the loop and the container with it).
    for word in ("one", "two", "three"):
        out = secure.kubectl("attach", "-i", name, stdin=f"{word}\n")
        assert out.returncode == 0, out.stderr
        wait_for(lambda w=word: f"got-{w}" in secure.kubectl("logs", name).stdout, what=f"got-{word}")  # type: ignore[misc]
    assert secure.kubectl("logs", name).stdout.startswith("got-one\ngot-two\ngot-three\n")


def test_a_resize_message_is_read_the_same_for_exec_and_attach() -> None:
    """kubelet/streaming.py's parse_resize, used by exec's terminal and by attach (kubelet/attach.py)."""
    assert parse_resize(b'{"Width":111,"Height":33}') == (111, 33)
    assert parse_resize(b"{}") == (0, 0)
    for bad in (b"", b"nope", b"[111, 33]", b'{"Width":"wide"}', b'{"Width":70000,"Height":1}', b'{"Height":-1}',
                b'{"Width":1e400}'):
        assert parse_resize(bad) is None, bad  # ignored: a terminal's size is two uint16


def shim_run(tmp_path: Path, argv: list[str], **spec: Any) -> tuple[Path, list[str], dict[str, str]]:
    """A run directory holding the spec of a container running `argv`, and the command line and
    environment that start kubelet/shim.py on it outside any kubelet (as the process runtime does)."""
    directory = tmp_path / "run"
    directory.mkdir()
    (directory / "spec.marshal").write_bytes(marshal.dumps({"argv": argv, "env": {"PATH": "/usr/bin:/bin"}, **spec}))
    repo = Path(__file__).resolve().parents[2]
    return directory, [*SHIM_COMMAND, str(directory)], {"PYTHONPATH": str(repo)}


@pytest.mark.parametrize("spec", [{"stdin": True}, {"stdin": True, "tty": True}], ids=["stdin", "tty"])
def test_a_shim_that_cannot_make_the_attach_point_fails_the_start_visibly(tmp_path: Path, spec: dict[str, Any]) -> None:
    """kubelet/shim.py: no container start without its attach point; the log and exit.json say why
    (exit code 128, reason StartError: what the kubelet then reports for the container)."""
    started = tmp_path / "started"
    directory, shim, env = shim_run(tmp_path, ["/bin/sh", "-c", f"touch {started}"], **spec)
    (directory / "attach.sock").mkdir()  # the name is taken: bind() fails (EADDRINUSE)
    done = subprocess.run(shim, capture_output=True, text=True, timeout=30, cwd="/", env=env)
    said = "failed to start container: cannot make its attach point (attach.sock): [Errno 98] Address already in use"
    assert done.stderr == said + "\n", done  # shim.log, where the kubelet sends the shim's stderr
    exit_doc = json.loads((directory / "exit.json").read_text())
    assert (exit_doc["exitCode"], exit_doc["reason"]) == (128, "StartError")
    assert exit_doc["finishedAt"] > 0
    log = (directory / "log").read_text()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z stderr F " + re.escape(said) + "\n", log), log
    assert not started.exists() and not (directory / "pid.json").exists()  # the container never ran
    assert sorted(p.name for p in directory.iterdir()) == ["attach.sock", "exit.json", "log", "spec.marshal"]


def test_the_shim_ends_a_clients_output_but_reads_on_until_the_client_closes(tmp_path: Path) -> None:
    """kubelet/shim_attach.py: when the container exits, an attached client gets the output and
    then the end of it, and may still send (the kubelet passes on kubectl's "end of stdin" whenever it
    comes). A shim that closed the socket instead made the kubelet's late write fail and reset the
    connection, and the kubelet lost the container's last output: `kubectl run -i` printed nothing."""
    directory, argv, env = shim_run(tmp_path, ["/bin/sh", "-c", "read x; echo hi-$x"], stdin=True, stdin_once=True)
    shim = subprocess.Popen(argv, cwd="/", env=env, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (directory / "attach.sock").exists(), what="the attach point")
        fd, path = short_path(str(directory))
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            client.connect(path)
        finally:
            os.close(fd)
        client.settimeout(30)
        client.sendall(frame(HELLO, b"1") + frame(STDIN, b"there\n"))
        received = b""
        while chunk := client.recv(65536):  # until the shim ends our output: the container exited
            received += chunk
        assert received == frame(STDOUT, b"hi-there\n")
        client.sendall(frame(CLOSE, b""))  # late, as kubectl's can be: the shim still reads (LINGER)
        client.close()
        assert shim.wait(30) == 0
        assert json.loads((directory / "exit.json").read_text())["exitCode"] == 0
    finally:
        if shim.poll() is None:
            shim.kill()
            shim.wait()


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
    # An attach gets the output from the time of attaching (as in Kubernetes): a command that
    # printed before kubectl attached would lose it. So each command first reads a line, which
    # only an attached kubectl can give it: no race with how fast the container starts or prints.
    out = secure.kubectl(*run, "tmp-echo", "--", "sh", "-c", "read x; echo hi-$x", stdin="there\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout == 'hi-there\npod "tmp-echo" deleted\n', out
    data = "".join(f"line {i}\n" for i in range(200))
    out = secure.kubectl(*run, "tmp-cat", "--", "cat", stdin=data)
    assert out.returncode == 0, out.stderr
    assert out.stdout == data + 'pod "tmp-cat" deleted\n', out
    out = secure.kubectl(*run, "tmp-fail", "--", "sh", "-c", "read x; echo failing; exit 4", stdin="\n")
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
