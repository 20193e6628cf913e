"""What a simulated container "uses": a deterministic model a lab can turn up and down on purpose.

Nothing runs in the simulated runtime, so there is no CPU time to measure. Instead annotations say
what is used, written as Kubernetes quantities, in two places:

    on a pod: what the pod itself uses, for the whole pod
    simulation.mini-k8s.io/cpu-usage: "500m"        cores
    simulation.mini-k8s.io/memory-usage: "128Mi"    bytes of working set

    on a Service: what its clients send it, the load a load generator would put on it
    simulation.mini-k8s.io/cpu-load: "1"            cores of work, for all its pods together
    simulation.mini-k8s.io/memory-load: "256Mi"     bytes the work in flight holds, all pods together

A Service's load is spread evenly over its *ready endpoints*: the pods under `addresses` in its
Endpoints object (the endpoints controller puts a pod there once it is Ready), as a Service's
virtual IP spreads connections over them. Each of those pods gets its share on top of its own
usage; a pod behind several loaded Services gets a share of each. So scaling out behind a loaded
Service lowers every pod's usage, as in Kubernetes' HPA walkthrough: 1 core over two pods is 500m
each, over three 333m each. Nothing carries traffic (there is no kube-proxy): the load is
arithmetic, not requests. A lab turns it up, down and off with

    kubectl annotate service php-apache simulation.mini-k8s.io/cpu-load=1 --overwrite
    kubectl annotate service php-apache simulation.mini-k8s.io/cpu-load=250m --overwrite
    kubectl annotate service php-apache simulation.mini-k8s.io/cpu-load-     # no annotation, no load

A pod's total is split evenly over its running containers:

    container CPU rate      (pod cpu-usage + its Services' cpu-load shares) / running containers
    container working set   pod memory-usage / running containers, or without that annotation its
                            memory request, else 8Mi; + its Services' memory-load shares / running
                            containers

    (a cpu-usage, cpu-load or memory-load that is absent or not a quantity counts as 0)

Limits are not enforced: nothing throttles a container above its CPU limit, so a lab keeps each
pod's share under it. While a Service has ready endpoints their shares add up to its whole load,
at every moment, so an average over the pods (what the HPA computes) is exact even while the
rates of single pods, measured over metrics-server's last window, still mix old and new shares.

CPU is a counter, as in a cgroup: core-seconds since the container started running. It is the
integral of the rate over time, so `kubectl annotate pod web simulation.mini-k8s.io/cpu-usage=2`
at time t changes the slope from t on and keeps what was used before t. The same holds for a
pod's share of a Service's load, which changes when the Service's annotation changes or when its
ready endpoints do (a pod added, gone, Ready or not). The kubelet learns of each change from an
informer (pods, services, endpoints) and closes the old stretch right then (`on_pod_update`,
`ServiceLoads.refresh`); a container first seen after it started is assumed to have used its
current rate since its start. The even split over containers is re-read whenever the kubelet
looks (a scrape or a change), so a container starting or ending in a pod moves the shares from
that moment on. Given the same annotations and endpoints the numbers are always the same; only
the moment the kubelet learns of a change (milliseconds after the write) is not fixed.

Memory is a gauge: the working set right now. The node itself uses NODE_OVERHEAD (the system
daemons a real node runs) on top of its pods, so `kubectl top node` never shows an empty node as 0.

What the kubelet watches for the Service load: one services and one endpoints informer per kubelet
process, however many nodes it hosts, and only in the simulated runtime. Endpoints rather than
EndpointSlices: one object per Service, under the Service's own name, so a change is worked out
for that one Service (its previous shares are remembered) without collecting slices, and an
Endpoints change of a Service without load costs one lookup.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from api.quantity import QuantityError, parse_quantity
from client.informer import meta_namespace_key

if TYPE_CHECKING:
    from client.informer import Informer
    from kubelet.containers import Container
    from kubelet.podworker import PodWorker

log = logging.getLogger("kubelet.stats")

CPU_ANNOTATION = "simulation.mini-k8s.io/cpu-usage"
MEMORY_ANNOTATION = "simulation.mini-k8s.io/memory-usage"
CPU_LOAD_ANNOTATION = "simulation.mini-k8s.io/cpu-load"
MEMORY_LOAD_ANNOTATION = "simulation.mini-k8s.io/memory-load"
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


@dataclass(frozen=True)
class Share:
    """What a pod gets of the load of its Services: cores and bytes, for the whole pod."""

    cpu: float = 0.0
    memory: float = 0.0


def _quantity(obj: dict[str, Any], annotation: str) -> int | None:
    """The annotation as nano-units, or None when absent or not a quantity."""
    md = obj.get("metadata") or {}
    text = (md.get("annotations") or {}).get(annotation)
    if text is None:
        return None
    try:
        return max(parse_quantity(str(text)).nanos, 0)
    except QuantityError:
        kind = (obj.get("kind") or "object").lower()
        log.warning("%s %s: annotation %s=%r is not a quantity; ignored", kind, md.get("name"), annotation, text)
        return None


def _memory_request(c: Container) -> int | None:
    request = ((c.spec.get("resources") or {}).get("requests") or {}).get("memory")
    try:
        return parse_quantity(str(request)).value() if request is not None else None
    except QuantityError:
        return None


def ready_endpoint_pods(endpoints: dict[str, Any]) -> dict[str, str]:
    """pod key (namespace/name) -> uid ("" when not given) of every ready address of an Endpoints."""
    namespace = (endpoints.get("metadata") or {}).get("namespace") or "default"
    pods: dict[str, str] = {}
    for subset in endpoints.get("subsets") or []:
        for address in subset.get("addresses") or []:
            ref = address.get("targetRef") or {}
            if (ref.get("kind") or "Pod") == "Pod" and ref.get("name"):
                pods[f"{ref.get('namespace') or namespace}/{ref['name']}"] = ref.get("uid") or ""
    return pods


class ServiceLoads:
    """Every ready endpoint pod's share of its Services' load (the model above), kept current.

    `touch(pod keys, now)` is the model's hook: called for the pods whose share is about to change,
    once before the change (charge the old share up to now) and once after (go on with the new).
    """

    def __init__(self, services: Informer, endpoints: Informer, touch: Callable[[Iterable[str], float], None]) -> None:
        self.services = services
        self.endpoints = endpoints
        self.touch = touch
        # service key -> pod key -> (pod uid, share); and the same by pod: pod key -> service key -> ...
        self._by_service: dict[str, dict[str, tuple[str, Share]]] = {}
        self._by_pod: dict[str, dict[str, tuple[str, Share]]] = {}
        for informer in (services, endpoints):
            informer.add_event_handler(
                on_add=lambda obj: self.refresh(meta_namespace_key(obj)),
                on_update=lambda _old, new: self.refresh(meta_namespace_key(new)),
                on_delete=lambda obj: self.refresh(meta_namespace_key(obj)),
            )

    def share(self, pod_key: str, uid: str) -> Share:
        """The pod's share of all its Services' load now (an endpoint naming another uid is another pod)."""
        cpu = memory = 0.0
        for owner, s in self._by_pod.get(pod_key, {}).values():
            if not owner or owner == uid:
                cpu += s.cpu
                memory += s.memory
        return Share(cpu, memory)

    def shares_of(self, key: str) -> dict[str, tuple[str, Share]]:
        """What Service `key` gives each of its ready endpoints, from the informers' caches."""
        service, endpoints = self.services.get(key), self.endpoints.get(key)
        if service is None or endpoints is None:
            return {}
        cpu, memory = _quantity(service, CPU_LOAD_ANNOTATION), _quantity(service, MEMORY_LOAD_ANNOTATION)
        if not cpu and not memory:
            return {}
        pods = ready_endpoint_pods(endpoints)
        if not pods:
            return {}  # nobody to serve it: the load goes nowhere
        each = Share((cpu or 0) / 1e9 / len(pods), (memory or 0) / 1e9 / len(pods))
        return {pod: (uid, each) for pod, uid in pods.items()}

    def refresh(self, key: str) -> None:
        """Service `key` or its Endpoints changed: work its shares out again; move the pods concerned."""
        new = self.shares_of(key)
        old = self._by_service.get(key, {})
        if new == old:
            return  # the common case: an Endpoints change of a Service without load
        moved = [p for p in {*old, *new} if old.get(p) != new.get(p)]
        now = time.time()
        self.touch(moved, now)
        if new:
            self._by_service[key] = new
        else:
            self._by_service.pop(key, None)
        for pod in moved:
            services = self._by_pod.setdefault(pod, {})
            if pod in new:
                services[key] = new[pod]
            else:
                services.pop(key, None)
            if not services:
                del self._by_pod[pod]
        self.touch(moved, now)


