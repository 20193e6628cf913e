"""The Node authorizer's graph: which objects each node may read, because a pod bound to it needs them.

Kubernetes keeps a graph of vertices (pods, secrets, configmaps, claims, volumes, service
accounts, nodes) and edges (secret → pod → node) and searches it per request. Here the searches
a request needs are all "is there a pod on node N that names object X?", so the graph is kept
flattened, per node, as the answer itself:

    edges[node][(resource, namespace, name)] = how many of the node's pods name it

(a count, so the secret stays readable until the last pod that uses it leaves the node). A pod
is itself an edge of its node (`("pods", ns, name)`), which is how a kubelet may get its own
pods and no one else's. A PersistentVolume is reached through its claim: the authorizer looks
the volume up and asks about its `spec.claimRef`.

The graph is fed from the pods watch cache, never by listing pods in a request: each request
first catches up with the events the cache recorded since the graph's revision (few, usually
none), and only a graph that fell out of the cache's ring of recent events is rebuilt from the
cache's objects. A pod with no `spec.nodeName` adds nothing, as in Kubernetes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from apiserver.auth.pod_references import pod_references

if TYPE_CHECKING:
    from apiserver.watchcache import CacheEvent, WatchCache

Obj = dict[str, Any]
Edge = tuple[str, str, str]  # (resource, namespace, name), resource as in a request path


def pod_edges(pod: Obj) -> tuple[str, frozenset[Edge]]:
    """The node a pod is bound to ("" for none) and the objects that binding gives it."""
    node = (pod.get("spec") or {}).get("nodeName") or ""
    if not node:
        return "", frozenset()
    md = pod.get("metadata") or {}
    ns = md.get("namespace") or ""
    edges = {(resource, ns, name) for resource, name in pod_references(pod).items()}
    edges.add(("pods", ns, md.get("name") or ""))
    return node, frozenset(edges)


class NodeGraph:
    def __init__(self, cache: WatchCache) -> None:
        self.cache = cache
        self.revision = -1  # the pods cache revision this graph reflects; -1: never built
        self.pods: dict[str, tuple[str, frozenset[Edge]]] = {}  # "namespace/name" → (node, edges)
        self.edges: dict[str, Counter[Edge]] = defaultdict(Counter)

    def has_edge(self, node: str, edge: Edge) -> bool:
        self.catch_up()
        return self.edges.get(node, Counter())[edge] > 0

    def catch_up(self) -> None:
        cache = self.cache
        if self.revision == cache.revision:
            return
        if not cache.oldest <= self.revision < cache.revision:  # fell out of the ring, or the cache re-listed
            self._rebuild()
            return
        newer: list[CacheEvent] = []
        for ev in reversed(cache.ring):  # the newest first; stop at what the graph has seen
            if ev.revision <= self.revision:
                break
            newer.append(ev)
        for ev in reversed(newer):
            self._set(_key_of(ev.object), None if ev.type == "DELETED" else ev.object)
        self.revision = cache.revision

    def _rebuild(self) -> None:
        self.pods.clear()
        self.edges.clear()
        for pod in self.cache.objects.values():
            self._set(_key_of(pod), pod)
        self.revision = self.cache.revision

    def _set(self, key: str, pod: Obj | None) -> None:
        old = self.pods.pop(key, None)
        if old is not None:
            counts = self.edges[old[0]]
            counts.subtract(old[1])
            for edge in old[1]:
                if counts[edge] <= 0:
                    del counts[edge]
            if not counts:
                del self.edges[old[0]]
        node, edges = pod_edges(pod) if pod is not None else ("", frozenset())
        if node:
            self.pods[key] = (node, edges)
            self.edges[node].update(edges)


def _key_of(pod: Obj) -> str:
    md = pod.get("metadata") or {}
    return f"{md.get('namespace') or ''}/{md.get('name') or ''}"
