"""The Node object a kubelet registers and keeps fresh: what the scheduler and kubectl see.

Registration (once per node, at start-up): POST the Node with everything the kubelet knows about
its machine - capacity and allocatable (cpu, memory, pods), labels (kubernetes.io/hostname,
kubernetes.io/os, kubernetes.io/arch, and --node-labels), spec.podCIDR, taints from
--register-with-taints, addresses, the kubelet's port, nodeInfo and the four conditions. If the
Node exists (a kubelet restart), update labels and status instead and keep the spec: taints,
cordoning and the podCIDR belong to the cluster now, as in Kubernetes.

Staying alive (heartbeat.py): a Lease renewed every lease-duration/4, and the status (conditions
with a fresh lastHeartbeatTime) posted every --node-status-update-frequency.
"""

from __future__ import annotations

import platform
import uuid
from dataclasses import dataclass, field
from typing import Any

from client import EventRecorder
from kubelet.config import KubeletConfig
from kubelet.ipam import PodIPAllocator

KUBELET_VERSION = "v1.32.0-mini"
RUNTIME_VERSIONS = {"simulated": "mini-simulated://0.1", "process": "mini-process://0.1"}
_BOOT_ID = str(uuid.uuid4())  # a new "boot" each time the process starts
_NS = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")

# type -> (status when healthy, reason, message) - Kubernetes' wording
CONDITIONS: dict[str, tuple[str, str, str]] = {
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
}


def arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm"}.get(machine, machine or "amd64")


@dataclass
class NodeState:
    """Everything this process keeps per simulated node."""

    name: str
    index: int
    ip: str
    pod_cidr: str
    recorder: EventRecorder
    allocator: PodIPAllocator = field(init=False)
    images: set[str] = field(default_factory=set)  # "pulled" images, for the Pulled event wording
    uid: str = ""  # the Node object's uid (the Lease's ownerReference points at it)
    conditions: list[dict[str, Any]] = field(default_factory=list)  # as last posted
    lease: dict[str, Any] | None = None  # as last written
    status_posted_at: float = 0.0  # event-loop time of the last status write

    def __post_init__(self) -> None:
        self.allocator = PodIPAllocator(self.pod_cidr)


def labels(cfg: KubeletConfig, name: str) -> dict[str, str]:
    out = {
        "beta.kubernetes.io/arch": arch(),
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": arch(),
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "mini-k8s-fake",
    }
    out.update(cfg.node_labels)
    return out


def conditions(previous: list[dict[str, Any]], now: str) -> list[dict[str, Any]]:
    """The four conditions, healthy, with a fresh heartbeat; a transition time only moves when
    the status changes (e.g. the node controller had set Ready to Unknown)."""
    prev = {c.get("type"): c for c in previous}
    out = []
    for type_, (status, reason, message) in CONDITIONS.items():
        old = prev.get(type_) or {}
        since = old.get("lastTransitionTime") if old.get("status") == status and old.get("lastTransitionTime") else now
        out.append({
            "type": type_, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": since,
            "reason": reason, "message": message,
        })  # fmt: skip
    return out


def node_status(cfg: KubeletConfig, node: NodeState, now: str) -> dict[str, Any]:
    capacity = {"cpu": cfg.cpu, "memory": cfg.memory, "pods": str(cfg.max_pods), "ephemeral-storage": "100Gi"}
    machine = uuid.uuid5(_NS, node.name)
    return {
        "capacity": capacity,
        "allocatable": dict(capacity),
        "conditions": conditions(node.conditions, now),
        "addresses": [{"type": "InternalIP", "address": node.ip}, {"type": "Hostname", "address": node.name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": cfg.port}},
        "nodeInfo": {
            "machineID": machine.hex,
            "systemUUID": str(machine),
            "bootID": _BOOT_ID,
            "kernelVersion": platform.release(),
            "osImage": "mini-k8s fake node" if cfg.runtime == "simulated" else "mini-k8s process node",
            "containerRuntimeVersion": RUNTIME_VERSIONS.get(cfg.runtime, cfg.runtime),
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION,
            "operatingSystem": "linux",
            "architecture": arch(),
        },
        "images": [],
    }


def new_node(cfg: KubeletConfig, node: NodeState, now: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"podCIDR": node.pod_cidr, "podCIDRs": [node.pod_cidr]}
    if cfg.register_with_taints:
        spec["taints"] = [dict(t) for t in cfg.register_with_taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels(cfg, node.name)},
        "spec": spec,
        "status": node_status(cfg, node, now),
    }
