"""The manager: build the shared client and informers, start the chosen controllers, lead or wait.

With --leader-elect, several managers may run; they compete for the Lease
`kube-system/kube-controller-manager` and only the holder runs controllers. When it dies, its lease
runs out and another takes over — the standby is just another process waiting its turn. Losing the
lease stops this process (as kube-controller-manager does): a restart is the simplest safe way to
drop every in-flight reconcile.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import random
import socket
import uuid

from api.controller_accounts import service_account_for
from client import LeaderElector, SharedInformerFactory, client_config, new_client
from controller_manager import registry
from controller_manager.context import ControllerContext
from controller_manager.controller import Controller
from controller_manager.credentials import Credentials
from controller_manager.health import serve
from controller_manager.metrics import ControllerMetrics
from controller_manager.options import ManagerOptions
from controller_manager.service_account_clients import ServiceAccountClients

log = logging.getLogger("controller_manager")
LEASE_NAME = "kube-controller-manager"


async def controller_contexts(ctx: ControllerContext, names: list[str]) -> list[ControllerContext]:
    """One context per controller: the manager's own, or with --use-service-account-credentials a
    copy whose client (and event recorders) act as the controller's ServiceAccount."""
    if not ctx.options.use_service_account_credentials:
        return [ctx] * len(names)
    accounts = ServiceAccountClients(ctx.client, client_config(ctx.options.kubeconfig or None,
                                                               master=ctx.options.master or None),
                                     qps=ctx.options.kube_api_qps, burst=ctx.options.kube_api_burst)  # fmt: skip
    ctx.closers.append(accounts.aclose)
    contexts = []
    for name in names:
        account = service_account_for(name)
        if account is None:  # the token controller: as the manager itself
            contexts.append(ctx)
            continue
        own = dataclasses.replace(ctx, client=await accounts.client_for(account), _recorders={}, closers=[])
        ctx.closers.append(own.close)
        contexts.append(own)
    log.info("controllers use their ServiceAccounts' credentials (kube-system/<controller>)")
    return contexts


async def run_controllers(ctx: ControllerContext, names: list[str]) -> None:
    contexts = await controller_contexts(ctx, names)
    controllers: list[Controller] = [registry.load(n)(c) for n, c in zip(names, contexts, strict=True)]
    for c in controllers:
        c.setup()
    ctx.informers.start()
    synced = await ctx.informers.wait_for_cache_sync()
    log.info("caches synced: %s; starting %s", synced, ", ".join(names))
    interval = ctx.options.controller_start_interval
    running: list[asyncio.Task[None]] = []
    try:
        for i, c in enumerate(controllers):
            if i and interval > 0:
                # --controller-start-interval, jittered by up to 100% as kube-controller-manager does,
                # so a restart does not hit the API server with every controller's first wave at once.
                await asyncio.sleep(interval * (1 + random.random()))
            running.append(asyncio.create_task(c.run(), name=f"controller-{c.name}"))
            log.info("Started controller %r", c.name)
        await asyncio.gather(*running)
    finally:
        for t in running:
            t.cancel()


async def run(opts: ManagerOptions, credentials: Credentials | None = None) -> None:
    names = registry.runnable(registry.selected(opts.controllers), opts)
    client = new_client(
        opts.kubeconfig or None,
        master=opts.master or None,
        qps=opts.kube_api_qps,
        burst=opts.kube_api_burst,
        user_agent="mini-controller-manager",
    )
    metrics = ControllerMetrics()
    factory = SharedInformerFactory(client, backoff_max=opts.informer_backoff_max)
    ctx = ControllerContext(client, factory, opts, metrics, credentials or Credentials())
    health = serve(opts.address, opts.port, metrics, profiling=opts.profiling) if opts.port else None
    try:
        if not opts.leader_elect:
            await run_controllers(ctx, names)
            return
        identity = f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:6]}"

        async def lead() -> None:
            metrics.leader.labels(LEASE_NAME).set(1)
            log.info("%s became leader", identity)
            await run_controllers(ctx, names)

        elector = LeaderElector(
            client,
            lease_name=LEASE_NAME,
            identity=identity,
            namespace="kube-system",
            lease_duration=opts.leader_elect_lease_duration,
            renew_deadline=opts.leader_elect_renew_deadline,
            retry_period=opts.leader_elect_retry_period,
            on_started_leading=lead,
        )
        await elector.run()
        log.warning("%s lost leadership; exiting", identity)
    finally:
        await ctx.informers.shutdown()
        await ctx.close()
        await client.aclose()
        if health:
            health.cancel()
