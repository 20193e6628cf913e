"""Defaults for the storage, networking, policy and scheduling kinds, as Kubernetes 1.32 fills them.

- PersistentVolume: `persistentVolumeReclaimPolicy: Retain` (a hand-made volume keeps its
  data), `volumeMode: Filesystem`; a new one starts in phase Pending.
- PersistentVolumeClaim: `volumeMode: Filesystem`; a new claim starts Pending.
- StorageClass: `reclaimPolicy: Delete` (a provisioned volume goes with its claim) and
  `volumeBindingMode: Immediate`.
- PriorityClass: `preemptionPolicy: PreemptLowerPriority`.
- NetworkPolicy: `policyTypes` is Ingress, plus Egress when egress rules are given; ports TCP.
- Ingress: a path's backend has no defaults; IngressClass none.
- APIService: a Service reference's `port` is 443.
- PodDisruptionBudget: none in policy/v1 (the unhealthy-pod policy stays unset = IfHealthyBudget).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def default_persistent_volume(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")


def default_persistent_volume_claim(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("volumeMode", "Filesystem")
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")


def default_storage_class(obj: Obj) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def default_priority_class(obj: Obj) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def default_network_policy(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("podSelector", {})
    if not spec.get("policyTypes"):
        types = ["Ingress"]
        if spec.get("egress"):
            types.append("Egress")
        spec["policyTypes"] = types
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or []:
            for port in (rule.get("ports") or []) if isinstance(rule, dict) else []:
                if isinstance(port, dict) and not port.get("protocol"):
                    port["protocol"] = "TCP"


def default_endpoint_slice(obj: Obj) -> None:
    for port in obj.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("name", "")
            port.setdefault("protocol", "TCP")


def default_api_service(obj: Obj) -> None:
    service = (obj.get("spec") or {}).get("service")
    if isinstance(service, dict):
        service.setdefault("port", 443)
