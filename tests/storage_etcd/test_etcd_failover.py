"""A three-member etcd cluster loses members under a running API server: nothing acknowledged is lost.

The real setup of an HA control plane, on loopback: three etcd processes, one mini-apiserver
given all three (`--etcd-servers a,b,c`, the leader first so that it is the member in use).
Writers create ConfigMaps without pause while we SIGKILL first the etcd leader (an election
follows), restart it, then SIGKILL the member the API server is using now. We check:
- every create answered 201 is there at the end (zero lost acknowledged writes);
- a client watch opened before the kills sees every acknowledged create and no ERROR (no 410):
  the watch cache re-watched storage from its last revision on another member, no re-list;
- a write whose answer was lost is answered 504 Timeout (outcome unknown), never 503 and never
  anything else; writes succeed again after each kill.
The error window of each kill (kill → last failed request) is printed as JSON (`pytest -s`).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field

import httpx

from tests.support.apiserver import APIServerProcess
from tests.support.etcd import EtcdCluster, EtcdMember

NS = "default"
CM = f"/api/v1/namespaces/{NS}/configmaps"
WRITERS = 4
PROGRESS = 25  # acknowledged creates to wait for after each kill: writes work again


@dataclass
class Record:
    acked: list[str] = field(default_factory=list)
    failures: list[tuple[float, float, int, str]] = field(default_factory=list)  # start, end, code, name
    unexpected: list[str] = field(default_factory=list)


async def _writer(client: httpx.AsyncClient, wid: int, rec: Record, stop: asyncio.Event) -> None:
    i = 0
    while not stop.is_set():
        name = f"w{wid}-{i}"
        i += 1
        started = time.monotonic()
        try:
            r = await client.post(CM, json={"metadata": {"name": name}, "data": {"i": str(i)}})
        except httpx.HTTPError as exc:
            rec.unexpected.append(f"{name}: {exc!r}")
            continue
        if r.status_code == 201:
            rec.acked.append(name)
        elif r.status_code in (503, 504):
            body = r.json()
            want = "Timeout" if r.status_code == 504 else "ServiceUnavailable"
            if body.get("reason") != want:
                rec.unexpected.append(f"{name}: {r.status_code} {body}")
            rec.failures.append((started, time.monotonic(), r.status_code, name))
        else:
            rec.unexpected.append(f"{name}: {r.status_code} {r.text[:200]}")


async def _watch(client: httpx.AsyncClient, rv: str, seen: set[str], errors: list[str]) -> None:
    params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "600"}
    async with client.stream("GET", CM, params=params, timeout=None) as resp:
        async for line in resp.aiter_lines():
            if not line:
                continue
            ev = json.loads(line)
            if ev["type"] == "ERROR":
                errors.append(line)
            elif ev["type"] == "ADDED":
                seen.add(ev["object"]["metadata"]["name"])


async def _until(cond: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def _member_in_use(api: APIServerProcess, cluster: EtcdCluster, first: EtcdMember) -> EtcdMember:
    """The member the API server uses now: the last one its log says it moved to, else the first."""
    moves = re.findall(r"now using (\S+)", api.log_path.read_text(errors="replace"))
    url = moves[-1] if moves else first.url
    return next(m for m in cluster.members if m.url == url)


async def test_killing_the_leader_then_the_member_in_use_loses_no_acknowledged_write(
    etcd_cluster: EtcdCluster,
) -> None:
    leader = await asyncio.to_thread(etcd_cluster.leader)
    order = [leader] + [m for m in etcd_cluster.members if m is not leader]
    api = APIServerProcess(etcd_url=",".join(m.url for m in order), args=["--etcd-request-timeout", "2"])
    await asyncio.to_thread(api.start)
    rec, stop, seen, watch_errors = Record(), asyncio.Event(), set[str](), list[str]()
    async with httpx.AsyncClient(base_url=api.url, timeout=30.0) as client:
        try:
            rv = (await client.get(CM)).json()["metadata"]["resourceVersion"]
            watch = asyncio.create_task(_watch(client, rv, seen, watch_errors))
            writers = [asyncio.create_task(_writer(client, w, rec, stop)) for w in range(WRITERS)]
            await _until(lambda: len(rec.acked) >= PROGRESS, "writes before any kill")

            windows = {}
            for step in ("leader", "member in use"):
                victim = leader if step == "leader" else _member_in_use(api, etcd_cluster, order[0])
                killed_at = time.monotonic()
                victim.kill()
                before = len(rec.acked)
                await _until(lambda b=before: len(rec.acked) >= b + PROGRESS, f"writes after killing the {step}")
                errs = [f for f in rec.failures if f[1] >= killed_at]
                windows[step] = {
                    "killed": victim.url,
                    "error_window_s": round(max((f[1] for f in errs), default=killed_at) - killed_at, 3),
                    "failed_requests": len(errs),
                    "504": sum(1 for f in errs if f[2] == 504),
                    "503": sum(1 for f in errs if f[2] == 503),
                }
                await asyncio.to_thread(victim.start)  # back to three members (quorum for the next kill)

            stop.set()
            await asyncio.gather(*writers)
            assert not rec.unexpected, rec.unexpected

            # Nothing acknowledged is lost: every 201 is readable, and the list has them all.
            listed = {i["metadata"]["name"] for i in (await client.get(CM)).json()["items"]}
            lost = [n for n in rec.acked if n not in listed]
            assert not lost, f"{len(lost)} acknowledged creates lost: {lost[:10]}"
            # The watch went on through both kills: every acknowledged create, no ERROR (no 410).
            await _until(lambda: set(rec.acked) <= seen, "the watch to deliver every acknowledged create")
            assert not watch_errors, watch_errors
            assert not watch.done(), "the client watch ended during the failover"
            ambiguous = [f[3] for f in rec.failures if f[2] == 504]
            print(json.dumps({
                "acknowledged": len(rec.acked),
                "ambiguous_504": len(ambiguous),
                "ambiguous_but_committed": sum(1 for n in ambiguous if n in listed),
                "kills": windows,
            }))
        finally:
            stop.set()
            for t in asyncio.all_tasks():
                if t is not asyncio.current_task() and t.get_coro().__name__ in ("_watch", "_writer"):
                    t.cancel()
            await asyncio.to_thread(api.cleanup)
