"""mini-kubectl `exec`, `exec -it`, `cp` and `attach` side by side with the real kubectl, on the
secure process-runtime cluster of tests/runtime/test_exec.py (real processes: Linux and root).
Error paths that need no root are compared in tests/compat/test_exec_kubectl.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.test_exec import Secure, pod, secure  # noqa: F401  (fixtures)
from tests.support.terminal import Terminal

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0,
                                reason="the process runtime needs Linux and root")  # fmt: skip


def mini(secure: Secure, *args: str, stdin: str | None = None, who: str = "") -> subprocess.CompletedProcess[str]:  # noqa: F811
    env = {**os.environ, "KUBECONFIG": str(secure.kubeconfigs[who]) if who else os.devnull, "PYTHONPATH": str(REPO)}
    head = [sys.executable, "-m", "kubectl"] + ([] if who else ["-s", secure.apiserver.url])
    return subprocess.run([*head, *args], input=stdin, capture_output=True, text=True, timeout=60, env=env,
                          cwd=str(REPO))  # fmt: skip


def both(secure: Secure, *args: str, stdin: str | None = None, who: str = "") -> None:  # noqa: F811
    real = secure.kubectl(*args, stdin=stdin, who=who)
    ours = mini(secure, *args, stdin=stdin, who=who)
    assert (ours.returncode, ours.stdout, ours.stderr) == (real.returncode, real.stdout, real.stderr), args


def test_exec_output_stdin_and_exit_codes_match_kubectl(secure: Secure, pod: str) -> None:  # noqa: F811
    both(secure, "exec", pod, "--", "hostname")
    both(secure, "exec", pod, "-c", "main", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    both(secure, "exec", "-i", pod, "--", "cat", stdin="one\ntwo\n" * 500)
    both(secure, "exec", pod, "--", "cat", "/etc/exec-conf/greeting")
    both(secure, "exec", pod, "--", "no-such-program")
    both(secure, "exec", "-t", pod, "--", "true")  # -t without -i: no terminal, silently
    both(secure, "exec", "-it", pod, "--", "true", stdin="")  # stdin is not a terminal: kubectl says so
    ours = mini(secure, "exec", pod, "--", "sh", "-c", "exit 3")
    assert (ours.returncode, ours.stderr) == (3, "command terminated with exit code 3\n")


def test_exec_is_refused_without_create_on_pods_exec(secure: Secure, pod: str) -> None:  # noqa: F811
    secure.api.delete("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/mini-exec")
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "mini-exec"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
               "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}  # fmt: skip
    secure.api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", json=binding)
    ours = mini(secure, "exec", pod, "--", "hostname", who="alice")
    assert ours.returncode == 1 and "cannot create resource \"pods/exec\"" in ours.stderr, ours.stderr
    both(secure, "exec", pod, "--", "hostname", who="alice")


def test_mini_kubectl_cp_round_trips_with_kubectl(secure: Secure, pod: str, tmp_path: Path) -> None:  # noqa: F811
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(100_000))
    into = mini(secure, "cp", str(source), f"{pod}:/tmp/from-mini.bin")
    assert (into.returncode, into.stderr) == (0, ""), into
    real_back = tmp_path / "real-back.bin"
    assert secure.kubectl("cp", f"{pod}:/tmp/from-mini.bin", str(real_back)).returncode == 0
    assert real_back.read_bytes() == source.read_bytes()
    assert secure.kubectl("cp", str(source), f"{pod}:/tmp").returncode == 0  # a directory: into it
    mini_back = tmp_path / "mini-back.bin"
    out = mini(secure, "cp", f"{pod}:/tmp/data.bin", str(mini_back))
    assert out.returncode == 0, out
    assert mini_back.read_bytes() == source.read_bytes()
    # a directory out of the pod, as kubectl unpacks it
    assert mini(secure, "exec", pod, "--", "sh", "-c", "mkdir -p /tmp/d/e && echo x > /tmp/d/e/f").returncode == 0
    for tool, target in (("real", tmp_path / "real-d"), ("mini", tmp_path / "mini-d")):
        run = secure.kubectl if tool == "real" else (lambda *a: mini(secure, *a))
        assert run("cp", f"{pod}:/tmp/d", str(target)).returncode == 0
    assert (tmp_path / "mini-d" / "e" / "f").read_text() == (tmp_path / "real-d" / "e" / "f").read_text() == "x\n"


def _mini_on_a_terminal(secure: Secure, *args: str) -> Terminal:  # noqa: F811
    env = {**os.environ, "KUBECONFIG": os.devnull, "PYTHONPATH": str(REPO)}
    return Terminal([sys.executable, "-m", "kubectl", "-s", secure.apiserver.url, *args], env, cwd=str(REPO))


def test_mini_kubectl_exec_with_a_terminal(secure: Secure, pod: str) -> None:  # noqa: F811
    term = _mini_on_a_terminal(secure, "exec", "-it", pod, "--", "sh")
    try:
        term.read_until(b"# ", timeout=20)
        term.type(b"stty size; echo h''i\n")
        term.read_until(b"hi", timeout=20)
        term.type(b"exit 4\n")
        assert term.wait() == 4
    finally:
        term.close()


def _pod(secure: Secure, name: str, command: list[str], policy: str = "Never", **container: object) -> str:  # noqa: F811
    return secure.pod(name, restartPolicy=policy, containers=[{"name": "main", "image": "busybox",
                                                               "command": command, **container}])  # fmt: skip


def test_attach_matches_kubectl(secure: Secure) -> None:  # noqa: F811
    """Output, stdin (stdinOnce: a pod each, the first attach takes its input) and errors, side by side."""
    text = "one\ntwo\n" * 300
    real = secure.kubectl("attach", "-i", _pod(secure, "att-real", ["cat"], stdin=True, stdinOnce=True), stdin=text)
    ours = mini(secure, "attach", "-i", _pod(secure, "att-mini", ["cat"], stdin=True, stdinOnce=True), stdin=text)
    assert (ours.returncode, ours.stdout, ours.stderr) == (real.returncode, real.stdout, real.stderr) == (
        0, text, "If you don't see a command prompt, try pressing enter.\n")  # fmt: skip
    tty = _pod(secure, "att-tty", ["sh"], stdin=True, tty=True)
    both(secure, "attach", tty)  # a terminal and stderr: refused by the kubelet
    both(secure, "attach", tty, "-q")
    plain = _pod(secure, "att-plain", ["sh", "-c", "while read l; do echo got-$l; done"], stdin=True)
    both(secure, "attach", "-i", "-t", plain, stdin="")  # "did not allocate one"; its stdin ends the attach


def test_mini_kubectl_attach_with_a_terminal(secure: Secure) -> None:  # noqa: F811
    name = _pod(secure, "att-mini-tty", ["sh"], policy="Always", stdin=True, tty=True)
    term = _mini_on_a_terminal(secure, "attach", "-it", name)
    try:
        term.read_until(b"try pressing enter", timeout=20)
        term.type(b"tty; echo h''i\n")
        term.read_until(b"hi", timeout=20)
        term.type(b"exit 4\n")
        assert term.wait() == 0  # attach has no exit code of its own
        assert b"/dev/pts/" in term.seen
        assert term.seen.endswith(f"Session ended, resume using 'kubectl attach {name} -c main -i -t' command when the "
                                  "pod is running\r\n".encode()), term.seen  # fmt: skip
    finally:
        term.close()
