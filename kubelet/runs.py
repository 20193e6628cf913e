"""One container run on disk and in the kernel: its directory, its shim, its process group, its cgroup.

The process runtime (process.py) decides when to start, stop and remove runs; this module holds
the small operations on one run that the runtime, its sweeper and `python -m kubelet.cleanup`
(`mini-k8s down`) share: where the memory cgroups live on this machine (v2 if its memory
controller is there, else v1), reading what the shim wrote (pid.json, exit.json), signalling the
container's process group and cgroup, and removing a run with everything it left.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CGROUP_NAME = "mini-k8s"


def cgroup_parent() -> tuple[Path | None, int]:
    """Where our memory cgroups go, and the cgroup version (0: no memory controller here)."""
    root = Path("/sys/fs/cgroup")
    v2 = root / "cgroup.controllers"
    if v2.exists() and "memory" in v2.read_text().split():
        return root / CGROUP_NAME, 2
    if (root / "memory" / "memory.limit_in_bytes").exists():
        return root / "memory" / CGROUP_NAME, 1
    return None, 0


@dataclass
class Handle:
    """One run, as the runtime knows it."""

    directory: Path
    shim: subprocess.Popen[bytes] | None = None  # None when adopted (not our child)
    kill_at: float | None = None
    term_sent: bool = False
    killed: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    def pid(self) -> int | None:
        try:
            return int(json.loads((self.directory / "pid.json").read_text())["pid"])
        except (OSError, ValueError, KeyError):
            return None

    def shim_alive(self) -> bool:
        if self.shim is not None:
            return self.shim.poll() is None
        try:
            shim = int(json.loads((self.directory / "pid.json").read_text())["shim"])
        except (OSError, ValueError, KeyError):
            return False
        return Path(f"/proc/{shim}").exists()

    def kill_shim(self) -> None:
        try:
            os.kill(int(json.loads((self.directory / "pid.json").read_text())["shim"]), signal.SIGKILL)
        except (OSError, ValueError, KeyError):
            pass

    def exit(self) -> dict[str, Any] | None:
        try:
            return dict(json.loads((self.directory / "exit.json").read_text()))
        except (OSError, ValueError):
            return None


def signal_run(directory: Path, cgroup: str, sig: int) -> None:
    """Send `sig` to the container's process group and, for SIGKILL, to all of its cgroup."""
    try:
        pid = int(json.loads((directory / "pid.json").read_text())["pid"])
        os.killpg(pid, sig)
    except (OSError, ValueError, KeyError):
        pass
    if cgroup and sig == signal.SIGKILL:
        try:
            for p in Path(cgroup, "cgroup.procs").read_text().split():
                try:
                    os.kill(int(p), sig)
                except (ProcessLookupError, ValueError):
                    pass
        except OSError:
            pass


def remove_run(directory: Path, force: bool = False) -> bool:
    """Kill what is left of a run, remove its cgroup and directory; False if the cgroup is still busy
    or the shim has not finished yet (it writes exit.json when the container dies: removing the
    directory under it would leave that file behind). `force`: kill the shim too."""
    try:
        meta = json.loads((directory / "meta.json").read_text())
    except (OSError, ValueError):
        meta = {}
    cgroup = meta.get("cgroup") or ""
    signal_run(directory, cgroup, signal.SIGKILL)
    shim = Handle(directory)
    if shim.shim_alive():
        if not force:
            return False
        shim.kill_shim()
    for path in (cgroup, meta.get("cpu_cgroup") or ""):
        if path and Path(path).exists():
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError:
                return False
    shutil.rmtree(directory, ignore_errors=True)
    return True


def enable_controllers(parent: Path) -> None:
    """cgroup v2: let the runs below `parent` have memory and cpu files (each controller must be
    switched on in every ancestor's subtree_control); one the kernel refuses is left off."""
    for level in (parent.parent, parent):
        for controller in ("+memory", "+cpu"):
            try:
                (level / "cgroup.subtree_control").write_text(controller)
            except OSError:
                pass
