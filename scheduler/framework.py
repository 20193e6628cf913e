"""The scheduling framework's vocabulary: PodInfo, NodeInfo, the plugin interfaces, FitError.

Scheduling one pod means asking "does it fit?" of hundreds of nodes, and "how well?" of the ones
that pass. In Python that loop is the whole cost of scheduling, so everything a plugin asks is
answered from numbers prepared *before* the loop:

- `PodInfo` is built once per pod per attempt: its requests summed as integers (milli-CPU,
  bytes), its host ports, its selector, its tolerations, its controller's uid.
- `NodeInfo` is kept up to date by the cache as nodes and pods come and go: the node's
  allocatable as integers, the sum of the requests of the pods on it (bound *and* assumed), the
  host ports in use, how many pods of each controller it runs.

So a filter is a few integer comparisons and a score a few divisions; no Quantity string is ever
parsed inside the loop (`250m` becomes 250 once, cached by text).

Plugins (see plugins/) are small classes with Kubernetes' names. A filter plugin answers
`filter(pod, node) -> None | reasons`; like a PreFilter returning Skip, `relevant(pod)` lets the
scheduler leave out a plugin that cannot matter for this pod (NodePorts for a pod with no host
ports). A score plugin scores all feasible nodes at once and returns them normalized to 0..100.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar

from api.quantity import parse_quantity

MAX_NODE_SCORE = 100
# What LeastAllocated/BalancedAllocation pretend a container asks for when it asks for nothing, so
# that request-less pods still spread (Kubernetes' DefaultMilliCPURequest / DefaultMemoryRequest).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

Obj = dict[str, Any]


@lru_cache(maxsize=4096)
def milli_value(text: str) -> int:
    """ "250m" -> 250, "2" -> 2000: CPU in thousandths of a core."""
    return parse_quantity(text).milli_value()


@lru_cache(maxsize=4096)
def int_value(text: str) -> int:
    """ "64Mi" -> 67108864: memory, pods and everything else as a plain integer (rounded up)."""
    return parse_quantity(text).value()


def quantity_int(name: str, value: Any) -> int:
    text = str(value)
    return milli_value(text) if name == "cpu" else int_value(text)


def resource_list(resources: Mapping[str, Any] | None) -> dict[str, int]:
    return {name: quantity_int(name, v) for name, v in (resources or {}).items()}


# ---------------------------------------------------------------- pods


def _container_requests(container: Mapping[str, Any], non_zero: bool) -> dict[str, int]:
    res = container.get("resources") or {}
    # Defaulting rule: a resource with a limit but no request requests its limit.
    merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}
    out = resource_list(merged)
    if non_zero:
        out.setdefault("cpu", DEFAULT_MILLI_CPU_REQUEST)
        out.setdefault("memory", DEFAULT_MEMORY_REQUEST)
    return out


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if v > into.get(k, 0):
            into[k] = v


def pod_requests(spec: Mapping[str, Any], non_zero: bool = False) -> dict[str, int]:
    """What a pod reserves on its node, as Kubernetes computes it:

        max( sum(containers) + sum(sidecars),  max over init containers of (that one + sidecars before it) )
        + spec.overhead

    Ordinary init containers run one at a time before the app containers, so only the biggest
    counts; sidecars (init containers with restartPolicy Always) keep running, so they add up."""
    total: dict[str, int] = {}
    for c in spec.get("containers") or []:
        _add(total, _container_requests(c, non_zero))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for c in spec.get("initContainers") or []:
        req = _container_requests(c, non_zero)
        if c.get("restartPolicy") == "Always":
            _add(sidecars, req)
            _max(init_peak, sidecars)
        else:
            running = dict(sidecars)
            _add(running, req)
            _max(init_peak, running)
    _add(total, sidecars)
    _max(total, init_peak)
    _add(total, resource_list(spec.get("overhead")))
    return total


def controller_uid(meta: Mapping[str, Any]) -> str | None:
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid") or "") or None
    return None


class PodInfo:
    """One pod, pre-digested for the filter and score loops."""

    __slots__ = (
        "pod", "key", "namespace", "name", "uid", "priority", "created", "milli_cpu", "memory", "scalar",
        "non_zero_cpu", "non_zero_memory", "host_ports", "node_selector", "required_terms",
        "preferred_terms", "tolerations", "owner_uid", "node_name",
    )  # fmt: skip

    def __init__(self, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.pod = pod
        self.namespace: str = meta.get("namespace") or ""
        self.name: str = meta.get("name") or ""
        self.key = f"{self.namespace}/{self.name}"
        self.uid: str = meta.get("uid") or ""
        self.priority: int = int(spec.get("priority") or 0)
        self.created: str = meta.get("creationTimestamp") or ""
        self.node_name: str = spec.get("nodeName") or ""
        req = pod_requests(spec)
        self.milli_cpu = req.pop("cpu", 0)
        self.memory = req.pop("memory", 0)
        req.pop("pods", None)
        self.scalar: dict[str, int] = req  # ephemeral-storage, example.com/gpu, ...
        nz = pod_requests(spec, non_zero=True)
        self.non_zero_cpu = nz.get("cpu", 0)
        self.non_zero_memory = nz.get("memory", 0)
        ports: list[tuple[str, str, int]] = []
        for c in spec.get("containers") or []:
            for p in c.get("ports") or []:
                if p.get("hostPort"):
                    ports.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", int(p["hostPort"])))
        self.host_ports = ports
        self.node_selector: dict[str, str] = spec.get("nodeSelector") or {}
        node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        terms = required.get("nodeSelectorTerms")
        self.required_terms: list[Obj] | None = terms if required else None
        self.preferred_terms: list[Obj] = node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        self.tolerations: list[Obj] = spec.get("tolerations") or []
        self.owner_uid = controller_uid(meta)


# ---------------------------------------------------------------- nodes

Taint = tuple[str, str, str]  # key, value, effect


class NodeInfo:
    """One node and what is already placed on it. Kept current by the cache (cache.py)."""

    __slots__ = (
        "name", "node", "labels", "taints", "prefer_taints", "unschedulable", "alloc_cpu", "alloc_memory",
        "alloc_pods", "alloc_scalar", "req_cpu", "req_memory", "req_scalar", "nz_cpu", "nz_memory",
        "pods", "ports", "ports_any", "owners",
    )  # fmt: skip

    def __init__(self, name: str) -> None:
        self.name = name
        self.node: Obj | None = None  # None: we know pods on it but not (yet) the Node itself
        self.labels: dict[str, str] = {}
        self.taints: list[Taint] = []  # NoSchedule and NoExecute: these filter
        self.prefer_taints: list[Taint] = []  # PreferNoSchedule: these only lower the score
        self.unschedulable = False
        self.alloc_cpu = self.alloc_memory = self.alloc_pods = 0
        self.alloc_scalar: dict[str, int] = {}
        self.req_cpu = self.req_memory = 0
        self.req_scalar: Counter[str] = Counter()
        self.nz_cpu = self.nz_memory = 0
        self.pods: dict[str, PodInfo] = {}
        self.ports: Counter[tuple[str, int, str]] = Counter()  # (protocol, port, hostIP) in use
        self.ports_any: Counter[tuple[str, int]] = Counter()  # (protocol, port) in use on any IP
        self.owners: Counter[str] = Counter()  # controller uid -> pods here (for spreading)

    @staticmethod
    def scheduling_view(node: Obj) -> tuple[Any, ...]:
        """The parts of a Node that scheduling depends on. A heartbeat changes none of them."""
        spec, status = node.get("spec") or {}, node.get("status") or {}
        return (
            (node.get("metadata") or {}).get("labels"),
            spec.get("taints"),
            bool(spec.get("unschedulable")),
            status.get("allocatable") or status.get("capacity"),
        )

    def set_node(self, node: Obj) -> None:
        spec, status = node.get("spec") or {}, node.get("status") or {}
        self.node = node
        self.labels = dict((node.get("metadata") or {}).get("labels") or {})
        self.taints, self.prefer_taints = [], []
        for t in spec.get("taints") or []:
            taint = (t.get("key") or "", t.get("value") or "", t.get("effect") or "")
            (self.prefer_taints if taint[2] == "PreferNoSchedule" else self.taints).append(taint)
        self.unschedulable = bool(spec.get("unschedulable"))
        alloc = resource_list(status.get("allocatable") or status.get("capacity"))
        self.alloc_cpu = alloc.pop("cpu", 0)
        self.alloc_memory = alloc.pop("memory", 0)
        self.alloc_pods = alloc.pop("pods", 0)
        self.alloc_scalar = alloc

    def add_pod(self, pi: PodInfo) -> None:
        self._account(pi, 1)
        self.pods[pi.key] = pi

    def remove_pod(self, key: str) -> PodInfo | None:
        pi = self.pods.pop(key, None)
        if pi is not None:
            self._account(pi, -1)
        return pi

    def _account(self, pi: PodInfo, sign: int) -> None:
        self.req_cpu += sign * pi.milli_cpu
        self.req_memory += sign * pi.memory
        self.nz_cpu += sign * pi.non_zero_cpu
        self.nz_memory += sign * pi.non_zero_memory
        for name, v in pi.scalar.items():
            self.req_scalar[name] += sign * v
        for ip, proto, port in pi.host_ports:
            self.ports[(proto, port, ip)] += sign
            self.ports_any[(proto, port)] += sign
        if pi.owner_uid:
            self.owners[pi.owner_uid] += sign


# ---------------------------------------------------------------- plugins


class Diagnosis:
    """Why nodes were rejected: reason -> how many nodes, and how many for unresolvable reasons."""

    __slots__ = ("reasons", "unresolvable")

    def __init__(self) -> None:
        self.reasons: Counter[str] = Counter()
        self.unresolvable = 0


class FilterPlugin:
    """`filter` returns None when the pod fits the node, else the reasons it does not.

    `filter` is the definition - read it to learn the rule. `filter_many` is the same rule over
    a batch of nodes, returning those that pass and noting the others in the Diagnosis. Plugins
    override it with a one-line comprehension for the common case ("every node passes"), which
    is several times faster in Python than a method call per node."""

    name: ClassVar[str] = ""
    # Would removing pods from the node help? (No for a label mismatch: preemption says so.)
    unresolvable: ClassVar[bool] = True

    def relevant(self, pod: PodInfo) -> bool:
        return True

    def filter(self, pod: PodInfo, node: NodeInfo) -> Sequence[str] | None:
        raise NotImplementedError

    def filter_many(self, pod: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis) -> list[NodeInfo]:
        passed: list[NodeInfo] = []
        for node in nodes:
            failed = self.filter(pod, node)
            if failed:
                for reason in failed:
                    diagnosis.reasons[reason] += 1
                if self.unresolvable:
                    diagnosis.unresolvable += 1
            else:
                passed.append(node)
        return passed


class ScorePlugin:
    """`score` returns one number per node, already normalized to 0..MAX_NODE_SCORE."""

    name: ClassVar[str] = ""
    weight: ClassVar[int] = 1

    def relevant(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> bool:
        return True

    def score(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[int]:
        raise NotImplementedError


def normalize(scores: list[int], reverse: bool = False) -> list[int]:
    """Scale to 0..100 by the highest score (Kubernetes' DefaultNormalizeScore)."""
    top = max(scores, default=0)
    if top == 0:
        return [MAX_NODE_SCORE if reverse else 0 for _ in scores]
    if reverse:
        return [MAX_NODE_SCORE - MAX_NODE_SCORE * s // top for s in scores]
    return [MAX_NODE_SCORE * s // top for s in scores]
