"""LeaderElector: one active replica at a time, using a Lease object as the lock.

Run two controller-managers for availability and both would fight over every ReplicaSet. So each
replica tries to *hold a Lease* (`coordination.k8s.io/v1`, e.g. `kube-system/kube-controller-manager`)
and only the holder runs its controllers:

    spec:
      holderIdentity: cm-host-1_4f1c...       who leads
      leaseDurationSeconds: 15                how long a silent leader is trusted
      acquireTime: 2026-01-01T00:00:00.000000Z
      renewTime:   2026-01-01T00:00:10.000000Z  the leader's heartbeat
      leaseTransitions: 3                     how many times leadership changed hands

The loop (client-go's leaderelection, defaults 15 s / 10 s / 2 s):
- Every `retry_period`, a candidate reads the Lease. It may take it only if nobody holds it, or
  the holder has not renewed for `lease_duration`. "Not renewed" is judged by *our own clock*:
  we note the local time whenever we see the record change, and wait a full lease duration
  after that. Clocks of different machines are never compared - the renewTime written by
  another host is information, not a deadline.
- Writes are compare-and-swap on `metadata.resourceVersion`: if two candidates try at once, one
  PUT wins and the other gets 409 Conflict and stays a follower. That is the whole election.
- The leader renews every `retry_period`. If it cannot renew for `renew_deadline` (< lease
  duration, so it gives up *before* anybody else may take over), it stops leading:
  `on_stopped_leading` runs and `run()` returns. A real component then exits and restarts.
- On a clean stop the leader releases the Lease (holderIdentity cleared), so a successor need not
  wait out the lease duration. A crashed leader cannot; its successor waits.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from api.errors import AlreadyExistsError, ConflictError, NotFoundError, StatusError
from client.errors import ConnectionFailed
from client.rest import RESTClient

log = logging.getLogger("client.leaderelection")

Callback = Callable[[], Awaitable[None] | None]


def micro_time(dt: datetime | None = None) -> str:
    """RFC 3339 with microseconds, as Kubernetes writes a MicroTime: 2026-01-01T00:00:00.000000Z."""
    return (dt or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(
        self,
        client: RESTClient,
        *,
        lease_name: str,
        identity: str,
        namespace: str = "kube-system",
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_started_leading: Callback | None = None,
        on_stopped_leading: Callback | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        release_on_cancel: bool = True,
    ) -> None:
        if not lease_duration > renew_deadline > retry_period > 0:
            raise ValueError("need lease_duration > renew_deadline > retry_period > 0")
        self.client = client
        self.lease_name = lease_name
        self.namespace = namespace
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.release_on_cancel = release_on_cancel
        self._observed: dict[str, Any] | None = None  # the last Lease we read or wrote
        self._observed_time = 0.0  # local monotonic time when the record last changed
        self._leading = False
        self._reported_leader = ""
        self._leading_task: asyncio.Task[Any] | None = None

    # ------------------------------------------------------------------ state

    def is_leader(self) -> bool:
        return self._leading

    def get_leader(self) -> str:
        """The holder we last observed ("" if none)."""
        return str(((self._observed or {}).get("spec") or {}).get("holderIdentity") or "")

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Campaign until elected, lead until the lease is lost, then return. Cancel to stop
        (the lease is released if `release_on_cancel`)."""
        try:
            await self._acquire()
            await self._start_leading()
            await self._renew()
        finally:
            was_leading = self._leading
            self._leading = False
            if self._leading_task is not None:
                self._leading_task.cancel()
            if was_leading:
                if self.release_on_cancel:
                    await asyncio.shield(self._release())
                await self._callback(self.on_stopped_leading)

    async def _acquire(self) -> None:
        while not await self._try_acquire_or_renew():
            await asyncio.sleep(self.retry_period * (1 + random.random() * 0.2))  # jitter, as client-go
        log.info("%s acquired lease %s/%s", self.identity, self.namespace, self.lease_name)

    async def _renew(self) -> None:
        last_renew = time.monotonic()
        while True:
            await asyncio.sleep(self.retry_period)
            left = self.renew_deadline - (time.monotonic() - last_renew)
            try:  # one slow request must not carry us past the renew deadline
                renewed = left > 0 and await asyncio.wait_for(self._try_acquire_or_renew(), left)
            except TimeoutError:
                renewed = False
            if renewed:
                last_renew = time.monotonic()
                continue
            if self._observed_holder_is_other() or time.monotonic() - last_renew >= self.renew_deadline:
                log.warning("%s lost lease %s/%s", self.identity, self.namespace, self.lease_name)
                return

    async def _start_leading(self) -> None:
        self._leading = True
        if self.on_started_leading is not None:
            result = self.on_started_leading()
            if inspect.isawaitable(result):  # a coroutine runs for as long as we lead
                self._leading_task = asyncio.ensure_future(result)

    @staticmethod
    async def _callback(fn: Callback | None) -> None:
        if fn is None:
            return
        try:
            result = fn()
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("leader election callback failed")

    # ------------------------------------------------------------------ one attempt

    def _observed_holder_is_other(self) -> bool:
        holder = self.get_leader()
        return bool(holder) and holder != self.identity

    def _observe(self, lease: dict[str, Any]) -> None:
        old = self._observed
        changed = (
            old is None
            or (old.get("spec") or {}) != (lease.get("spec") or {})
            or (old.get("metadata") or {}).get("resourceVersion")
            != (lease.get("metadata") or {}).get("resourceVersion")
        )
        self._observed = lease
        if changed:
            self._observed_time = time.monotonic()
        holder = self.get_leader()
        if holder != self._reported_leader:
            self._reported_leader = holder
            if holder and self.on_new_leader is not None:
                try:
                    self.on_new_leader(holder)
                except Exception:
                    log.exception("on_new_leader failed")

    async def _try_acquire_or_renew(self) -> bool:
        now = micro_time()
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(int(round(self.lease_duration)), 1),
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": 0,
        }
        try:
            try:
                lease = await self.client.get("leases.coordination.k8s.io", self.lease_name, self.namespace)
            except NotFoundError:
                body = {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.lease_name, "namespace": self.namespace},
                    "spec": spec,
                }
                self._observe(await self.client.create("leases.coordination.k8s.io", body, self.namespace))
                return True
            self._observe(lease)
            old = lease.get("spec") or {}
            holder = old.get("holderIdentity") or ""
            expired = time.monotonic() > self._observed_time + self.lease_duration
            if holder and holder != self.identity and not expired:
                return False  # somebody else leads and is alive
            if holder == self.identity:
                spec["acquireTime"] = old.get("acquireTime") or now
                spec["leaseTransitions"] = old.get("leaseTransitions") or 0
            else:
                spec["leaseTransitions"] = (old.get("leaseTransitions") or 0) + 1
            updated = dict(lease, spec={**old, **spec})
            self._observe(await self.client.update("leases.coordination.k8s.io", updated))
            return True
        except (ConflictError, AlreadyExistsError):
            return False  # another candidate wrote first: the CAS decided
        except (ConnectionFailed, StatusError) as exc:
            log.warning(
                "%s: error reading or writing lease %s/%s: %s",
                self.identity,
                self.namespace,
                self.lease_name,
                exc,
            )
            return False

    async def _release(self) -> None:
        """Give the lease up: clear holderIdentity so a successor need not wait the lease out."""
        lease = self._observed
        if not lease or self.get_leader() != self.identity:
            return
        now = micro_time()
        spec = dict(
            lease.get("spec") or {}, holderIdentity="", leaseDurationSeconds=1, renewTime=now, acquireTime=now
        )
        try:
            self._observe(await self.client.update("leases.coordination.k8s.io", dict(lease, spec=spec)))
            log.info("%s released lease %s/%s", self.identity, self.namespace, self.lease_name)
        except (ConnectionFailed, StatusError) as exc:
            log.warning("%s: could not release lease: %s", self.identity, exc)
