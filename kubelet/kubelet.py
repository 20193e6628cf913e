"""Kubelet: the process that hosts one or many simulated nodes and the pods bound to them.

Desired state: every pod whose `spec.nodeName` is one of our nodes runs as its spec says (or goes
away, when it carries a deletionTimestamp); every one of our nodes exists, is Ready, and has a
fresh Lease.
Current state: the pod workers this process runs (one per pod, podworker.py), what they report in
pod status; the Node and Lease objects.
What it does about the difference: one pods informer feeds handlers that only start a worker or
wake it (level-triggered: a worker always reads the newest pod from the cache); the heartbeat
loops (heartbeat.py) keep Nodes and Leases fresh.

Watching pods: with one node the informer asks the server only for its pods
(`fieldSelector=spec.nodeName=<node>`), as the real kubelet does. With `--nodes N` one field
selector per node would mean N watches; instead ONE informer watches all pods and indexes them by
spec.nodeName, and the handlers ignore pods of nodes we do not host. One services informer per
process, however many nodes, gives containers their Service variables (env.py), as the real
kubelet's service lister does; the simulated runtime's usage model shares it and adds an endpoints
informer (a Service's load is spread over its ready endpoints: simusage.py).

A restart is harmless: the informer's first LIST hands us every pod already bound to our nodes;
their workers adopt what the status says and what the runtime still has (the process runtime's
containers really kept running under their shims; the pod keeps its IP). Stopping the kubelet
leaves containers running, as in Kubernetes; `mini-k8s down` removes them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from api.errors import StatusError
from client import (
    ConnectionFailed,
    EventRecorder,
    SharedInformerFactory,
    index_by_node_name,
    meta_namespace_key,
    new_client,
)
from client.reflector import Backoff
from kubelet import ipam, server
from kubelet.config import KubeletConfig
from kubelet.cri import new_runtime
from kubelet.heartbeat import Heartbeats
from kubelet.node import NodeState
from kubelet.podworker import PodWorker
from kubelet.stats import StatsProvider

log = logging.getLogger("kubelet")
BY_NODE = "byNode"
REGISTER_CONCURRENCY = 8


class Kubelet:
    def __init__(self, config: KubeletConfig) -> None:
        self.config = config
        self.node_names = config.node_names()
        n = len(self.node_names)
        # Each simulated node is a kubelet in its own right, with its own --kube-api-qps budget.
        self.client = new_client(
            config.kubeconfig or None,
            master=config.master or None,
            qps=config.kube_api_qps * n,
            burst=config.kube_api_burst * n,
            user_agent="mini-kubelet",
        )
        self.runtime = new_runtime(self)
        self.logs = self.runtime.logs  # what /containerLogs serves
        self.nodes: dict[str, NodeState] = {}
        self.workers: dict[str, PodWorker] = {}
        self.heartbeats = Heartbeats(self)
        self.factory = SharedInformerFactory(self.client, backoff_max=5.0)
        if n == 1:
            self.pods = self.factory.informer_for("pods", field_selector=f"spec.nodeName={self.node_names[0]}")
            self.node_objects = self.factory.informer_for("nodes", field_selector=f"metadata.name={self.node_names[0]}")
        else:
            self.pods = self.factory.informer_for("pods")
            self.pods.add_indexers({BY_NODE: index_by_node_name})
            self.node_objects = self.factory.informer_for("nodes")
        # the Service variables of every container (env.py); the simulated usage model shares it
        self.services = self.factory.informer_for("services")
        self.stats = StatsProvider(self)  # what /metrics/resource serves (after the pods informer: it watches it)
        self._tasks: list[asyncio.Task[Any]] = []
        self._http: tuple[Any, asyncio.Task[None]] | None = None
        self.stopping = False

    # ------------------------------------------------------------------ start and stop

    async def run(self, stop: asyncio.Event) -> None:
        if self.config.port:
            self._http = server.serve(self, self._bind_host(), self.config.port)
        await self._register_nodes()
        self._tasks.append(asyncio.create_task(self.runtime.run(), name="runtime"))
        count = len(self.nodes)
        for i, node in enumerate(self.nodes.values()):
            self._tasks.append(asyncio.create_task(self.heartbeats.run(node, i / count), name=f"beat:{node.name}"))
        self.pods.add_event_handler(self._on_pod, lambda _old, new: self._on_pod(new), self._on_pod_deleted)
        self.factory.start()
        log.info(
            "kubelet running %d node(s): %s", count, ", ".join(self.node_names[:5]) + (" ..." if count > 5 else "")
        )
        await stop.wait()

    async def shutdown(self) -> None:
        self.stopping = True  # workers end without removing their pods' containers: a restart adopts them
        for task in self._tasks + [w.task for w in self.workers.values() if w.task]:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.runtime.close()
        await self.factory.shutdown()
        # Write what events are queued, but never hang the exit on an API server that is gone.
        closing = asyncio.gather(*(n.recorder.aclose() for n in self.nodes.values()), return_exceptions=True)
        try:
            await asyncio.wait_for(closing, 2.0)
        except TimeoutError:
            pass
        if self._http is not None:
            srv, task = self._http
            srv.should_exit = True
            await asyncio.gather(task, return_exceptions=True)
        await self.client.aclose()

    def _bind_host(self) -> str:
        return self.config.address if self.config.address.startswith("127.") else "0.0.0.0"

    # ------------------------------------------------------------------ nodes

    async def _register_nodes(self) -> None:
        """Register every node, retrying until the API server answers (as the kubelet does)."""
        backoff = Backoff(0.5, 5.0)
        # One node with its --pod-cidr needs only its own Node (all the Node authorizer lets a
        # kubelet list); several nodes in one process pick free ranges, so they read every Node.
        own = len(self.node_names) == 1 and bool(self.config.pod_cidr)
        selector = f"metadata.name={self.node_names[0]}" if own else None
        while True:
            try:
                existing_list = (await self.client.list("nodes", field_selector=selector))["items"]
                break
            except (StatusError, ConnectionFailed) as exc:
                delay = backoff.next()
                log.warning("cannot list nodes (%s); retrying in %.1fs", exc, delay)
                await asyncio.sleep(delay)
        existing = {n["metadata"]["name"]: n for n in existing_list}
        used = {(n.get("spec") or {}).get("podCIDR") for n in existing_list} - {None}
        mine = [name for name in self.node_names if not (existing.get(name, {}).get("spec") or {}).get("podCIDR")]
        if self.config.pod_cidr and len(self.node_names) == 1:
            fresh = [self.config.pod_cidr] * len(mine)
        else:
            fresh = ipam.pick_cidrs(self.config.cluster_cidr, used, len(mine))
        new_cidr = dict(zip(mine, fresh, strict=True))
        for index, name in enumerate(self.node_names):
            cidr = new_cidr.get(name) or existing[name]["spec"]["podCIDR"]
            recorder = EventRecorder(self.client, "kubelet", host=name)
            self.nodes[name] = NodeState(name, index, self.config.address, cidr, recorder)

        limit = asyncio.Semaphore(REGISTER_CONCURRENCY)

        async def register(node: NodeState) -> None:
            async with limit:
                retry = Backoff(0.5, 5.0)
                while True:
                    try:
                        await self.heartbeats.register(node, existing.get(node.name))
                        break
                    except (StatusError, ConnectionFailed) as exc:
                        delay = retry.next()
                        log.warning("registering node %s failed (%s); retrying in %.1fs", node.name, exc, delay)
                        await asyncio.sleep(delay)
                        existing.pop(node.name, None)
            try:
                await self.runtime.prepare_node(node)
            except Exception as exc:  # noqa: BLE001 - its pods will try again (ensure_sandbox)
                log.warning("preparing node %s failed: %s", node.name, exc)

        await asyncio.gather(*(register(n) for n in self.nodes.values()))
        log.info("registered %d node(s)", len(self.nodes))

    # ------------------------------------------------------------------ pods

    def _on_pod(self, pod: dict[str, Any]) -> None:
        node = self.nodes.get((pod.get("spec") or {}).get("nodeName") or "")
        if node is None:
            return  # not ours (the all-pods informer of --nodes N sees everyone's)
        key = meta_namespace_key(pod)
        worker = self.workers.get(key)
        if worker is not None and worker.uid != pod["metadata"].get("uid"):
            # Same name, new pod: the old one is gone for good. Retire its worker now.
            if worker.task is not None:
                worker.task.cancel()
            del self.workers[key]
            worker.cleanup()
            worker = None
        if worker is None:
            worker = PodWorker(self, node, pod)
            self.workers[key] = worker
            worker.start()
        else:
            worker.notify()

    def _on_pod_deleted(self, pod: dict[str, Any]) -> None:
        worker = self.workers.get(meta_namespace_key(pod))
        if worker is not None:
            worker.notify()  # it finds the pod gone and ends itself

    def worker_done(self, worker: PodWorker) -> None:
        if self.stopping:
            return
        if self.workers.get(worker.key) is worker:
            del self.workers[worker.key]
            worker.cleanup()

    def pods_on(self, node_name: str) -> list[dict[str, Any]]:
        if len(self.node_names) == 1:
            return self.pods.list() if node_name == self.node_names[0] else []
        return self.pods.by_index(BY_NODE, node_name)
