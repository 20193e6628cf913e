"""The simulated runtime: containers that follow a plan instead of running (today's default).

Nothing is executed. runtime.py reads a plan from the command (`sleep 5` runs five seconds,
`exit 3` fails at once, a Job's unmodelled command completes after --job-run-time, anything
else runs until stopped); this module keeps the clock for it, and logs.py derives a stable
synthetic log from the run. Stopping is modelled as a process that honours SIGTERM: it exits 0
after --container-stop-delay (never longer than the grace period). That is what lets one
process host 1,000 nodes - and why `kubectl logs` shows no real output here: use
`mini-kubelet --runtime process` for that.
Probes are modelled (simprobe.py): an exec probe sees the files the container's shell script
has made by then, httpGet/tcpSocket/grpc reach the ports it declares or its image serves. A run
that a liveness or startup probe failed dies of the SIGTERM (exit 143, reason Error, as a shell
does), so restartPolicy OnFailure restarts it too, as Kubernetes does.
Ephemeral containers (`kubectl debug`) follow their plans like any other container (a debugging
shell: running until stopped); `exec` and `attach` are refused, as nothing runs to join.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from kubelet.cri import ContainerRuntime, Exit
from kubelet.logs import LogStore, Run
from kubelet.simprobe import SimProbes

if TYPE_CHECKING:
    from kubelet.containers import Container
    from kubelet.podworker import PodWorker

VERSION = "mini-simulated://0.1"


class SimulatedRuntime(ContainerRuntime):
    name = "simulated"
    version = VERSION

    def __init__(self, kubelet: Any) -> None:
        self.config = kubelet.config
        self.store = LogStore()
        self.logs = self.store

    async def start(self, worker: PodWorker, pod: dict[str, Any], c: Container, now: float) -> str:
        c.run = self._new_run(worker, c, now)
        return "fake://" + secrets.token_hex(32)

    def poll(self, worker: PodWorker, c: Container, now: float) -> Exit | float | None:
        if c.stop_at is not None:
            if now < c.stop_at:
                return c.stop_at
            code = 143 if c.kill_reason else 0  # a failed probe: the unhealthy process dies of SIGTERM
            if c.run is not None:
                c.run.finish(now, code, "SIGTERM")
            return Exit(now, code)
        if c.finish_at is None:
            return None
        if now < c.finish_at:
            return c.finish_at
        if c.run is not None:
            c.run.finish(c.finish_at, c.plan.exit_code)
        return Exit(c.finish_at, c.plan.exit_code)

    def probe_model(
        self, worker: PodWorker, c: Container, event: Callable[[str, str, str], None]
    ) -> Callable[[str, dict[str, Any]], Awaitable[str | None]] | None:
        return SimProbes(c, lambda: worker.pod_ip or "127.0.0.1", event).handle

    def stop(self, worker: PodWorker, c: Container, now: float, grace: float) -> None:
        if c.stop_at is None:
            c.stop_at = now + min(self.config.container_stop_delay, grace)

    def adopt(self, worker: PodWorker, c: Container) -> None:
        """The containers "kept running" while no kubelet watched: rebuild their synthetic logs."""
        c.run = self._new_run(worker, c, c.started_at or time.time())
        if c.state == "terminated":
            c.run.finish(c.finished_at or time.time(), c.exit_code)

    def remove_pod(self, worker: PodWorker) -> None:
        self.store.forget_pod(worker.namespace, worker.name)

    def _new_run(self, worker: PodWorker, c: Container, started: float) -> Run:
        run = Run(c.name, c.image, c.plan.description, started, self.config.log_line_interval)
        self.store.start((worker.namespace, worker.name, c.name), run)
        return run
