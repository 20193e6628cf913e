"""The scheduler's cache: every node and what is placed on it, including what we *assumed*.

Why assume? Binding is a round trip: POST pods/x/binding, then the API server's watch tells us
the pod now has a nodeName. If the next pod were scheduled before that news arrived, it would
see the node as emptier than it is - a burst of 50 pods would all pick the same "best" node and
over-commit it. So the moment a node is chosen the pod is *assumed* onto it: its requests count
on that NodeInfo at once, before the binding is even sent.

    assume_pod   chosen node; requests count now          (scheduling cycle)
    add_pod      the informer shows the pod bound: if it was assumed, it is now confirmed
                 (nothing to add twice); otherwise a pod bound by someone else, add it
    forget_pod   the binding failed: take the requests off the node again
    remove_pod   the pod is gone or finished (Succeeded/Failed frees its resources)

Pods may name a node we have not seen yet (the informers race); their NodeInfo exists without a
Node object and is not offered to the filters until the Node arrives.

All of this runs on one asyncio loop, so a scheduling cycle (filter, score, assume) sees a
consistent cache without locks or snapshots: nothing else runs until it yields.
"""

from __future__ import annotations

from scheduler.framework import NodeInfo, Obj, PodInfo

TERMINAL_PHASES = ("Succeeded", "Failed")


def counts_on_node(pod: Obj) -> bool:
    """A pod holds resources on a node while it is bound and not finished."""
    return (
        bool((pod.get("spec") or {}).get("nodeName")) and (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES
    )


class SchedulerCache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._node_list: list[NodeInfo] | None = None  # nodes with a Node object, in a stable order
        self._pod_node: dict[str, str] = {}  # pod key -> node it counts on
        self.assumed: set[str] = set()

    # ------------------------------------------------------------------ nodes

    def node_list(self) -> list[NodeInfo]:
        """The nodes the filters may consider (rebuilt only when nodes come or go)."""
        if self._node_list is None:
            self._node_list = [n for n in self.nodes.values() if n.node is not None]
        return self._node_list

    def _node_info(self, name: str) -> NodeInfo:
        info = self.nodes.get(name)
        if info is None:
            info = self.nodes[name] = NodeInfo(name)
        return info

    def add_node(self, node: Obj) -> None:
        info = self._node_info(node["metadata"]["name"])
        if info.node is None:
            self._node_list = None
        info.set_node(node)

    def update_node(self, old: Obj, new: Obj) -> bool:
        """Returns True when something scheduling depends on changed (not just a heartbeat)."""
        info = self._node_info(new["metadata"]["name"])
        if info.node is None:
            self._node_list = None
            info.set_node(new)
            return True
        if NodeInfo.scheduling_view(old) == NodeInfo.scheduling_view(new):
            info.node = new
            return False
        info.set_node(new)
        return True

    def remove_node(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        info = self.nodes.get(name)
        if info is None:
            return
        if info.pods:
            info.node = None  # its pods are still bound there until they are deleted
        else:
            del self.nodes[name]
        self._node_list = None

    # ------------------------------------------------------------------ pods

    def is_assumed(self, key: str) -> bool:
        return key in self.assumed

    def assume_pod(self, pi: PodInfo, node_name: str) -> None:
        self._place(pi, node_name)
        self.assumed.add(pi.key)

    def forget_pod(self, key: str) -> None:
        if key in self.assumed:
            self.assumed.discard(key)
            self._unplace(key)

    def add_pod(self, pod: Obj) -> None:
        """A bound pod seen through the informer (new, or just bound)."""
        pi = PodInfo(pod)
        if pi.key in self.assumed:
            self.assumed.discard(pi.key)  # confirmed: the binding reached the server
            if self._pod_node.get(pi.key) == pi.node_name:
                self.nodes[pi.node_name].pods[pi.key] = pi  # same requests, newest object
                return
        self._unplace(pi.key)
        self._place(pi, pi.node_name)

    def update_pod(self, old: Obj, new: Obj) -> None:
        """A bound pod changed. Status updates (the kubelet's) are the common case: the spec is
        the same, so the requests are too - keep the digest, skip re-parsing."""
        key = f"{new['metadata'].get('namespace') or ''}/{new['metadata']['name']}"
        node_name = self._pod_node.get(key)
        if node_name is not None and old.get("spec") == new.get("spec") and key not in self.assumed:
            self.nodes[node_name].pods[key].pod = new
            return
        self.add_pod(new)

    def remove_pod(self, key: str) -> bool:
        """Take the pod off its node; True if it had been counting somewhere."""
        self.assumed.discard(key)
        return self._unplace(key)

    def pod_count(self) -> int:
        return len(self._pod_node)

    def _place(self, pi: PodInfo, node_name: str) -> None:
        self._node_info(node_name).add_pod(pi)
        self._pod_node[pi.key] = node_name

    def _unplace(self, key: str) -> bool:
        name = self._pod_node.pop(key, None)
        if name is None:
            return False
        info = self.nodes.get(name)
        if info is not None:
            info.remove_pod(key)
            if info.node is None and not info.pods:
                del self.nodes[name]
        return True
