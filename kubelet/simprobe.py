"""Probes on the simulated runtime: a deterministic model of what a probe would see.

The simulated runtime runs nothing, so there is nothing to probe; instead each container run gets
a small model, and the kubelet's prober (prober.py: the same periods, thresholds, `Unhealthy` and
`Killing` events, restarts and Ready/Endpoints effects as on the process runtime) asks it.

exec probes: a tiny file system per container run, driven by the container's shell script over
time. A `sh -c` / `/bin/sh -c` script (or bash, ash, ...) of `;`-, `&&`- or newline-separated
simple commands is read once (every modelled command succeeds, so `&&` acts as `;`):

    touch F...             F exists from now on
    rm [-f|-r|-rf] F...    F (and what was under it) is gone from now on
    mkdir [-p] D...        D exists from now on
    echo/printf ... > F    F exists from now on (`>>` too)
    sleep N                the clock moves N seconds on (5s/2m/1h as for the runtime's plans)
    true, :                nothing
    exit N                 the script ends here
    anything else          (`exec httpd`, `nginx`, a loop ...) the model stops reading: the files
                           stay as they are from then on, for as long as the run lasts

so at t seconds since the run started the model knows which files exist (a command at time t has
already happened at t: the docs' `touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600`
has /tmp/healthy for t < 30). A restart starts a new run, and the script's clock starts again.
A script whose every command is modelled also decides how long the run lasts (runtime.py: the
docs' script runs 630 s, then exits 0). The probe's command, answered from those files:

    cat F / ls F           succeeds iff F exists; else busybox's words (the docs' example image):
                           "cat: can't open 'F': No such file or directory",
                           "ls: F: No such file or directory"
    test -e|-f|-d|-s F, [ -e|-f|-d|-s F ]
                           succeeds iff F exists; else `command [...] exited with 1`, as the
                           process runtime words an exit without output
    true / false / exit N  exit 0 / 1 / N
    sh -c "<one of these>" the same
    anything else          succeeds: the model cannot know, so it assumes success and says so,
                           once per run and probe, with a Normal `ProbeAssumedSuccess` event (and
                           a log line)

httpGet, tcpSocket and grpc probes: a port listens iff it is
  - a containerPort the container declares (TCP, the default), or
  - the port of the image's own server, when the container runs the image's program (no
    `command`): the catalog's service images (images/catalog.yaml) nginx and hpa-example 80,
    mysql 3306, kubeguide/tomcat-app 8080 (NGINX_PORT / PORT / MYSQL_TCP_PORT as `env` values
    move them, as on the process runtime);
a listening port answers httpGet with 200 (any path) and grpc health checks with SERVING. A port
that does not listen fails in Kubernetes' words: `Get "http://<pod IP>:<port>/<path>": dial tcp
<pod IP>:<port>: connect: connection refused`, `dial tcp <pod IP>:<port>: connect: connection
refused`, and for grpc `timeout: failed to connect service "<pod IP>:<port>" within <timeout>s:
context deadline exceeded` (probe_grpc.py's words). The host is the probe's `host`, else the pod IP.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubelet.containers import Container

log = logging.getLogger("kubelet.simprobe")

SHELLS = {"sh", "bash", "ash", "dash", "zsh"}
_SLEEP = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$")
_SLEEP_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_SEPARATORS = {";", "&&", "\n"}
# The catalog's service images (images/catalog.yaml): the port their program listens on, and the
# environment variable that moves it.
SERVICE_PORTS = {"nginx": (80, "NGINX_PORT"), "hpa_example": (80, "PORT"), "mysql": (3306, "MYSQL_TCP_PORT"),
                 "tomcat_app": (8080, "PORT")}  # fmt: skip


def sleep_seconds(word: str) -> float | None:
    m = _SLEEP.match(word)
    return float(m.group(1)) * _SLEEP_UNITS[m.group(2)] if m else None


def _norm(path: str) -> str:
    return "/" + "/".join(p for p in path.split("/") if p and p != ".") if path.startswith("/") else path.rstrip("/")


@dataclass(frozen=True)
class Script:
    """What a container's shell script does to its files, over time."""

    changes: tuple[tuple[float, bool, str], ...] = ()  # (at, exists, path), in time order
    seconds: float | None = None  # when the script ends (None: it runs on, or we stopped reading)
    exit_code: int = 0
    complete: bool = False  # every command was modelled
    description: str = ""

    def files_at(self, t: float) -> set[str]:
        files: set[str] = set()
        for at, exists, path in self.changes:
            if at > t:
                break
            if exists:
                files.add(path)
            else:
                files = {f for f in files if f != path and not f.startswith(path.rstrip("/") + "/")}
        return files


