"""`kubectl exec`, `kubectl attach` and `kubectl cp`: commands in a running container, through the
API server's pods/exec and pods/attach (a WebSocket relayed to the pod's kubelet: streaming.py).

    exec POD [-c C] [-i] [-t] -- COMMAND [args...]   exit code = the command's
    attach POD [-c C] [-i] [-t]                       the container's own streams
    cp [NS/]POD:PATH LOCAL  |  cp LOCAL [NS/]POD:PATH [-c C]

`cp` is tar through exec, as kubectl does it: into a pod, `test -d DEST` decides whether DEST is a
directory, then a tar stream of the local file (named as the destination) goes to
`tar -xmf - -C <dir>`; out of a pod, `tar cf - PATH` and the entries are unpacked here with the
path's prefix stripped (nothing outside the destination, symlinks skipped with kubectl's
warning). The container needs `tar`, as with kubectl. tar's own messages go to stdout (kubectl
wires the exec's stderr there).
"""

from __future__ import annotations

import io
import os
import posixpath
import sys
import tarfile
from pathlib import Path
from typing import Any

from kubectl import commandline as typer
from kubectl.cli import GLOBALS, CmdError, Session, run, warn
from kubectl.main import app
from kubectl.streaming import Outcome, stdin_reader, stream, writer

DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"
NOT_A_TTY = "Unable to use a TTY - input is not a terminal or the right kind of file"
FILESPEC = "filespec must match the canonical format: [[namespace/]pod:]file/path"


async def _pod(s: Session, target: str) -> dict[str, Any]:
    if "/" in target:
        from kubectl.cmd_logs import find_pod

        return await find_pod(s, target)
    return await s.client.get("pods", target, s.namespace)


def _container(pod: dict[str, Any], container: str | None, quiet: bool) -> str:
    """-c, else the default-container annotation, else the first container (said on stderr when
    there was a choice, as kubectl says it)."""
    if container:
        return container
    spec = pod.get("spec") or {}
    names = [c["name"] for c in spec.get("containers") or []]
    default = (pod["metadata"].get("annotations") or {}).get(DEFAULT_CONTAINER)
    if default in names:
        return str(default)
    everything = [*names, *(f"{c['name']} (init)" for c in spec.get("initContainers") or []),
                  *(f"{c['name']} (ephem)" for c in spec.get("ephemeralContainers") or [])]  # fmt: skip
    if len(everything) > 1 and not quiet:
        warn(f'Defaulted container "{names[0]}" out of: {", ".join(everything)}')
    return names[0] if names else ""


def _check_running(pod: dict[str, Any], verb: str) -> None:
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise CmdError(f"cannot {verb} into a container in a completed pod; current phase is {phase}")


def _params(container: str, command: list[str], stdin: bool, stdout: bool, stderr: bool,
            tty: bool) -> list[tuple[str, str]]:  # fmt: skip
    params = [(name, "true") for name, on in (("stdin", stdin), ("stdout", stdout), ("stderr", stderr),
                                              ("tty", tty)) if on]  # fmt: skip
    return [*params, ("container", container), *(("command", c) for c in command)]


def _terminal(stdin: bool, tty: bool, quiet: bool) -> bool:
    """kubectl's SetupTTY: a terminal only with -i and -t and a real terminal on stdin."""
    if not (stdin and tty):
        return False
    try:
        if os.isatty(sys.stdin.fileno()):
            return True
    except (OSError, ValueError, AttributeError):
        pass
    if not quiet:
        warn(NOT_A_TTY)
    return False


def _finish(outcome: Outcome) -> int:
    if outcome.message:
        warn(outcome.message)
    return outcome.code


async def run_in(s: Session, pod_name: str, container: str, command: list[str], *, stdin: Any = None,
                 stdout: Any = None, stderr: Any = None, tty: bool = False,
                 subresource: str = "exec") -> Outcome:  # fmt: skip
    params = _params(container, command, stdin is not None, stdout is not None, stderr is not None, tty)
    return await stream(s, pod_name, subresource, params, stdin=stdin, stdout=stdout or (lambda _: None),
                        stderr=stderr, tty=tty)  # fmt: skip


