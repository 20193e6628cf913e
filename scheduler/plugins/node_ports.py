"""NodePorts: two pods cannot take the same hostPort on one node.

A port is (protocol, hostPort, hostIP). Host IP 0.0.0.0 (the default) means "every address", so
it clashes with the same protocol and port on any IP; a specific IP clashes with itself and with
0.0.0.0. The node's ports in use are counted as pods arrive and leave (NodeInfo.ports)."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.framework import FilterPlugin, NodeInfo, PodInfo

REASON = "node(s) didn't have free ports for the requested pod ports"
ANY_IP = "0.0.0.0"


class NodePorts(FilterPlugin):
    name = "NodePorts"
    unresolvable = False  # evicting the pod holding the port would free it

    def relevant(self, pod: PodInfo) -> bool:
        return bool(pod.host_ports)

    def filter(self, pod: PodInfo, node: NodeInfo) -> Sequence[str] | None:
        for ip, proto, port in pod.host_ports:
            if ip == ANY_IP:
                if node.ports_any[(proto, port)] > 0:
                    return (REASON,)
            elif node.ports[(proto, port, ip)] > 0 or node.ports[(proto, port, ANY_IP)] > 0:
                return (REASON,)
        return None
