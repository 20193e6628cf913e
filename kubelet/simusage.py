"""What a simulated container "uses": a deterministic model a lab can turn up and down on purpose.

Nothing runs in the simulated runtime, so there is no CPU time to measure. Instead a pod says
what it uses, in two annotations, written as Kubernetes quantities for the whole pod:

    simulation.mini-k8s.io/cpu-usage: "500m"       cores, split evenly over its running containers
    simulation.mini-k8s.io/memory-usage: "128Mi"   bytes, split evenly the same way

    annotation absent (or not a quantity)   the container uses ...
    -------------------------------------   ------------------------------------------------------
    cpu-usage                               0 cores
    memory-usage                            its memory request, if it has one; else 8Mi

CPU is a counter, as in a cgroup: core-seconds since the container started running. It is the
integral of the rate over time, so `kubectl annotate pod web simulation.mini-k8s.io/cpu-usage=2`
at time t changes the slope from t on and keeps what was used before t. The kubelet learns of
the change from its pods informer and closes the old stretch right then (`on_pod_update`); a
container first seen after it started is assumed to have used its current rate since its start.
The even split is re-read whenever the kubelet looks (a scrape or a pod update), so a container
starting or ending in a pod moves the shares from that moment on.

Memory is a gauge: the working set right now. The node itself uses NODE_OVERHEAD (the system
daemons a real node runs) on top of its pods, so `kubectl top node` never shows an empty node as 0.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from api.quantity import QuantityError, parse_quantity

if TYPE_CHECKING:
    from kubelet.containers import Container
    from kubelet.podworker import PodWorker

log = logging.getLogger("kubelet.stats")

CPU_ANNOTATION = "simulation.mini-k8s.io/cpu-usage"
MEMORY_ANNOTATION = "simulation.mini-k8s.io/memory-usage"
IDLE_WORKING_SET = 8 * 1024 * 1024  # 8Mi: a container without memory annotation or request
NODE_OVERHEAD_CPU = 0.05  # cores (50m) the node's own daemons use, all the time
NODE_OVERHEAD_MEMORY = 256 * 1024 * 1024  # 256Mi of working set they hold

RunKey = tuple[str, str, float]  # (pod uid, container name, started_at): one run of a container


@dataclass
class Integrator:
    """A counter with a piecewise-constant slope: `cpu` core-seconds at `at`, growing by `rate`/s."""

    cpu: float
    rate: float
    at: float

    def advance(self, now: float, rate: float) -> float:
        """Charge the old rate up to `now`, then continue with `rate`."""
        if now > self.at:
            self.cpu += self.rate * (now - self.at)
            self.at = now
        self.rate = rate
        return self.cpu


def _quantity(pod: dict[str, Any], annotation: str) -> int | None:
    """The annotation as nano-units, or None when absent or not a quantity."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(annotation)
    if text is None:
        return None
    try:
        return max(parse_quantity(str(text)).nanos, 0)
    except QuantityError:
        log.warning(
            "pod %s: annotation %s=%r is not a quantity; ignored", pod["metadata"].get("name"), annotation, text
        )
        return None


def _memory_request(c: Container) -> int | None:
    request = ((c.spec.get("resources") or {}).get("requests") or {}).get("memory")
    try:
        return parse_quantity(str(request)).value() if request is not None else None
    except QuantityError:
        return None


class SimulatedUsage:
    """The model above, one Integrator per container run."""

    def __init__(self, kubelet: Any, started: float) -> None:
        self.kubelet = kubelet
        self.started = started
        self.runs: dict[str, dict[tuple[str, float], Integrator]] = {}  # pod uid -> (container, started) -> ...
        kubelet.pods.add_event_handler(on_update=self.on_pod_update, on_delete=self.on_pod_delete)

    def begin(self, now: float) -> None:
        """Nothing to read up front: the model is in memory."""

    def container(self, worker: PodWorker, pod: dict[str, Any], c: Container, running: list[Container],
                  now: float) -> tuple[float, int] | None:  # fmt: skip
        """(core-seconds since the run started, working set bytes) of the running `c`, at `now`."""
        share = max(len(running), 1)
        cpu = _quantity(pod, CPU_ANNOTATION)
        rate = (cpu or 0) / 1e9 / share
        memory = _quantity(pod, MEMORY_ANNOTATION)
        if memory is not None:
            working_set = memory // 10**9 // share
        else:
            request = _memory_request(c)
            working_set = request if request is not None else IDLE_WORKING_SET
        started = c.started_at if c.started_at is not None else now
        runs = self.runs.setdefault(worker.uid or "", {})
        run = runs.get((c.name, started))
        if run is None:
            run = runs[(c.name, started)] = Integrator(0.0, rate, started)
        return run.advance(now, rate), working_set

    def node_overhead(self, now: float) -> tuple[float, int]:
        return NODE_OVERHEAD_CPU * max(now - self.started, 0.0), NODE_OVERHEAD_MEMORY

    def forget(self, key: RunKey) -> None:
        runs = self.runs.get(key[0], {})
        runs.pop(key[1:], None)
        if not runs:
            self.runs.pop(key[0], None)

    def on_pod_delete(self, pod: dict[str, Any]) -> None:
        self.runs.pop((pod.get("metadata") or {}).get("uid") or "", None)

    def on_pod_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """An annotation changed: close the stretch at the old rate now, start the new one."""
        before = (old.get("metadata") or {}).get("annotations") or {}
        after = (new.get("metadata") or {}).get("annotations") or {}
        if all(before.get(a) == after.get(a) for a in (CPU_ANNOTATION, MEMORY_ANNOTATION)):
            return
        worker = self.kubelet.workers.get(f"{new['metadata'].get('namespace') or 'default'}/{new['metadata']['name']}")
        if worker is None or worker.uid != new["metadata"].get("uid"):
            return
        now = time.time()
        running = [c for c in [*worker.inits, *worker.mains] if c.state == "running" and c.started_at]
        for pod in (old, new):  # charge up to now at the old rate, then switch to the new one
            for c in running:
                self.container(worker, pod, c, running, now)
