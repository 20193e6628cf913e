"""The kubelet's stats provider: what each running container, pod and node has used so far.

Kubernetes' kubelet reads cgroup counters (through cAdvisor or the CRI) and serves them twice:
as the Summary API (`/stats/summary`) and as Prometheus resource metrics (`/metrics/resource`,
resourcemetrics.py), which metrics-server scrapes. Here a *usage model* chosen by the runtime
answers, per running container, "core-seconds used since you started, and working set now":

    simulated   simusage.py    a deterministic model, driven by pod and Service annotations
    process     procusage.py   the real processes, read from /proc

and this module adds containers up into pods and nodes, keeping the counters monotonic as a
cgroup's are, although runs come and go:

    pod CPU     its running containers + the runs of its containers that ended (restarts)
    node CPU    the model's node overhead + every run it ever hosted (live ones, and the ended
                ones as they were last seen)
    memory      a gauge: what the running containers hold now (+ the node overhead)

Only running containers count; a pod with none is not reported. Numbers are computed when asked
(a scrape), never in the background; all of it runs on the kubelet's event loop.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kubelet.containers import Container
    from kubelet.podworker import PodWorker

RunKey = tuple[str, str, float]  # (pod uid, container name, started_at)


class UsageModel(Protocol):
    def begin(self, now: float) -> None: ...

    def container(self, worker: PodWorker, pod: dict[str, Any], c: Container, running: list[Container],
                  now: float) -> tuple[float, int] | None: ...  # fmt: skip

    def node_overhead(self, now: float) -> tuple[float, int]: ...

    def forget(self, key: RunKey) -> None: ...


@dataclass
class ContainerStats:
    name: str
    start_time: float
    cpu_seconds: float
    memory_bytes: int


@dataclass
class PodStats:
    namespace: str
    name: str
    uid: str
    start_time: float
    cpu_seconds: float = 0.0
    memory_bytes: int = 0
    containers: list[ContainerStats] = field(default_factory=list)


@dataclass
class NodeStats:
    name: str
    start_time: float
    timestamp: float  # when every number here was taken (whole milliseconds)
    cpu_seconds: float = 0.0
    memory_bytes: int = 0
    pods: list[PodStats] = field(default_factory=list)


def new_model(kubelet: Any, started: float) -> UsageModel:
    if kubelet.config.runtime == "process":
        from kubelet.procusage import ProcessUsage

        return ProcessUsage(kubelet, started)
    from kubelet.simusage import SimulatedUsage

    return SimulatedUsage(kubelet, started)


class StatsProvider:
    def __init__(self, kubelet: Any) -> None:
        self.kubelet = kubelet
        self.started = time.time()
        self.model = new_model(kubelet, self.started)
        # Per node: each live run's CPU when last seen; per pod uid the CPU of its ended runs;
        # the CPU of every ended run.
        self._live: dict[str, dict[RunKey, float]] = {}
        self._ended_by_pod: dict[str, dict[str, float]] = {}
        self._ended: dict[str, float] = {}

    def node(self, node_name: str) -> NodeStats:
        """The stats of one of our nodes, now."""
        now = round(time.time(), 3)  # the exposition format carries milliseconds: agree with it
        self.model.begin(now)
        stats = NodeStats(node_name, self.started, now)
        live = self._live.setdefault(node_name, {})
        ended_by_pod = self._ended_by_pod.setdefault(node_name, {})
        seen: set[RunKey] = set()
        uids: set[str] = set()
        for pod in self.kubelet.pods_on(node_name):
            md = pod.get("metadata") or {}
            worker = self.kubelet.workers.get(f"{md.get('namespace') or 'default'}/{md.get('name')}")
            if worker is None or worker.uid != md.get("uid"):
                continue
            uid = worker.uid or ""
            uids.add(uid)
            running = [c for c in [*worker.inits, *worker.mains] if c.state == "running" and c.started_at]
            p = PodStats(worker.namespace, worker.name, uid, _pod_start(worker))
            for c in running:
                usage = self.model.container(worker, pod, c, running, now)
                if usage is None:
                    continue
                key = (uid, c.name, c.started_at or 0.0)
                seen.add(key)
                live[key] = usage[0]
                p.containers.append(ContainerStats(c.name, c.started_at or now, usage[0], usage[1]))
            if not p.containers:
                continue
            p.cpu_seconds = ended_by_pod.get(uid, 0.0) + sum(c.cpu_seconds for c in p.containers)
            p.memory_bytes = sum(c.memory_bytes for c in p.containers)
            stats.pods.append(p)
        self._retire(node_name, seen, uids)
        overhead_cpu, overhead_memory = self.model.node_overhead(now)
        stats.cpu_seconds = overhead_cpu + self._ended.get(node_name, 0.0) + sum(live.values())
        stats.memory_bytes = overhead_memory + sum(p.memory_bytes for p in stats.pods)
        return stats

    def _retire(self, node_name: str, seen: set[RunKey], uids: set[str]) -> None:
        """Runs of this node that are no longer running: their last CPU moves to the ended totals."""
        live, ended_by_pod = self._live[node_name], self._ended_by_pod[node_name]
        for key in [k for k in live if k not in seen]:
            cpu = live.pop(key)
            self.model.forget(key)
            self._ended[node_name] = self._ended.get(node_name, 0.0) + cpu
            ended_by_pod[key[0]] = ended_by_pod.get(key[0], 0.0) + cpu
        for uid in [u for u in ended_by_pod if u not in uids]:
            del ended_by_pod[uid]  # the pod is gone: only the node remembers its runs


def _pod_start(worker: PodWorker) -> float:
    starts = [c.started_at for c in [*worker.inits, *worker.mains] if c.started_at]
    return min(starts) if starts else time.time()
