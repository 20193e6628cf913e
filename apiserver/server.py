"""APIServer: the state one mini-apiserver process holds, and its start-up and background work.

Everything a request handler needs hangs off this object: the storage backend, one ResourceStore
and one WatchCache per resource type, the admission chain, and the ClusterIP / NodePort
allocators. Handlers receive it as `request.app.state.server`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from api import errors, registry
from api.registry import ResourceType
from apiserver import storage
from apiserver.admission import AdmissionChain, default_chain
from apiserver.aggregator import availability
from apiserver.aggregator import local as aggregator_local
from apiserver.config import ServerConfig
from apiserver.genericstore import ResourceStore
from apiserver.metrics import Metrics
from apiserver.registry.allocators import IPAllocator, PortAllocator
from apiserver.watchcache import WatchCache

SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"

if TYPE_CHECKING:
    from apiserver.auth.authorize import Authorizer

log = logging.getLogger("apiserver")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SYSTEM_PRIORITY_CLASSES = (
    ("system-node-critical", 2_000_001_000,
     "Used for system critical pods that must not be moved from their current node."),
    ("system-cluster-critical", 2_000_000_000,
     "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
)


# seconds admission waits for its watch cache to see this server's own writes (Kubernetes' quota
# admission gives up after as long: "resource quota evaluation timed out")
OWN_WRITES_WAIT = 10.0


class APIServer:
    def __init__(self, config: ServerConfig, store: storage.Storage) -> None:
        self.config = config
        self.storage = store
        self.metrics = Metrics()
        self.stores: dict[str, ResourceStore] = {}
        self.caches: dict[str, WatchCache] = {}
        for rt in registry.all_resources():
            if rt.key not in self.stores:
                self.stores[rt.key] = ResourceStore(rt, store, cached=self._cached_reader(rt))
        # set once the app starts (apiserver/auth/): admission's RBAC escalation check asks it
        self.authorizer: Authorizer | None = None
        self.admission: AdmissionChain = default_chain(self)
        self.cluster_ips = IPAllocator(config.service_cluster_ip_range)
        self.node_ports = PortAllocator(config.service_node_port_range)
        self._background: list[asyncio.Task[Any]] = []

    # -- lookups ------------------------------------------------------------------------------
    def store(self, rt: ResourceType) -> ResourceStore:
        return self.stores[rt.key]

    def _cached_reader(self, rt: ResourceType) -> Callable[[str], tuple[bytes, int] | None]:
        return lambda key: self.cache(rt).peek_raw(key)

    def cache(self, rt: ResourceType) -> WatchCache:
        c = self.caches.get(rt.key)
        if c is None:
            c = WatchCache(rt, self.storage, self.store(rt).root, self.config.watch_cache_size)
            self.caches[rt.key] = c
        return c

    async def cache_has_own_writes(self, rt: ResourceType) -> bool:
        """Wait (up to OWN_WRITES_WAIT) until the watch cache of `rt` has seen every write of `rt` this
        server has answered; False if it has not. The cache may trail storage (on etcd, under
        load, by a noticeable fraction of a second): admission that judges by a policy object
        (a quota, a LimitRange) a client just created and saw answered must not miss it."""
        written = self.store(rt).written
        cache = self.cache(rt)
        return cache.revision >= written or await cache.wait_fresh(written, OWN_WRITES_WAIT)

    # -- life cycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        # Every watch cache starts before the first write this process serves, so a client can
        # resume a watch from any resourceVersion it was handed by this server.
        await asyncio.gather(*(self.cache(rt).start() for rt in registry.all_resources()))
        await self._rebuild_allocators()
        await self._bootstrap()
        await aggregator_local.register_local(self)
        self._background.append(asyncio.create_task(self._compaction_loop(), name="compaction"))
        self._background.append(asyncio.create_task(availability.run(self), name="apiservice-availability"))

    async def stop(self) -> None:
        for t in self._background:
            t.cancel()
        for c in self.caches.values():
            await c.stop()
        await self.storage.close()

    async def _rebuild_allocators(self) -> None:
        """Re-learn which ClusterIPs and NodePorts are taken from the services in storage."""
        services = registry.by_key("services")
        assert services is not None
        page = await self.store(services).list(None)
        for svc in page.items:
            spec = svc.get("spec") or {}
            for ip in spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else []):
                if ip and ip != "None":
                    self.cluster_ips.mark_allocated(ip)
            for p in spec.get("ports") or []:
                if p.get("nodePort"):
                    self.node_ports.mark_allocated(int(p["nodePort"]))

    async def _bootstrap(self) -> None:
        """The objects every cluster starts with, created only when missing (restart-safe)."""
        ns_rt, svc_rt, ep_rt = (registry.by_key(k) for k in ("namespaces", "services", "endpoints"))
        assert ns_rt and svc_rt and ep_rt
        for ns in SYSTEM_NAMESPACES:
            await self.ensure(ns_rt, None, {"metadata": {"name": ns}})
        first_ip = str(next(ipaddress.ip_network(self.config.service_cluster_ip_range).hosts()))
        port = {"name": "https", "port": 443, "protocol": "TCP", "targetPort": self.config.advertise_port}
        await self.ensure(
            svc_rt,
            "default",
            {
                "metadata": {
                    "name": "kubernetes",
                    "namespace": "default",
                    "labels": {"component": "apiserver", "provider": "kubernetes"},
                },
                "spec": {"type": "ClusterIP", "clusterIP": first_ip, "ports": [port]},
            },
        )
        await self.ensure(
            ep_rt,
            "default",
            {
                "metadata": {"name": "kubernetes", "namespace": "default", "labels": {SKIP_MIRROR: "true"}},
                "subsets": [
                    {
                        "addresses": [{"ip": self.config.advertise_address}],
                        "ports": [{"name": "https", "port": self.config.advertise_port, "protocol": "TCP"}],
                    }
                ],
            },
        )

        await self._bootstrap_discovery_and_priorities()

    async def _reconcile_own_endpoints(self, svc_rt: ResourceType, ep_rt: ResourceType, slice_rt: ResourceType) -> None:
        """The `kubernetes` Service leads to this server as it runs now: a restart with another
        address or port (HTTPS added, the plain port dropped) rewrites the target port, the
        Endpoints and the EndpointSlice that an earlier start created — kube-apiserver's endpoint
        reconciler does the same. The Endpoints carry skip-mirror, as kube-apiserver's: the slice is
        written here, so the mirroring controller keeps off (data from before the label gets it)."""
        from apiserver.handlers.update import update_object

        address, port = self.config.advertise_address, self.config.advertise_port

        def service(old: dict[str, Any]) -> dict[str, Any]:
            ports = [{**p, "targetPort": port} if p.get("name") == "https" else p
                     for p in old["spec"].get("ports") or []]  # fmt: skip
            return {**old, "spec": {**old["spec"], "ports": ports}}

        def endpoints(old: dict[str, Any]) -> dict[str, Any]:
            subset = {"addresses": [{"ip": address}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}
            meta = old["metadata"]
            labels = {**(meta.get("labels") or {}), SKIP_MIRROR: "true"}
            return {**old, "metadata": {**meta, "labels": labels}, "subsets": [subset]}

        def endpoint_slice(old: dict[str, Any]) -> dict[str, Any]:
            return {**old, "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
                    "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}  # fmt: skip

        for rt, change in ((svc_rt, service), (ep_rt, endpoints), (slice_rt, endpoint_slice)):
            current = await self.store(rt).get("default", "kubernetes")
            if change(current) != current:
                await update_object(self, rt, "default", "kubernetes", change)

    async def _bootstrap_discovery_and_priorities(self) -> None:
        """The `kubernetes` Service's EndpointSlice (what kube-proxy and `kubectl describe svc`
        read) and the two built-in PriorityClasses, as kube-apiserver creates them."""
        svc_rt, ep_rt, slice_rt, pc_rt = (registry.by_key(k) for k in (
            "services", "endpoints", "endpointslices.discovery.k8s.io", "priorityclasses.scheduling.k8s.io"))
        assert svc_rt and ep_rt and slice_rt and pc_rt
        await self.ensure(
            slice_rt,
            "default",
            {
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"kubernetes.io/service-name": "kubernetes"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": [self.config.advertise_address], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": self.config.advertise_port, "protocol": "TCP"}],
            },
        )
        await self._reconcile_own_endpoints(svc_rt, ep_rt, slice_rt)
        for name, value, description in SYSTEM_PRIORITY_CLASSES:
            await self.ensure(pc_rt, None, {"metadata": {"name": name}, "value": value, "description": description})

    async def ensure(self, rt: ResourceType, namespace: str | None, obj: dict[str, Any]) -> None:
        """Create `obj` unless an object of that name exists (the bootstrap objects: restart-safe)."""
        from apiserver.handlers.create import create_object

        try:
            await self.store(rt).get(namespace, obj["metadata"]["name"])
            return
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
        try:
            await create_object(self, rt, namespace, obj)
        except errors.StatusError as exc:
            if exc.reason != "AlreadyExists":
                raise

    async def _compaction_loop(self) -> None:
        """Compact storage every --compaction-interval seconds.

        The embedded store knows its own policy (keep the newest N revisions and a time window:
        `compact_auto`). For etcd we do what kube-apiserver does: compact to the revision seen one
        interval ago, so at least one interval of history is always there for watchers to resume.
        """
        interval = self.config.compaction_interval
        if interval <= 0:
            return
        auto = getattr(self.storage, "compact_auto", None)
        previous = 0
        while True:
            await asyncio.sleep(interval)
            try:
                if auto is not None:
                    await auto()
                    continue
                current = await self.storage.current_revision()
                if previous > 0:
                    await self.storage.compact(previous)
                    log.info("compacted storage to revision %d", previous)
                previous = current
            except storage.StorageError as exc:
                log.warning("compaction skipped: %s", exc)
