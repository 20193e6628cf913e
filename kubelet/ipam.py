"""Pod networking without a network: a podCIDR per node and a unique IP per pod inside it.

In Kubernetes the node IPAM controller hands each Node a `spec.podCIDR` out of the cluster CIDR,
and the CNI plugin on the node gives each pod an address from it. mini-kubelet does both jobs
itself, simply:

- podCIDR: a node that already has one keeps it (restart). A new node takes the lowest /24 of
  `--cluster-cidr` (10.244.0.0/14 by default: 10.244.0.0/24, 10.244.1.0/24, ...) that no Node in
  the cluster uses, from one LIST at start-up. Two kubelet *processes* registering in the very
  same instant could pick the same range (the real controller serialises this); pass `--pod-cidr`
  to pin it when that matters.
- pod IPs: .2, .3, ... of the node's range (.1 is the bridge's), handed out round-robin like the
  host-local CNI plugin (a deleted pod's IP is not reused at once); a pod the
  kubelet finds after a restart keeps the IP its status already shows.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable


def node_cidrs(cluster_cidr: str, prefix: int = 24) -> Iterable[str]:
    net = ipaddress.ip_network(cluster_cidr, strict=False)
    for sub in net.subnets(new_prefix=prefix) if net.prefixlen < prefix else [net]:
        yield str(sub)


def pick_cidrs(cluster_cidr: str, used: set[str], count: int) -> list[str]:
    """`count` /24 ranges of the cluster CIDR that are not in `used`, lowest first."""
    out: list[str] = []
    for cidr in node_cidrs(cluster_cidr):
        if len(out) == count:
            break
        if cidr not in used:
            out.append(cidr)
    if len(out) < count:
        raise RuntimeError(f"--cluster-cidr {cluster_cidr} has no free /24 left for {count} more node(s)")
    return out


class PodIPAllocator:
    """Unique pod IPs inside one node's podCIDR."""

    def __init__(self, cidr: str) -> None:
        self.network = ipaddress.ip_network(cidr, strict=False)
        self._hosts = self.network.num_addresses - 2  # not the network nor the broadcast address
        self._used: set[int] = {1}  # .1 is the node's bridge / gateway
        self._next = 2

    def claim(self, ip: str) -> bool:
        """Keep an address a pod already has (after a restart). False if not ours or taken."""
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return False
        if addr not in self.network:
            return False
        offset = int(addr) - int(self.network.network_address)
        if offset in self._used or offset < 1 or offset > self._hosts:
            return False
        self._used.add(offset)
        return True

    def allocate(self) -> str:
        for _ in range(self._hosts):
            offset = self._next
            self._next = 2 if self._next >= self._hosts else self._next + 1
            if offset not in self._used:
                self._used.add(offset)
                return str(self.network.network_address + offset)
        raise RuntimeError(f"no free pod IP left in {self.network}")

    def release(self, ip: str | None) -> None:
        if not ip:
            return
        try:
            offset = int(ipaddress.ip_address(ip)) - int(self.network.network_address)
        except ValueError:
            return
        if offset != 1:
            self._used.discard(offset)

    def __len__(self) -> int:
        return len(self._used) - 1