async def exec_(s: Session, target: str, command: list[str], container: str | None, stdin: bool, tty: bool,
                quiet: bool) -> int:  # fmt: skip
    if not command:
        raise CmdError("you must specify at least one command for the container")
    pod = await _pod(s, target)
    _check_running(pod, "exec")
    name = _container(pod, container, quiet)
    terminal = _terminal(stdin, tty, quiet)
    outcome = await run_in(s, pod["metadata"]["name"], name, command, stdin=stdin_reader() if stdin else None,
                           stdout=writer(sys.stdout), stderr=None if terminal else writer(sys.stderr),
                           tty=terminal)  # fmt: skip
    return _finish(outcome)


@app.command("exec", context_settings={"allow_interspersed_args": True})
def exec_command(
    target: str = typer.Argument(..., metavar="(POD | TYPE/NAME)"),
    command: list[str] = typer.Argument(None, metavar="-- COMMAND [args...]"),
    container: str = typer.Option(None, "-c", "--container", help="Container name (default: the first)."),
    stdin: bool = typer.Option(False, "-i", "--stdin", help="Pass stdin to the container."),
    tty: bool = typer.Option(False, "-t", "--tty", help="Stdin is a TTY."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Only print output from the remote session."),
) -> None:
    """Execute a command in a container."""
    args = list(command or [])
    if args and not GLOBALS.dash:
        run(_fail("exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\n"
                  "See 'kubectl exec -h' for help and examples"))
    run(lambda s: exec_(s, target, args, container, stdin, tty, quiet))


def _container_spec(pod: dict[str, Any], name: str) -> dict[str, Any]:
    spec = pod.get("spec") or {}
    everyone = [*(spec.get("containers") or []), *(spec.get("initContainers") or []),
                *(spec.get("ephemeralContainers") or [])]  # fmt: skip
    return next((c for c in everyone if c.get("name") == name), {})


async def attach(s: Session, target: str, container: str | None, stdin: bool, tty: bool, quiet: bool) -> int:
    pod = await _pod(s, target)
    _check_running(pod, "attach")
    name = _container(pod, container, quiet)
    allocated = bool(_container_spec(pod, name).get("tty"))
    if tty and not allocated:  # kubectl follows the container: a terminal only where it has one
        tty = False
        if not quiet:
            warn(f"error: Unable to use a TTY - container {name} did not allocate one")
    elif allocated:
        tty = True
    terminal = _terminal(stdin, tty, quiet)
    if not quiet:  # kubectl says it whether or not there is a terminal
        warn("If you don't see a command prompt, try pressing enter.")
    outcome = await run_in(s, pod["metadata"]["name"], name, [], stdin=stdin_reader() if stdin else None,
                           stdout=writer(sys.stdout), stderr=None if terminal else writer(sys.stderr),
                           tty=terminal, subresource="attach")  # fmt: skip
    if outcome.code == 0 and not quiet and stdin and terminal and (pod.get("spec") or {}).get(
            "restartPolicy", "Always") == "Always":  # fmt: skip
        sys.stdout.write(f"Session ended, resume using 'kubectl attach {pod['metadata']['name']} -c {name} -i -t' "
                         "command when the pod is running\n")  # fmt: skip
        sys.stdout.flush()
    return _finish(outcome)


@app.command("attach")
def attach_command(
    target: str = typer.Argument(..., metavar="(POD | TYPE/NAME)"),
    container: str = typer.Option(None, "-c", "--container", help="Container name (default: the first)."),
    stdin: bool = typer.Option(False, "-i", "--stdin", help="Pass stdin to the container."),
    tty: bool = typer.Option(False, "-t", "--tty", help="Stdin is a TTY."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Only print output from the remote session."),
) -> None:
    """Attach to a running container."""
    run(lambda s: attach(s, target, container, stdin, tty, quiet))


# ---------------------------------------------------------------------------------------------- cp


def file_spec(arg: str) -> tuple[str, str, str]:
    """(namespace, pod, path) of `[[namespace/]pod:]path`; pod "" for a local path."""
    i = arg.find(":")
    if i == 0:
        raise CmdError(FILESPEC)
    if i < 0:
        return "", "", arg
    pod, path = arg[:i], arg[i + 1 :]
    pieces = pod.split("/")
    if len(pieces) == 1:
        return "", pieces[0], path
    if len(pieces) == 2:
        return pieces[0], pieces[1], path
    raise CmdError(FILESPEC)


async def cp(s: Session, src: str, dest: str, container: str | None, no_preserve: bool) -> int:
    src_ns, src_pod, src_path = file_spec(src)
    dest_ns, dest_pod, dest_path = file_spec(dest)
    if not src_pod and not dest_pod:
        raise CmdError("one of src or dest must be a remote file specification")
    if src_pod and dest_pod:
        raise CmdError("one of src or dest must be a local file specification")
    if not src_path or not dest_path:
        raise CmdError("filepath can not be empty")
    if src_pod:
        return await _copy_from_pod(s, src_ns or s.namespace, src_pod, src_path, Path(dest_path), container)
    return await _copy_to_pod(s, dest_ns or s.namespace, dest_pod, Path(src_path), dest_path, container, no_preserve)


async def _target(s: Session, namespace: str, pod_name: str, container: str | None) -> tuple[Session, str]:
    s = Session(s.client, namespace, True)
    pod = await s.client.get("pods", pod_name, namespace)
    _check_running(pod, "exec")
    return s, _container(pod, container, False)


async def _copy_to_pod(s: Session, namespace: str, pod: str, src: Path, dest: str, container: str | None,
                       no_preserve: bool) -> int:  # fmt: skip
    if not src.exists():
        raise CmdError(f"{src} doesn't exist in local filesystem")
    s, name = await _target(s, namespace, pod, container)
    if (await run_in(s, pod, name, ["test", "-d", dest], stdout=lambda _: None, stderr=lambda _: None)).code == 0:
        dest = posixpath.join(dest, src.name)  # a directory: the file goes into it
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        tar.add(str(src), arcname=posixpath.basename(dest.rstrip("/")) or src.name)
    payload = archive.getvalue()
    chunks = [payload[i : i + 32 * 1024] for i in range(0, len(payload), 32 * 1024)]

    def read() -> bytes:
        return chunks.pop(0) if chunks else b""

    command = ["tar", "--no-same-permissions", "--no-same-owner", "-xmf", "-"] if no_preserve else ["tar", "-xmf", "-"]
    directory = posixpath.dirname(dest.rstrip("/"))
    if directory:
        command += ["-C", directory]
    out = writer(sys.stdout)
    return _finish(await run_in(s, pod, name, command, stdin=read, stdout=out, stderr=out))


async def _copy_from_pod(s: Session, namespace: str, pod: str, src: str, dest: Path, container: str | None) -> int:
    s, name = await _target(s, namespace, pod, container)
    data = bytearray()
    outcome = await run_in(s, pod, name, ["tar", "cf", "-", src], stdout=data.extend, stderr=writer(sys.stdout))
    if outcome.code != 0 and not data:
        return _finish(outcome)
    prefix = _strip_shortcuts(posixpath.normpath(src.lstrip("/")))
    _untar(bytes(data), prefix, dest)
    return 0


def _strip_shortcuts(path: str) -> str:
    """Drop leading ../ (a path that tries to climb above the remote root), as kubectl does."""
    while path.startswith("../"):
        path = path[3:]
    return "" if path in ("..", ".") else path


def _untar(data: bytes, prefix: str, dest: Path) -> None:
    warned = False
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            if not member.name.startswith(prefix):
                raise CmdError("tar contents corrupted")
            rest = member.name[len(prefix) :].lstrip("/")
            target = Path(os.path.normpath(dest / rest)) if rest else dest
            if not (target == dest.absolute() or target == dest or dest.absolute() in target.absolute().parents):
                warn(f'warning: file "{target}" is outside target destination, skipping')
                continue
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if member.issym() or member.islnk():
                if not warned:
                    warn(f'warning: skipping symlink: "{target}" -> "{member.linkname}"')
                    warned = True
                continue
            source = tar.extractfile(member)
            if source is None:
                continue
            with open(target, "wb") as out:
                while chunk := source.read(1 << 20):
                    out.write(chunk)


@app.command("cp")
def cp_command(
    src: str = typer.Argument(..., metavar="<file-spec-src>"),
    dest: str = typer.Argument(..., metavar="<file-spec-dest>"),
    container: str = typer.Option(None, "-c", "--container", help="Container name (default: the first)."),
    no_preserve: bool = typer.Option(False, "--no-preserve", help="Do not keep ownership and permissions."),
) -> None:
    """Copy files and directories to and from containers."""
    run(lambda s: cp(s, src, dest, container, no_preserve))


def _fail(message: str) -> Any:
    async def verb(_: Session) -> int:
        raise CmdError(message)

    return verb
