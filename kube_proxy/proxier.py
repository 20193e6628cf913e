"""The proxier: a control loop whose actuator is the kernel's packet filter.

Desired state: for every Service port, packets to its ClusterIP (and NodePort, LoadBalancer and
external IPs) reach one of its usable endpoints, as servicemodel.py chooses them.
Current state: the nftables table this proxy applied last (kept in memory as a Ruleset; at start
the table is replaced whole, so nothing stale from an earlier run survives).
What it does about the difference: any Service or EndpointSlice event marks the proxy dirty; a
sync recomputes the Ruleset from the informers' caches and applies only the difference in one
atomic `nft` transaction. Syncs are rate-limited as kube-proxy's are (`--min-sync-period`: a change
after a quiet spell is applied at once, a burst of changes is folded into one sync per period),
and every `--sync-period` everything is re-applied from scratch, which repairs a table someone
deleted or edited by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from client import Informer, index_by_service_name
from kube_proxy import nft
from kube_proxy.ruleset import ProxyConfig, Ruleset, build, transaction
from kube_proxy.servicemodel import ServicePort, service_ports

log = logging.getLogger("kube_proxy")


class Proxier:
    def __init__(self, services: Informer, slices: Informer, cfg: ProxyConfig,
                 is_local: Callable[[str], bool], min_sync_period: float, sync_period: float) -> None:  # fmt: skip
        self.services, self.slices, self.cfg, self.is_local = services, slices, cfg, is_local
        self.min_sync_period, self.sync_period = min_sync_period, sync_period
        self.applied: Ruleset | None = None
        self.last_sync = 0.0  # monotonic time of the last successful sync (0: none yet)
        self.last_full = 0.0
        self.sync_count = 0
        self._dirty = asyncio.Event()
        slices.add_indexers({"service": index_by_service_name})
        for informer in (services, slices):
            informer.add_event_handler(lambda *_: self._dirty.set(), lambda *_: self._dirty.set(),
                                       lambda *_: self._dirty.set())  # fmt: skip

    def service_ports(self) -> list[ServicePort]:
        out: list[ServicePort] = []
        for svc in self.services.list():
            meta = svc.get("metadata") or {}
            out += service_ports(svc, self.slices.by_index("service", f"{meta.get('namespace')}/{meta.get('name')}"))
        return out

    def desired(self) -> Ruleset:
        return build(self.service_ports(), self.cfg, self.is_local)

    def sync(self) -> None:
        """One pass: compute, diff, apply. A failed apply forgets what was applied, so the next
        pass rewrites the whole table."""
        now = time.monotonic()
        full = self.applied is None or now - self.last_full >= self.sync_period
        new = self.desired()
        script = transaction(new, self.applied, self.cfg, full=full)
        try:
            nft.apply(script)
        except nft.NftError as exc:
            self.applied = None
            log.error("applying the rules failed (the next sync rewrites the table): %s", exc)
            raise
        self.applied = new
        self.last_sync = time.monotonic()
        if full:
            self.last_full = self.last_sync
        self.sync_count += 1
        log.debug("sync %d (%s): %d chains", self.sync_count, "full" if full else "diff", len(new.chains))

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self._dirty.is_set() and self.applied is not None:
                until_full = max(0.0, self.last_full + self.sync_period - time.monotonic())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._dirty.wait(), timeout=until_full)
            # bounded frequency: at most one sync per min-sync-period
            pause = self.last_sync + self.min_sync_period - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
            self._dirty.clear()
            try:
                await loop.run_in_executor(None, self.sync)
            except nft.NftError:
                self._dirty.set()
                await asyncio.sleep(max(self.min_sync_period, 1.0))
