"""The processes a controller benchmark needs around a running API server: one kubelet simulating
many nodes, the scheduler and the controller-manager, started as a user would start them."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from tests.support.apiserver import APIServerProcess  # noqa: E402
from tests.support.component import ComponentProcess, free_port  # noqa: E402


def start_components(
    server: APIServerProcess, *, kubelet_flags: list[str], scheduler_flags: list[str], controllers: str,
    manager_flags: list[str], procs: list[ComponentProcess], kubelet_start_timeout: float = 60,
) -> None:  # fmt: skip
    """Start them into `procs` (appended one by one, so a caller's `finally` stops what did start)."""
    kport, sport, mport = free_port(), free_port(), free_port()
    kubelet_args = ["--master", server.url, "--node-name", "sim", "--port", str(kport), *kubelet_flags]
    procs.append(ComponentProcess("kubelet", kubelet_args, health_port=kport).start(kubelet_start_timeout))
    procs.append(ComponentProcess("scheduler", ["--master", server.url, "--port", str(sport), *scheduler_flags],
                                  health_port=sport).start(60))  # fmt: skip
    procs.append(ComponentProcess("controller_manager", ["--master", server.url, "--port", str(mport),
                                                         "--controllers", controllers, *manager_flags],
                                  health_port=mport).start(60))  # fmt: skip
