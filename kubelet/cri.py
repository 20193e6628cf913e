"""The container runtime interface behind the pod workers: what a kubelet asks of a runtime.

Kubernetes' kubelet talks to containerd or CRI-O through the CRI; the pod worker decides *what*
should run (restartPolicy, back-off, init order, deletion) and the runtime only does it. Here the
same split, in-process, with two runtimes chosen by `mini-kubelet --runtime`:

    simulated  (simulated.py)  nothing runs: a container follows a plan read from its command
                               (runtime.py), so 1,000 nodes fit in one process; the default.
    process    (process.py)    a container is a real child process: the image catalog
                               (images/catalog.yaml) says what the image runs, stdout/stderr go to
                               log files, exit codes are real, memory limits are a cgroup.

The pod worker calls, per container:
    start(worker, pod, c, now)   start a new run, return its container ID (raises StartError:
                                 the container stays waiting)
    poll(worker, c, now)         has the run ended?  -> Exit, or when to look again (None: never)
    stop(worker, c, now, grace)  begin stopping it (SIGTERM; SIGKILL once `grace` seconds passed)
    adopt(worker, c)             a kubelet restart: find the run a previous kubelet started
and, per pod, `remove_pod(worker)` when the pod is gone for good. `logs` serves /containerLogs.
The same calls run a pod's ephemeral containers (`kubectl debug`); the pod worker never restarts them.
Probes run on the process runtime (`probe_context`: prober.py runs them against the process) and
are modelled on the simulated one (`probe_model`: simprobe.py answers them).
Only the process runtime has `exec_target(c)` and `attach_target(c)` (what the kubelet's
/exec and /attach need, streaming.py and attach.py); without them both are refused.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kubelet.containers import Container
    from kubelet.node import NodeState
    from kubelet.podworker import PodWorker


@dataclass(frozen=True)
class Exit:
    """A run that ended: when, with which code, and why (Completed, Error, OOMKilled)."""

    finished_at: float
    exit_code: int
    reason: str = ""


class StartError(Exception):
    """The container cannot start: it stays waiting with this reason (ErrImagePull,
    CreateContainerConfigError, RunContainerError) and message, and the worker retries later."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class LogReader(Protocol):
    async def read(
        self,
        key: tuple[str, str, str],
        *,
        follow: bool = False,
        tail_lines: int | None = None,
        timestamps: bool = False,
        previous: bool = False,
        since_seconds: float | None = None,
        limit_bytes: int | None = None,
    ) -> AsyncIterator[bytes]: ...

    def forget_pod(self, namespace: str, pod: str) -> None: ...


class ContainerRuntime(ABC):
    name: str  # "simulated" | "process"
    version: str  # the Node's status.nodeInfo.containerRuntimeVersion
    logs: LogReader

    async def run(self) -> None:  # noqa: B027 - optional background work (the process runtime's sweeper)
        """Background work for the kubelet's lifetime; returns at once when there is none."""

    def close(self) -> None:  # noqa: B027 - optional
        """The kubelet stops: containers keep running (a kubelet restart adopts them)."""

    @abstractmethod
    async def start(self, worker: PodWorker, pod: dict[str, Any], c: Container, now: float) -> str: ...

    @abstractmethod
    def poll(self, worker: PodWorker, c: Container, now: float) -> Exit | float | None: ...

    @abstractmethod
    def stop(self, worker: PodWorker, c: Container, now: float, grace: float) -> None: ...

    @abstractmethod
    def adopt(self, worker: PodWorker, c: Container) -> None: ...

    async def prepare_node(self, node: NodeState) -> None:  # noqa: B027 - optional
        """The node is registered and has its podCIDR: set up what its pods will share."""

    async def ensure_sandbox(self, worker: PodWorker) -> None:  # noqa: B027 - optional
        """The pod's sandbox (its network namespace) exists; called once the pod has its IP."""

    def probe_context(self, c: Container) -> tuple[Callable[[], int | None], dict[str, str], str] | None:
        """What probes of this run need (its pid, its environment, the host httpGet/tcpSocket
        probes reach it on); None: this runtime has no probes."""
        return None

    def probe_model(
        self, worker: PodWorker, c: Container, event: Callable[[str, str, str], None]
    ) -> Callable[[str, dict[str, Any]], Awaitable[str | None]] | None:
        """A runtime with no probe_context may model probes instead (the simulated runtime,
        simprobe.py): the prober's handler `(field, probe) -> failure text or None`."""
        return None

    def remove_pod(self, worker: PodWorker) -> None:  # noqa: B027 - optional
        """The pod is gone: remove whatever the runtime keeps for it."""


def new_runtime(kubelet: Any) -> ContainerRuntime:
    """The runtime `--runtime` names (imported lazily: the simulated one needs nothing of Linux)."""
    if kubelet.config.runtime == "process":
        from kubelet.process import ProcessRuntime

        return ProcessRuntime(kubelet)
    from kubelet.simulated import SimulatedRuntime

    return SimulatedRuntime(kubelet)
