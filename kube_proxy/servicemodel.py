"""What kube-proxy needs to know of one Service port, and which endpoints take its traffic.

A Service with three ports is three independent things to the proxy: each port has its own
frontends (ClusterIP:port, NodePort, LoadBalancer and external IPs) and its own backends (the
endpoint addresses with the *target* port that the EndpointSlice controller resolved for that
port name). So the unit here is the ServicePort, named `<ns>/<name>/<proto>/<port name>` as
kube-proxy names it in its chains.

Which endpoints, as Kubernetes' kube-proxy chooses them:
- ready endpoints (ready = serving and not terminating);
- if none is ready, the serving-and-terminating ones, so a rolling update's last pod still
  answers while it drains (KEP-1669, on by default since 1.28);
- `internalTrafficPolicy: Local` keeps only node-local endpoints for traffic from inside the
  cluster, `externalTrafficPolicy: Local` for NodePort/LoadBalancer traffic (and keeps the
  client's source address: no masquerade).

Skipped, as kube-proxy skips them: ExternalName and headless Services (nothing to proxy),
Services labelled `service.kubernetes.io/service-proxy-name` (another proxy owns them), and
IPv6 addresses (the table is `ip`, IPv4 only).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

SERVICE_PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name"
DEFAULT_AFFINITY_TIMEOUT = 10800  # seconds: Kubernetes' default for sessionAffinity ClientIP


@dataclass(frozen=True)
class Endpoint:
    ip: str
    port: int
    node: str
    ready: bool
    serving: bool
    terminating: bool


@dataclass(frozen=True)
class ServicePort:
    namespace: str
    name: str
    port_name: str
    protocol: str  # tcp, udp, sctp (nft's spelling)
    cluster_ip: str
    port: int
    node_port: int = 0
    external_ips: tuple[str, ...] = ()
    load_balancer_ips: tuple[str, ...] = ()
    affinity_timeout: int = 0  # 0: no session affinity
    external_local: bool = False  # externalTrafficPolicy: Local
    internal_local: bool = False  # internalTrafficPolicy: Local
    source_ranges: tuple[str, ...] = ()  # loadBalancerSourceRanges: who may use the LoadBalancer IPs
    endpoints: tuple[Endpoint, ...] = field(default=())

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}/{self.protocol}/{self.port_name}"

    def usable(self, endpoints: Iterable[Endpoint]) -> list[Endpoint]:
        """Ready endpoints, else the serving terminating ones (see the module docstring)."""
        eps = list(endpoints)
        ready = [e for e in eps if e.ready]
        return ready or [e for e in eps if e.serving and e.terminating]

    def cluster_endpoints(self, is_local: Callable[[str], bool]) -> list[Endpoint]:
        eps = self.usable(self.endpoints)
        return [e for e in eps if is_local(e.node)] if self.internal_local else eps

    def local_endpoints(self, is_local: Callable[[str], bool]) -> list[Endpoint]:
        return [e for e in self.usable(self.endpoints) if is_local(e.node)]

    @property
    def has_external(self) -> bool:
        return bool(self.node_port or self.external_ips or self.load_balancer_ips)


def _ipv4(value: str) -> bool:
    try:
        return ipaddress.ip_address(value).version == 4
    except ValueError:
        return False


def _slice_endpoints(slices: Iterable[dict[str, Any]], port_name: str, protocol: str) -> list[Endpoint]:
    """The endpoints of `port_name` across the Service's slices, each address once."""
    seen: dict[tuple[str, int], Endpoint] = {}
    for s in slices:
        if s.get("addressType") != "IPv4":
            continue
        match = [p for p in s.get("ports") or [] if (p.get("name") or "") == port_name
                 and (p.get("protocol") or "TCP").lower() == protocol and p.get("port")]  # fmt: skip
        if not match:
            continue
        target = int(match[0]["port"])
        for ep in s.get("endpoints") or []:
            addresses = [a for a in ep.get("addresses") or [] if _ipv4(a)]
            if not addresses:
                continue
            cond = ep.get("conditions") or {}
            terminating = bool(cond.get("terminating"))
            ready = cond.get("ready") is not False and not terminating  # nil ready means ready
            serving = cond.get("serving", cond.get("ready")) is not False
            seen.setdefault((addresses[0], target), Endpoint(
                addresses[0], target, ep.get("nodeName") or "", ready, serving, terminating))  # fmt: skip
    return sorted(seen.values(), key=lambda e: (ipaddress.ip_address(e.ip), e.port))


def service_ports(service: dict[str, Any], slices: Iterable[dict[str, Any]]) -> list[ServicePort]:
    """One ServicePort per port of `service` that this proxy handles (none for the skipped kinds)."""
    meta = service.get("metadata") or {}
    spec = service.get("spec") or {}
    if SERVICE_PROXY_NAME_LABEL in (meta.get("labels") or {}):
        return []
    if spec.get("type") == "ExternalName":
        return []
    cluster_ip = spec.get("clusterIP") or ""
    if cluster_ip in ("", "None") or not _ipv4(cluster_ip):
        return []
    slices = list(slices)
    affinity = 0
    if spec.get("sessionAffinity") == "ClientIP":
        cfg = ((spec.get("sessionAffinityConfig") or {}).get("clientIP") or {})
        affinity = int(cfg.get("timeoutSeconds") or DEFAULT_AFFINITY_TIMEOUT)
    ingress = ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    lb_ips = tuple(i["ip"] for i in ingress if _ipv4(i.get("ip") or "") and i.get("ipMode", "VIP") == "VIP")
    external_ips = tuple(ip for ip in spec.get("externalIPs") or [] if _ipv4(ip))
    out = []
    for p in spec.get("ports") or []:
        protocol = (p.get("protocol") or "TCP").lower()
        port_name = p.get("name") or ""
        out.append(ServicePort(
            namespace=meta.get("namespace") or "default", name=meta.get("name") or "", port_name=port_name,
            protocol=protocol, cluster_ip=cluster_ip, port=int(p["port"]),
            node_port=int(p.get("nodePort") or 0) if spec.get("type") in ("NodePort", "LoadBalancer") else 0,
            external_ips=external_ips,
            load_balancer_ips=lb_ips if spec.get("type") == "LoadBalancer" else (),
            affinity_timeout=affinity,
            external_local=spec.get("externalTrafficPolicy") == "Local",
            internal_local=spec.get("internalTrafficPolicy") == "Local",
            source_ranges=tuple(r for r in spec.get("loadBalancerSourceRanges") or [] if "." in r)
            if spec.get("type") == "LoadBalancer" else (),
            endpoints=tuple(_slice_endpoints(slices, port_name, protocol)),
        ))  # fmt: skip
    return out
