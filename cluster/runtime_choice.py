"""Which container runtime `mini-k8s up` gives its kubelets when it is not told (`--runtime auto`).

A class needs to *see* containers run, crash and answer HTTP, so real processes are the default
wherever they can work: Linux, root (the process runtime makes network namespaces, veths, cgroups
and mounts), and the host programs it drives (`nsenter` for exec and probes, `nft` for
kube-proxy's Service rules). Anywhere else — a laptop without sudo, macOS — the simulated runtime
still gives a whole working cluster whose pods run nothing. Either way `up` says which one it
chose and why in one sentence, with how to get the other.
"""

from __future__ import annotations

import os
import shutil
import sys

RUNTIMES = ("auto", "simulated", "process")
NEEDED_PROGRAMS = ("nsenter", "nft")


def missing_for_process() -> str | None:
    """Why this machine cannot run real pods, or None when it can."""
    if sys.platform != "linux":
        return f"it is {sys.platform}, not Linux"
    if os.geteuid() != 0:
        return "it is not running as root"
    absent = [p for p in NEEDED_PROGRAMS if shutil.which(p) is None]
    if absent:
        return f"{' and '.join(absent)} {'is' if len(absent) == 1 else 'are'} not installed"
    return None


def choose_runtime(requested: str) -> tuple[str, str]:
    """(the runtime, the sentence `up` prints about it)."""
    if requested == "process":
        return "process", "Runtime: process (--runtime process): pods are real processes."
    if requested == "simulated":
        return "simulated", "Runtime: simulated (--runtime simulated): pods run no processes."
    why_not = missing_for_process()
    if why_not is None:
        return "process", ("Runtime: process: pods are real processes, since this is Linux and we are root "
                           "(--runtime simulated for pods that run nothing).")  # fmt: skip
    return "simulated", (f"Runtime: simulated: pods run no processes, because {why_not}; for real pods run "
                         "`sudo .venv/bin/mini-k8s up` on Linux (with nsenter and nft installed).")  # fmt: skip
