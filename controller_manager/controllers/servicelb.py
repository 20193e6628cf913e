"""ServiceController (`service-lb-controller`, alias `service`): LoadBalancer Services get an address.

Desired state: every Service of `type: LoadBalancer` without `spec.loadBalancerClass` shows
`status.loadBalancer.ingress: [{ip: <address>, ipMode: VIP}]` with an address of its own, so
`kubectl get svc` prints it under EXTERNAL-IP instead of `<pending>`; no other Service holds one.
Current state: Services (spec, finalizers, status) from an informer, and the pool's memory of who
holds which address (servicelb_pool.py).
What it does about the difference — the steps of Kubernetes' service controller, with the pool of
`--load-balancer-ip-pool` (default 127.1.0.0/24) standing in for the cloud provider:

1. A Service that wants a balancer and holds no address: event `EnsuringLoadBalancer` ("Ensuring
   load balancer"); the finalizer `service.kubernetes.io/load-balancer-cleanup` is added *before*
   an address is handed out, so the Service cannot vanish while holding one; an address is taken
   (`spec.loadBalancerIP`, the deprecated field, if it is in the pool and free — else it is treated
   as unset — or the lowest free one); event `EnsuredLoadBalancer`; the status is written through
   the `status` subresource. The same happens when its `spec.loadBalancerIP` becomes available.
2. A Service that no longer wants one (type changed, or being deleted) and still has the finalizer
   or an address: event `DeletingLoadBalancer` if it held an address, which is released; the status
   is cleared; the finalizer is removed *after* that (a deleted Service then really goes); event
   `DeletedLoadBalancer`. The freed address wakes the Services waiting for one.
3. The pool is exhausted: a Warning `SyncLoadBalancerFailed` ("Error syncing load balancer: failed
   to ensure load balancer: …") and a retry after 5 s, doubling up to 300 s (the back-off of
   Kubernetes' service controller); a released address brings it back at once. A write the API
   server refuses gets the same Warning and the usual retry with back-off.

A Service with `spec.loadBalancerClass` belongs to another implementation and is left alone, as in
Kubernetes. Kubernetes' controller runs step 1 on every change that could matter to a cloud
balancer (ports, annotations, …) and repeats its events each time; a pool address depends on none
of that, so here a Service that holds its address is only checked — finalizer and status put back
quietly if someone removed them. Like Kubernetes it notes `Type` ("LoadBalancer -> ClusterIP") and
`LoadbalancerIP` ("<old> -> <new>") events when those fields change.

Each balancer has a name, as a cloud's does: Kubernetes' default balancer name ("a" and the
Service's UID without dashes, at most 32 characters) with `--cluster-name` in front, the "instance
prefix" seed 000 describes (集群名,会添加到实体名称最前面) and GCE gives its routes — so two clusters
sharing one cloud tell their balancers apart: `kubernetes-a1b2c3…`. Kubernetes' events do not name it;
the controller-manager's log does, at each hand-out and release.

Why keep state beyond the informer cache? The pool is the "cloud", and on a real cloud this memory
is the provider's. Two Services must not both get one address before either status reaches the
cache, so addresses are handed out in memory; at start (and when this manager becomes leader) the
memory is rebuilt from the statuses of the Services that carry the finalizer or want a balancer,
oldest first — an address written into a status is never handed out twice.
"""

from __future__ import annotations

import logging
from typing import Any

from api import errors
from client import NORMAL, WARNING
from client.informer import meta_namespace_key, split_key
from client.workqueue import ItemExponentialFailureRateLimiter
from controller_manager.context import ControllerContext
from controller_manager.controller import Controller
from controller_manager.controllers.servicelb_pool import AddressPool

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]

FINALIZER = "service.kubernetes.io/load-balancer-cleanup"
MIN_RETRY_DELAY, MAX_RETRY_DELAY = 5.0, 300.0  # Kubernetes' minRetryDelay / maxRetryDelay
IP_MODE = "VIP"  # the traffic arrives for the address itself (kube-proxy may program it), not via a proxy


def wants_load_balancer(svc: Obj) -> bool:
    spec = svc.get("spec") or {}
    return spec.get("type") == "LoadBalancer" and not spec.get("loadBalancerClass")


def has_finalizer(svc: Obj) -> bool:
    return FINALIZER in (svc["metadata"].get("finalizers") or [])


def needs_cleanup(svc: Obj) -> bool:
    """Kubernetes' needsCleanup: our finalizer, and the Service is going or no longer a LoadBalancer."""
    spec_type = (svc.get("spec") or {}).get("type")
    return has_finalizer(svc) and (bool(svc["metadata"].get("deletionTimestamp")) or spec_type != "LoadBalancer")


