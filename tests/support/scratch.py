"""Where the test-support process wrappers keep a process's log and data: never loose in /tmp.

`APIServerProcess`, `ComponentProcess` and `EtcdProcess` each used to make a `mini-k8s-<name>-*`
directory in /tmp that nothing removed (a component's log must outlive `stop()`: tests read it
after), and thousands piled up. Now each gets its directory from `mkdtemp()` here, under one root:

- in a test run, a directory of pytest's own base temp dir (tests/conftest.py sets it with `use()`,
  one per pytest-xdist worker): a passing run removes it at the end; after a failure it stays, so
  the logs of the components behind the failure can be read (the run's report prints the path),
  and pytest deletes it three runs later, as it does every `tmp_path`;
- anywhere else (bench/ uses the wrappers) a `mini-k8s-support-*` directory of this process,
  removed when it exits.

`child_env()` is the environment the wrappers start their processes with: the test process's
temp dir as TMPDIR. In a test run that is the session's private temp dir (tests/conftest.py), so
whatever a component leaves in its temp dir (say, because a test SIGKILLed it) is found by the
check there, instead of being lost among the files other programs keep in /tmp.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

_root: Path | None = None


def use(root: Path | None) -> None:
    """Make the wrappers' directories under `root` from now on (None: back to the default)."""
    global _root
    _root = root


def root() -> Path | None:
    """The root `use()` set, if any."""
    return _root


def mkdtemp(prefix: str) -> str:
    """A new private directory for one process's log and data, e.g. prefix "mini-k8s-kubelet-"."""
    return tempfile.mkdtemp(prefix=prefix, dir=_root or _process_root())


def child_env() -> dict[str, str]:
    """The environment for a wrapper's process: this one's, with this process's temp dir as TMPDIR."""
    return {**os.environ, "TMPDIR": tempfile.gettempdir()}


@functools.cache
def _process_root() -> Path:
    path = Path(tempfile.mkdtemp(prefix="mini-k8s-support-"))
    atexit.register(shutil.rmtree, path, True)
    return path