class SimulatedUsage:
    """The model above, one Integrator per container run."""

    def __init__(self, kubelet: Any, started: float) -> None:
        self.kubelet = kubelet
        self.started = started
        self.runs: dict[str, dict[tuple[str, float], Integrator]] = {}  # pod uid -> (container, started) -> ...
        kubelet.pods.add_event_handler(on_update=self.on_pod_update, on_delete=self.on_pod_delete)
        factory = kubelet.factory  # one of each per process, whatever the number of nodes
        self.loads = ServiceLoads(factory.informer_for("services"), factory.informer_for("endpoints"), self.touch)

    def begin(self, now: float) -> None:
        """Nothing to read up front: the model is in memory."""

    def container(self, worker: PodWorker, pod: dict[str, Any], c: Container, running: list[Container],
                  now: float) -> tuple[float, int] | None:  # fmt: skip
        """(core-seconds since the run started, working set bytes) of the running `c`, at `now`."""
        split = max(len(running), 1)
        load = self.loads.share(worker.key, worker.uid or "")
        cpu = _quantity(pod, CPU_ANNOTATION)
        rate = ((cpu or 0) / 1e9 + load.cpu) / split
        memory = _quantity(pod, MEMORY_ANNOTATION)
        if memory is not None:
            working_set = memory // 10**9 // split
        else:
            request = _memory_request(c)
            working_set = request if request is not None else IDLE_WORKING_SET
        working_set += int(load.memory // split)
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
        worker = self._worker(new)
        if worker is None:
            return
        now = time.time()
        for pod in (old, new):  # charge up to now at the old rate, then switch to the new one
            self._advance(worker, pod, now)

    def touch(self, pod_keys: Iterable[str], now: float) -> None:
        """Bring the runs of these pods (those we host) up to `now` at the rate the model gives now."""
        for key in pod_keys:
            pod = self.kubelet.pods.get(key)
            worker = self._worker(pod) if pod is not None else None
            if worker is not None and pod is not None:
                self._advance(worker, pod, now)

    def _worker(self, pod: dict[str, Any]) -> PodWorker | None:
        md = pod.get("metadata") or {}
        worker = self.kubelet.workers.get(f"{md.get('namespace') or 'default'}/{md.get('name')}")
        return worker if worker is not None and worker.uid == md.get("uid") else None

    def _advance(self, worker: PodWorker, pod: dict[str, Any], now: float) -> None:
        running = [c for c in [*worker.inits, *worker.mains] if c.state == "running" and c.started_at]
        for c in running:
            self.container(worker, pod, c, running, now)