def load_balancer_name(cluster_name: str, svc: Obj) -> str:
    """`<cluster-name>-a<uid without dashes>`, the uid part cut at 32 characters as Kubernetes'
    GetLoadBalancerName cuts it."""
    default_name = ("a" + str(svc["metadata"].get("uid") or "").replace("-", ""))[:32]
    return f"{cluster_name}-{default_name}"


def ingress_ips(svc: Obj) -> list[str]:
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return [i["ip"] for i in ingress if isinstance(i, dict) and i.get("ip")]


def _status_is(svc: Obj, ip: str) -> bool:
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress")
    return ingress == [{"ip": ip, "ipMode": IP_MODE}]


class ServiceController(Controller):
    name = "service-lb-controller"
    component = "service-controller"  # the events' source, as Kubernetes writes it
    default_workers = 1  # --concurrent-service-syncs defaults to 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.pool = AddressPool(ctx.options.load_balancer_ip_pool)
        self.backoff: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
            MIN_RETRY_DELAY, MAX_RETRY_DELAY
        )

    def setup(self) -> None:
        self.services = self.ctx.informers.informer_for("services")
        self.services.add_event_handler(self._added, self._updated, self._deleted)

    # -- handlers: decide only whether the key is worth a look -----------------------------
    def _ours(self, svc: Obj) -> bool:
        return wants_load_balancer(svc) or has_finalizer(svc) or self.pool.held_by(meta_namespace_key(svc)) is not None

    def _added(self, svc: Obj) -> None:
        if self._ours(svc):
            self.enqueue(svc)

    def _updated(self, old: Obj, new: Obj) -> None:
        """As Kubernetes' handler: only changes that matter to the balancer. Our own finalizer write
        is not one, so a Service waiting for an address keeps its back-off."""
        key = meta_namespace_key(new)
        held = self.pool.held_by(key)
        if wants_load_balancer(old) != wants_load_balancer(new):
            old_type, new_type = (old.get("spec") or {}).get("type"), (new.get("spec") or {}).get("type")
            self.recorder.event(new, NORMAL, "Type", f"{old_type} -> {new_type}")
            self.enqueue(key)
        elif needs_cleanup(new) or (held is not None and not wants_load_balancer(new)):
            self.enqueue(key)
        elif wants_load_balancer(new):
            old_ip = (old.get("spec") or {}).get("loadBalancerIP") or ""
            new_ip = (new.get("spec") or {}).get("loadBalancerIP") or ""
            if old_ip != new_ip:
                self.recorder.event(new, NORMAL, "LoadbalancerIP", f"{old_ip} -> {new_ip}")
                self.enqueue(key)
            elif held is not None and (not has_finalizer(new) or not _status_is(new, held)):
                self.enqueue(key)  # someone edited what we wrote (or our writes are still arriving)

    def _deleted(self, svc: Obj) -> None:
        if self._ours(svc):
            self.enqueue(svc)

    # -- the pool's memory after a restart -------------------------------------------------
    async def run(self) -> None:
        self.rebuild()
        await super().run()

    def rebuild(self) -> None:
        """Give every Service back the address its status shows, oldest Service first."""
        ours = [s for s in self.services.list() if wants_load_balancer(s) or has_finalizer(s)]
        ours.sort(key=lambda s: (s["metadata"].get("creationTimestamp") or "", meta_namespace_key(s)))
        for svc in ours:
            key = meta_namespace_key(svc)
            for ip in ingress_ips(svc):
                if self.pool.take(key, ip):
                    break
        log.info("service-lb-controller: pool %s (%d addresses), %d in use after reading the Services' statuses",
                 self.pool, self.pool.size, len(self.pool.by_ip))  # fmt: skip

    def _wake_waiting(self, freed: str) -> None:
        """An address came free: look again at the Services waiting for one (or for this one)."""
        for svc in self.services.list():
            key = meta_namespace_key(svc)
            if not wants_load_balancer(svc) or svc["metadata"].get("deletionTimestamp"):
                continue
            wanted = (svc.get("spec") or {}).get("loadBalancerIP") or ""
            if self.pool.held_by(key) is None or (wanted and self.pool.spelled(wanted) == freed):
                self.enqueue(key)

    # -- reconcile -------------------------------------------------------------------------
    async def reconcile(self, key: str) -> None:
        svc = self.services.get(key)
        if svc is None:  # gone without our finalizer (someone removed it): just give the address back
            self.backoff.forget(key)
            if (freed := self.pool.release(key)) is not None:
                log.info("service-lb-controller: %s is gone; released %s", key, freed)
                self._wake_waiting(freed)
            return
        try:
            if wants_load_balancer(svc) and not svc["metadata"].get("deletionTimestamp"):
                await self._ensure(key, svc)
            elif needs_cleanup(svc) or self.pool.held_by(key) is not None:
                await self._delete(key, svc)
        except errors.StatusError as exc:  # the API server refused a write: say so, retry with back-off
            self.recorder.event(svc, WARNING, "SyncLoadBalancerFailed", f"Error syncing load balancer: {exc}")
            raise

    async def _ensure(self, key: str, svc: Obj) -> None:
        held = self.pool.held_by(key)
        wanted = (svc.get("spec") or {}).get("loadBalancerIP") or ""
        move = bool(wanted) and self.pool.available_to(key, wanted) and self.pool.spelled(wanted) != held
        if held is not None and not move:
            # The balancer exists; only make sure the Service says so. Quietly: this is also the
            # pass that sees our own writes arrive one at a time in the cache.
            if not has_finalizer(svc):
                await self._patch_finalizers(svc, {"finalizers": [FINALIZER]})
            if not _status_is(svc, held):
                await self._write_status(svc, [{"ip": held, "ipMode": IP_MODE}])
            self.backoff.forget(key)
            return
        self.recorder.event(svc, NORMAL, "EnsuringLoadBalancer", "Ensuring load balancer")
        if not has_finalizer(svc):
            await self._patch_finalizers(svc, {"finalizers": [FINALIZER]})
        ip = (self.pool.take(key, wanted) if wanted else None) or self.pool.allocate(key)
        if ip is None:
            message = (
                f"failed to ensure load balancer: no free address in the pool {self.pool} "
                f"(--load-balancer-ip-pool): all {self.pool.size} are in use"
            )
            self.recorder.event(svc, WARNING, "SyncLoadBalancerFailed", f"Error syncing load balancer: {message}")
            delay = self.backoff.when(key)
            log.info("service-lb-controller: %s waits for an address; next try in %.0fs", key, delay)
            self.enqueue_after(key, delay)
            return
        self.backoff.forget(key)
        if held is not None and ip != held:
            self._wake_waiting(held)  # it moved to its spec.loadBalancerIP
        self.recorder.event(svc, NORMAL, "EnsuredLoadBalancer", "Ensured load balancer")
        if not _status_is(svc, ip):
            await self._write_status(svc, [{"ip": ip, "ipMode": IP_MODE}])
        log.info("service-lb-controller: %s has load balancer %s at %s",
                 key, load_balancer_name(self.ctx.cluster_name, svc), ip)  # fmt: skip

    async def _delete(self, key: str, svc: Obj) -> None:
        freed = self.pool.release(key)
        if freed is not None:
            self.recorder.event(svc, NORMAL, "DeletingLoadBalancer", "Deleting load balancer")
            log.info("service-lb-controller: released load balancer %s at %s of %s",
                     load_balancer_name(self.ctx.cluster_name, svc), freed, key)  # fmt: skip
        # The status is cleared before the finalizer goes, so a crash in between leaves a Service
        # that still needs cleanup rather than one showing an address nobody holds.
        if ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress"):
            await self._write_status(svc, None)
        if has_finalizer(svc):
            await self._patch_finalizers(svc, {"$deleteFromPrimitiveList/finalizers": [FINALIZER]})
            self.recorder.event(svc, NORMAL, "DeletedLoadBalancer", "Deleted load balancer")
        elif freed is not None:
            self.recorder.event(svc, NORMAL, "DeletedLoadBalancer", "Deleted load balancer")
        self.backoff.forget(key)
        if freed is not None:
            self._wake_waiting(freed)

    # -- writes ----------------------------------------------------------------------------
    async def _patch_finalizers(self, svc: Obj, metadata: Obj) -> None:
        """A strategic merge patch: `finalizers` merges as a set, so other finalizers are kept."""
        namespace, name = split_key(meta_namespace_key(svc))
        try:
            await self.client.patch("services", name, {"metadata": metadata}, namespace, patch_type="strategic")
        except errors.NotFoundError:
            pass  # deleted meanwhile; its delete event brings us back

    async def _write_status(self, svc: Obj, ingress: list[Obj] | None) -> None:
        """Set (or, with None, clear) status.loadBalancer.ingress through the status subresource."""
        namespace, name = split_key(meta_namespace_key(svc))
        patch = {"status": {"loadBalancer": {"ingress": ingress}}}
        try:
            await self.client.patch("services", name, patch, namespace, subresource="status")
        except errors.NotFoundError:
            pass  # the Service went away right after its finalizer did
