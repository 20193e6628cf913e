"""Leader election on a Lease: exactly one leader; a dead leader is replaced within the lease."""

from __future__ import annotations

import asyncio
import re
import time
import uuid

from client.leaderelection import LeaderElector
from client.rest import RESTClient
from tests.client.conftest import eventually

MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
LEASE, RENEW, RETRY = 1.5, 1.0, 0.2


def elector(client: RESTClient, lease: str, identity: str, log: list[str], **kw: object) -> LeaderElector:
    return LeaderElector(
        client,
        lease_name=lease,
        identity=identity,
        lease_duration=LEASE,
        renew_deadline=RENEW,
        retry_period=RETRY,
        on_started_leading=lambda: log.append(f"start:{identity}"),
        on_stopped_leading=lambda: log.append(f"stop:{identity}"),
        **kw,  # type: ignore[arg-type]
    )


async def get_lease(client: RESTClient, name: str) -> dict:
    return await client.get("leases.coordination.k8s.io", name, "kube-system")


async def test_two_candidates_one_leader_and_failover_within_the_lease(client: RESTClient) -> None:
    name = f"le-{uuid.uuid4().hex[:6]}"
    log: list[str] = []
    a = elector(client, name, "a", log, release_on_cancel=False)
    b = elector(client, name, "b", log, release_on_cancel=False)
    tasks = {"a": asyncio.create_task(a.run()), "b": asyncio.create_task(b.run())}
    try:
        await eventually(lambda: a.is_leader() or b.is_leader(), timeout=5, what="a leader")
        # Over several renew rounds, never two leaders at once.
        hold_until = time.monotonic() + 4 * RETRY
        while time.monotonic() < hold_until:
            assert a.is_leader() != b.is_leader()
            await asyncio.sleep(0.02)
        leader, follower = (a, b) if a.is_leader() else (b, a)

        lease = await get_lease(client, name)
        spec = lease["spec"]
        assert spec["holderIdentity"] == leader.identity
        assert spec["leaseDurationSeconds"] == 2  # 1.5 s, rounded to whole seconds on the wire
        assert MICRO_TIME.match(spec["renewTime"]) and MICRO_TIME.match(spec["acquireTime"])
        first_renew = spec["renewTime"]
        await eventually(
            lambda: _renewed_since(client, name, first_renew), timeout=3, what="renewTime to advance"
        )
        transitions = (await get_lease(client, name))["spec"].get("leaseTransitions", 0)

        # The leader crashes: no release, its lease just stops being renewed.
        tasks[leader.identity].cancel()
        crashed_at = time.monotonic()
        # the lease, the follower's polls around it, and slack for two shared cores under the
        # whole suite (+1 s was once not enough there: a single request can wait that long)
        await eventually(follower.is_leader, timeout=LEASE + 3 * RETRY + 2.0, what="failover")
        assert time.monotonic() - crashed_at <= LEASE + 3 * RETRY + 2.0
        lease = await get_lease(client, name)
        assert lease["spec"]["holderIdentity"] == follower.identity
        assert lease["spec"]["leaseTransitions"] == transitions + 1
        assert log[0] == f"start:{leader.identity}" and f"start:{follower.identity}" in log
    finally:
        for t in tasks.values():
            t.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)


async def _renewed_since(client: RESTClient, name: str, renew_time: str) -> bool:
    return (await get_lease(client, name))["spec"]["renewTime"] > renew_time


async def test_a_clean_stop_releases_the_lease_for_an_immediate_successor(client: RESTClient) -> None:
    name = f"le-{uuid.uuid4().hex[:6]}"
    log: list[str] = []
    a = elector(client, name, "a", log)  # release_on_cancel=True by default
    task = asyncio.create_task(a.run())
    await eventually(a.is_leader, timeout=5, what="a to lead")
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert log == ["start:a", "stop:a"]
    assert (await get_lease(client, name))["spec"]["holderIdentity"] == ""

    b = elector(client, name, "b", log)
    started = time.monotonic()
    task_b = asyncio.create_task(b.run())
    try:
        await eventually(b.is_leader, timeout=5, what="b to lead")
        assert time.monotonic() - started < LEASE  # no need to wait out a.s lease
    finally:
        task_b.cancel()
        await asyncio.gather(task_b, return_exceptions=True)


async def test_a_coroutine_callback_runs_while_leading_and_is_cancelled_after(client: RESTClient) -> None:
    name = f"le-{uuid.uuid4().hex[:6]}"
    running = asyncio.Event()
    cancelled = asyncio.Event()

    async def lead() -> None:
        running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    e = LeaderElector(
        client, lease_name=name, identity="x", lease_duration=LEASE, renew_deadline=RENEW, retry_period=RETRY,
        on_started_leading=lead,
    )  # fmt: skip
    task = asyncio.create_task(e.run())
    await asyncio.wait_for(running.wait(), 5)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await asyncio.wait_for(cancelled.wait(), 2)


async def test_a_leader_that_cannot_renew_steps_down_before_the_lease_expires() -> None:
    from tests.support.apiserver import APIServerProcess

    server = await asyncio.to_thread(APIServerProcess().start)
    try:
        async with RESTClient(server.url, qps=0, timeout=0.5) as c:
            log: list[str] = []
            e = elector(c, "le-down", "solo", log)
            task = asyncio.create_task(e.run())
            await eventually(e.is_leader, timeout=5, what="solo to lead")
            server.kill()
            lost_at = time.monotonic()
            await asyncio.wait_for(task, RENEW + 2 * RETRY + 1.0)  # run() returns: leadership lost
            assert time.monotonic() - lost_at < LEASE + RETRY  # gave up before anyone may take over
            assert not e.is_leader() and log == ["start:solo", "stop:solo"]
    finally:
        await asyncio.to_thread(server.cleanup)
