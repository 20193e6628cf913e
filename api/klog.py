"""klog on Python's logging: the logging flags and log files every Kubernetes component shares.

Kubernetes components log through k8s.io/klog, so `-v`, `--logtostderr`, `--log-dir` mean the same
thing for all of them. We keep those meanings:

| flags                                         | where lines go                                    |
|-----------------------------------------------|---------------------------------------------------|
| (none) — `--logtostderr` is true by default   | stderr only                                       |
| `--logtostderr=false [--log-dir=DIR]`         | files in DIR (default: the temp dir); ERROR and   |
|                                               | above also to stderr (`--stderrthreshold`)        |
| `--logtostderr=false --alsologtostderr`       | files and every line on stderr                    |

Files are named as klog names them, one per severity, created when the first line of that
severity (or a higher one) is written, each with a `<program>.<SEVERITY>` symlink to the newest:

    DIR/mini-controller-manager.myhost.alice.log.INFO.20261123-222312.4242
    DIR/mini-controller-manager.INFO -> mini-controller-manager.myhost.alice.log.INFO.20261123-222312.4242

The INFO file holds every line, the WARNING file warnings and worse, and so on. A line looks like
klog's `Lmmdd hh:mm:ss.uuuuuu pid file:line] message` (L = I, W, E or F) — with a Python file name.
`-v` picks how much: 0 warnings and errors only, 1-3 adds info, 4 adds debug and one line per HTTP
request (mini-k8s' components log little at info; klog's V-levels go higher, we stop at 4).
klog rotates files at 1.8 GB; we do not.
"""

from __future__ import annotations

import getpass
import logging
import os
import platform
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import TextIO

SEVERITIES = ("INFO", "WARNING", "ERROR", "FATAL")
_LEVELS = {"INFO": logging.INFO, "WARNING": logging.WARNING, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL}


@dataclass
class LogSettings:
    program: str
    verbosity: int = 0
    logtostderr: bool = True
    alsologtostderr: bool = False
    log_dir: str = ""
    stderrthreshold: str = "ERROR"


def severity(level: int) -> str:
    if level >= logging.CRITICAL:
        return "FATAL"
    if level >= logging.ERROR:
        return "ERROR"
    if level >= logging.WARNING:
        return "WARNING"
    return "INFO"


class KlogFormatter(logging.Formatter):
    """`I1123 22:23:12.123456    4242 manager.py:37] caches synced`"""

    def format(self, record: logging.LogRecord) -> str:
        t = time.localtime(record.created)
        micros = int((record.created % 1) * 1_000_000)
        head = (
            f"{severity(record.levelno)[0]}{t.tm_mon:02d}{t.tm_mday:02d} "
            f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{micros:06d} {record.process:7d} "
            f"{record.filename}:{record.lineno}] "
        )
        text = head + record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def _short_host() -> str:
    try:
        return socket.gethostname().split(".")[0] or "unknownhost"
    except OSError:
        return "unknownhost"


def _user() -> str:
    try:
        return getpass.getuser().replace("\\", "_")
    except (KeyError, OSError):
        return "unknownuser"


class KlogFileHandler(logging.Handler):
    """One file per severity in `directory`, opened on first use, with the `<program>.<SEV>` link."""

    def __init__(self, directory: str, program: str) -> None:
        super().__init__(logging.DEBUG)
        self.directory = directory
        self.program = program
        self.files: dict[str, TextIO] = {}

    def file_name(self, sev: str, started: float) -> str:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(started))
        return f"{self.program}.{_short_host()}.{_user()}.log.{sev}.{stamp}.{os.getpid()}"

    def _open(self, sev: str) -> TextIO:
        now = time.time()
        name = self.file_name(sev, now)
        f = open(os.path.join(self.directory, name), "a", encoding="utf-8")  # noqa: SIM115 (kept open)
        created = time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(now))
        f.write(
            f"Log file created at: {created}\n"
            f"Running on machine: {_short_host()}\n"
            f"Binary: {self.program} on Python {platform.python_version()} for {sys.platform}/{platform.machine()}\n"
            "Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg\n"
        )
        link = os.path.join(self.directory, f"{self.program}.{sev}")
        try:  # the link always points at the newest file; a failure here is not worth dying for
            # made beside it and renamed over it: a reader never finds the link missing
            temp = f"{link}.{os.getpid()}.tmp"
            if os.path.lexists(temp):
                os.remove(temp)
            os.symlink(name, temp)
            os.replace(temp, link)
        except OSError:
            pass
        return f

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + "\n"
            level = severity(record.levelno)
            for sev in SEVERITIES[: SEVERITIES.index(level) + 1]:
                f = self.files.get(sev)
                if f is None:
                    f = self.files[sev] = self._open(sev)
                f.write(line)
                f.flush()
        except Exception:
            self.handleError(record)

    def close(self) -> None:
        for f in self.files.values():
            f.close()
        self.files.clear()
        super().close()


def level_for(verbosity: int) -> int:
    return logging.DEBUG if verbosity >= 4 else logging.INFO if verbosity >= 1 else logging.WARNING


def setup(settings: LogSettings) -> None:
    """Configure the root logger from the klog flags; ValueError for an unusable --log-dir."""
    threshold = settings.stderrthreshold.upper()
    if threshold.isdigit() and int(threshold) < len(SEVERITIES):
        threshold = SEVERITIES[int(threshold)]
    if threshold not in _LEVELS:
        raise ValueError(f"--stderrthreshold: {settings.stderrthreshold!r} is not one of INFO, WARNING, ERROR, FATAL")
    formatter = KlogFormatter()
    handlers: list[logging.Handler] = []
    stderr = logging.StreamHandler(sys.stderr)
    if settings.logtostderr:
        handlers.append(stderr)
    else:
        directory = settings.log_dir or tempfile.gettempdir()
        if not os.path.isdir(directory) or not os.access(directory, os.W_OK | os.X_OK):
            raise ValueError(f"log: cannot create log: {directory!r} is not a writable directory (--log-dir)")
        handlers.append(KlogFileHandler(directory, settings.program))
        if not settings.alsologtostderr:
            stderr.setLevel(_LEVELS[threshold])
        handlers.append(stderr)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    for h in handlers:
        h.setFormatter(formatter)
        root.addHandler(h)
    root.setLevel(level_for(settings.verbosity))
    # One line per HTTP request drowns everything else: only at -v 4.
    logging.getLogger("httpx").setLevel(logging.DEBUG if settings.verbosity >= 4 else logging.WARNING)