def _commands(script: str) -> list[list[str]] | None:
    """`a x; b && c` -> [[a, x], [b], [c]]; None when the shell syntax is beyond us."""
    lexer = shlex.shlex(script.replace("\n", " ; "), posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    out: list[list[str]] = [[]]
    for tok in tokens:
        if tok in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(tok)
    return [c for c in out if c]


def script_of(words: list[str]) -> Script | None:
    """The Script of a container's command + args, or None when it is not a shell script."""
    if len(words) < 3 or words[0].rsplit("/", 1)[-1] not in SHELLS or words[1] != "-c":
        return None
    commands = _commands(words[2])
    if commands is None:
        return None
    t = 0.0
    changes: list[tuple[float, bool, str]] = []
    for cmd in commands:
        prog, rest = cmd[0], cmd[1:]
        redirect = [rest[i + 1] for i, w in enumerate(rest[:-1]) if w in (">", ">>")]
        if any(w in ("|", "||", "&", "<", ">&", "<<", "&>") for w in cmd) or (
            any(w in (">", ">>") for w in rest) and prog not in ("echo", "printf", "true", ":")
        ):
            break
        if prog == "touch" and rest and not any(w.startswith("-") for w in rest):
            changes += [(t, True, _norm(f)) for f in rest]
        elif prog == "rm" and rest:
            files = [w for w in rest if not w.startswith("-")]
            if not files or any(w not in ("-f", "-r", "-rf", "-fr", "-R", "-v") for w in rest if w.startswith("-")):
                break
            changes += [(t, False, _norm(f)) for f in files]
        elif prog == "mkdir" and rest:
            changes += [(t, True, _norm(f)) for f in rest if not f.startswith("-")]
        elif prog in ("echo", "printf", "true", ":"):
            changes += [(t, True, _norm(f)) for f in redirect]
        elif prog == "sleep" and len(rest) == 1 and rest[0] == "infinity":
            return Script(tuple(changes), None, 0, False, words[2])
        elif prog == "sleep" and len(rest) == 1 and sleep_seconds(rest[0]) is not None:
            t += sleep_seconds(rest[0]) or 0.0
        elif prog == "exit" and len(rest) <= 1 and (not rest or rest[0].lstrip("-").isdigit()):
            return Script(tuple(changes), t, int(rest[0]) % 256 if rest else 0, True, words[2])
        else:
            break  # an unmodelled command: the files stay as they are from here on
    else:
        return Script(tuple(changes), t, 0, True, words[2])
    return Script(tuple(changes), None, 0, False, words[2])


# ---------------------------------------------------------------------------------------- exec


def exec_result(command: list[str], files: set[str]) -> tuple[str | None, bool]:
    """(failure text or None, modelled?) of an exec probe's command, given the existing files."""
    failed = f"command {json.dumps(command)} exited with 1"
    if not command:
        return "probe has no command", True
    prog, rest = command[0].rsplit("/", 1)[-1], command[1:]
    if prog in SHELLS and len(rest) == 2 and rest[0] == "-c":
        inner = _commands(rest[1])
        if inner is not None and len(inner) == 1:
            failure, known = exec_result(inner[0], files)
            if failure is not None and failure.startswith("command "):
                failure = failed.replace(" exited with 1", f" exited with {_code(failure)}")
            return failure, known
        return None, False
    if prog == "cat" and rest and not any(w.startswith("-") for w in rest):
        missing = [f for f in rest if _norm(f) not in files]
        return (f"cat: can't open '{missing[0]}': No such file or directory" if missing else None), True
    if prog == "ls" and len(rest) == 1 and not rest[0].startswith("-"):
        return (None if _norm(rest[0]) in files else f"ls: {rest[0]}: No such file or directory"), True
    test = rest[:-1] if prog == "[" and rest and rest[-1] == "]" else rest if prog == "test" else None
    if test is not None and len(test) == 2 and test[0] in ("-e", "-f", "-d", "-s"):
        return (None if _norm(test[1]) in files else failed), True
    if prog == "true" and not rest:
        return None, True
    if prog == "false" and not rest:
        return failed, True
    if prog == "exit" and len(rest) <= 1 and (not rest or rest[0].isdigit()):
        code = int(rest[0]) % 256 if rest else 0
        return (None if code == 0 else f"command {json.dumps(command)} exited with {code}"), True
    return None, False


def _code(failure: str) -> str:
    return failure.rsplit(" ", 1)[-1]


# ---------------------------------------------------------------------------------------- ports


def _port(value: Any, spec: dict[str, Any]) -> int | None:
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    for p in spec.get("ports") or []:
        if p.get("name") == value and p.get("containerPort") is not None:
            return int(p["containerPort"])
    return None


@functools.lru_cache(maxsize=256)
def _service_program(image: str) -> str | None:
    """The catalog's program for a service image (nginx, mysql, ...), else None."""
    from kubelet.images import catalog

    try:
        entry = catalog.lookup(image) or {}
    except Exception:  # an unreadable catalog: only the declared ports
        return None
    return str(entry["program"]) if entry.get("kind") == "service" and entry.get("program") else None


def listening_ports(spec: dict[str, Any], image: str) -> set[int]:
    """The ports the model says this container listens on (the module docstring's rule)."""
    ports = {int(p["containerPort"]) for p in spec.get("ports") or []
             if p.get("containerPort") is not None and (p.get("protocol") or "TCP") == "TCP"}  # fmt: skip
    if not spec.get("command"):
        default = SERVICE_PORTS.get(_service_program(image) or "")
        if default is not None:
            port, var = default
            env = {e.get("name"): e.get("value") for e in spec.get("env") or []}
            value = env.get(var)
            ports.add(int(value) if isinstance(value, str) and value.isdigit() else port)
    return ports


# ---------------------------------------------------------------------------------------- the model


@dataclass
class SimProbes:
    """The probe model of one run of `c`; `handle(field, probe)` is the prober's handler."""

    c: Container
    host: Callable[[], str]  # the pod IP (read when probing: it may come after the start)
    event: Callable[[str, str, str], None]
    script: Script | None = None
    ports: set[int] = field(default_factory=set)
    _told: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        from kubelet.runtime import argv

        self.script = script_of(argv(self.c.spec))
        self.ports = listening_ports(self.c.spec, self.c.image)

    def files(self, now: float | None = None) -> set[str]:
        if self.script is None:
            return set()
        return self.script.files_at((now or time.time()) - (self.c.started_at or 0.0))

    async def handle(self, field_: str, probe: dict[str, Any]) -> str | None:
        """None on success, else the failure's text (what the Unhealthy event shows)."""
        spec = self.c.spec
        if "exec" in probe:
            command = [str(x) for x in (probe["exec"] or {}).get("command") or []]
            failure, known = exec_result(command, self.files())
            if not known and field_ not in self._told:
                self._told.add(field_)
                kind = field_.removesuffix("Probe").capitalize()
                message = (f"{kind} probe: the simulated runtime does not model the command "
                           f"{json.dumps(command)}; it assumes success")  # fmt: skip
                log.info("container %s: %s", self.c.name, message)
                self.event("Normal", "ProbeAssumedSuccess", message)
            return failure
        for kind in ("httpGet", "tcpSocket", "grpc"):
            if kind in probe:
                h = probe[kind] or {}
                host = h.get("host") or self.host()
                port = _port(h.get("port"), spec)
                if port is None:
                    return f"unknown port {h.get('port')!r}"
                if port in self.ports:
                    return None
                if kind == "httpGet":
                    path = h.get("path") or "/"
                    scheme = (h.get("scheme") or "HTTP").lower()
                    url = f"{scheme}://{host}:{port}{path if path.startswith('/') else '/' + path}"
                    return f'Get "{url}": dial tcp {host}:{port}: connect: connection refused'
                if kind == "tcpSocket":
                    return f"dial tcp {host}:{port}: connect: connection refused"
                from kubelet.config import go_duration

                within = go_duration(float(probe.get("timeoutSeconds") or 1))
                return f'timeout: failed to connect service "{host}:{port}" within {within}: context deadline exceeded'
        return "probe has no handler"
