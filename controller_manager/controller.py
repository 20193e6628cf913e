"""Controller: the one loop every controller in this package runs.

    informer events ──▶ enqueue("namespace/name") ──▶ WorkQueue ──▶ worker: reconcile(key)
                                                                     │ ok   → forget(key)
                                                                     └ error→ add_rate_limited(key)

This is the thermostat of seed 004. The informer tells us *that* something changed, never *what
to do*; the worker reads the desired state (the object's spec) and the current state (what the
informer caches show right now) and acts on the difference. Because a key, not an event, is
queued, ten changes to one object collapse into one reconcile, a reconcile that fails is simply
retried with back-off, and a controller that restarts just reconciles everything once: the loop is
level-triggered, so nothing depends on having seen a particular event.

A subclass sets `name`, registers its informers and handlers in `setup()` and implements
`reconcile(key)`. That is all; the manager starts informers, waits for their caches, and runs
`--concurrent-<name>-syncs` workers.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from api import errors
from client import WorkQueue
from client.informer import meta_namespace_key
from client.workqueue import ShutDown
from controller_manager.context import ControllerContext

log = logging.getLogger("controller_manager")


class Controller(abc.ABC):
    name: ClassVar[str]  # the --controllers name, e.g. "replicaset"
    component: ClassVar[str] = ""  # the events' "From", e.g. "replicaset-controller"
    default_workers: ClassVar[int] = 5

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.client = ctx.client
        self.queue: WorkQueue[str] = WorkQueue(self.name)
        self.recorder = ctx.recorder(self.component or f"{self.name}-controller")
        self.workers = ctx.options.workers(self.name, self.default_workers)

    @abc.abstractmethod
    def setup(self) -> None:
        """Ask ctx.informers for the informers this controller needs and add event handlers."""

    @abc.abstractmethod
    async def reconcile(self, key: str) -> None:
        """Make the world match the desired state for `key`; raise to be retried with back-off."""

    # -- helpers for subclasses --------------------------------------------------------------
    def enqueue(self, obj_or_key: Mapping[str, Any] | str) -> None:
        key = obj_or_key if isinstance(obj_or_key, str) else meta_namespace_key(obj_or_key)
        self.queue.add(key)
        self.ctx.metrics.adds.labels(self.name).inc()

    def enqueue_after(self, key: str, delay: float) -> None:
        self.queue.add_after(key, delay)

    def resync(self) -> tuple[float, Callable[[], Iterable[Mapping[str, Any]]]] | None:
        """(period, objects): look at every one of them again each period, as client-go's informer
        resync does (a controller whose world can drift without an event says so here)."""
        return None

    async def _resync_loop(self, period: float, objects: Callable[[], Iterable[Mapping[str, Any]]]) -> None:
        while True:
            await asyncio.sleep(period)
            for obj in objects():
                self.enqueue(obj)

    # -- the loop ---------------------------------------------------------------------------
    async def run(self) -> None:
        workers = [asyncio.create_task(self._worker(), name=f"{self.name}-worker-{i}") for i in range(self.workers)]
        if (resync := self.resync()) is not None:
            workers.append(asyncio.create_task(self._resync_loop(*resync), name=f"{self.name}-resync"))
        try:
            await asyncio.gather(*workers)
        finally:
            self.queue.shutdown()
            for w in workers:
                w.cancel()

    async def _worker(self) -> None:
        metrics = self.ctx.metrics
        while True:
            try:
                key = await self.queue.get()
            except ShutDown:
                return
            started = time.perf_counter()
            try:
                await self.reconcile(key)
            except asyncio.CancelledError:
                raise
            except errors.ConflictError:
                # Someone wrote the object after we read it: our cache is behind. Try again soon.
                metrics.reconciles.labels(self.name, "requeue").inc()
                self.queue.add_rate_limited(key)
            except Exception as exc:
                metrics.reconciles.labels(self.name, "error").inc()
                log.warning("%s: reconcile %s failed: %s", self.name, key, exc, exc_info=log.isEnabledFor(10))
                self.queue.add_rate_limited(key)
            else:
                metrics.reconciles.labels(self.name, "success").inc()
                self.queue.forget(key)
            finally:
                metrics.latency.labels(self.name).observe(time.perf_counter() - started)
                self.queue.done(key)
                metrics.depth.labels(self.name).set(len(self.queue))
