"""Scheduler benchmark: how fast pods get bound, how fast they start, what 1,000 nodes cost.

Run: `.venv/bin/python bench/scheduler.py [--quick]`. Prints one JSON document. It starts its own
API server (embedded store, temp dir), one `mini-kubelet` process simulating many nodes
(`--nodes 100`, then `--nodes 1000`) and `mini-scheduler`, all as real processes on loopback.

Measured:
- kubelet CPU: utime+stime of the kubelet process (from /proc/<pid>/stat) over a window while
  its 1,000 nodes heartbeat at the kubelet's default frequencies and no pods exist, in cores;
- bind throughput: N pods created as fast as possible (32 concurrent POSTs through RESTClient); pods
  bound per second = N / (first create sent -> last pod seen with a nodeName through a watch).
  When the API server creates pods slower than the scheduler binds them, that number is the
  create rate; so on 1,000 nodes a "backlog" run also freezes the scheduler (SIGSTOP) while the
  pods are created and measures from its resume (SIGCONT) to the last binding;
- start-up latency: pods created at a steady 100/s on 100 nodes, once the burst's pods all run (so
  the kubelet has no backlog left); create request sent ->
  phase Running seen through a watch, p50/p99 (client clocks: creationTimestamp has one-second
  resolution, too coarse for this). Includes the kubelet's simulated --pod-startup-delay.

Goals (reported, not asserted): >= 300 pods/s bound on 1,000 nodes; start-up p99 <= 2 s at
100 pods/s on 100 nodes; 1,000 heartbeating nodes cost the kubelet under half a core.
The scheduler runs with --kube-api-qps/--kube-api-burst raised (the defaults, 50/100, would cap
binding at 50/s by design). The machine may be shared: numbers are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from api.errors import AlreadyExistsError, StatusError  # noqa: E402
from bench.processcpu import cpu_seconds  # noqa: E402
from client.errors import ConnectionFailed  # noqa: E402
from client.rest import RESTClient  # noqa: E402
from tests.support.apiserver import APIServerProcess  # noqa: E402
from tests.support.component import ComponentProcess, free_port, wait_for  # noqa: E402

CONCURRENCY = 32
SCHEDULER_ARGS = ["--kube-api-qps", "5000", "--kube-api-burst", "5000", "--parallel-binds", "64"]


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def pod_body(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "containers": [
                {"name": "app", "image": "pause", "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}
            ]
        },
    }


class Cluster:
    """API server + (kubelet | API-created Nodes) + scheduler for one node count."""

    def __init__(self, nodes: int) -> None:
        self.nodes = nodes
        self.api = APIServerProcess(args=["--watch-cache-size", "50000"])
        self.kubelet: ComponentProcess | None = None
        self.scheduler: ComponentProcess | None = None

    def start(self) -> None:
        self.api.start()
        port = free_port()
        args = ["--master", self.api.url, "--node-name", "sim", "--nodes", str(self.nodes), "--port", str(port)]
        self.kubelet = ComponentProcess("kubelet", args, health_port=port).start(timeout=120)
        with self.api.client() as c:
            wait_for(lambda: _ready_nodes(c) >= self.nodes, timeout=300, interval=1.0, what="nodes Ready")
        port = free_port()
        self.scheduler = ComponentProcess(
            "scheduler", ["--master", self.api.url, "--port", str(port), *SCHEDULER_ARGS], health_port=port
        ).start(timeout=60)

    def stop(self) -> None:
        for p in (self.scheduler, self.kubelet):
            if p is not None:
                p.stop()
        self.api.cleanup()


def _ready_nodes(c: httpx.Client) -> int:
    items = c.get("/api/v1/nodes").json()["items"]
    return sum(
        1
        for n in items
        if any(x["type"] == "Ready" and x["status"] == "True" for x in n["status"].get("conditions") or [])
    )


class PodWatch:
    """Watch one namespace; note when each pod is first seen bound and first seen Running."""

    def __init__(self, url: str, namespace: str) -> None:
        self.url, self.namespace = url, namespace
        self.bound: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())
        await asyncio.wait_for(self._ready.wait(), 30)

    async def _run(self) -> None:
        async with httpx.AsyncClient(base_url=self.url, timeout=None, trust_env=False) as c:
            rv = (await c.get(f"/api/v1/namespaces/{self.namespace}/pods")).json()["metadata"]["resourceVersion"]
            params = {"watch": "1", "resourceVersion": rv}
            async with c.stream("GET", f"/api/v1/namespaces/{self.namespace}/pods", params=params) as resp:
                self._ready.set()
                async for line in resp.aiter_lines():
                    if not line:
                        continue
                    now = time.perf_counter()
                    obj = json.loads(line).get("object") or {}
                    name = (obj.get("metadata") or {}).get("name")
                    if not name:
                        continue
                    if (obj.get("spec") or {}).get("nodeName") and name not in self.bound:
                        self.bound[name] = now
                    if (obj.get("status") or {}).get("phase") == "Running" and name not in self.running:
                        self.running[name] = now

    async def wait(self, what: dict[str, float], n: int, timeout: float) -> bool:
        deadline = time.perf_counter() + timeout
        while len(what) < n and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        return len(what) >= n

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


async def post_pod(c: RESTClient, name: str, namespace: str) -> bool:
    """POST one pod, retrying a dropped connection (an overloaded server may reset one)."""
    for attempt in range(5):
        try:
            await c.create("pods", pod_body(name, namespace), namespace)
            return True
        except AlreadyExistsError:
            return attempt > 0  # our own earlier attempt got through after all
        except StatusError:
            return False
        except ConnectionFailed:
            await asyncio.sleep(0.2 * (attempt + 1))
    return False


async def create_ns(c: RESTClient, ns: str) -> None:
    with contextlib.suppress(AlreadyExistsError):
        await c.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


async def events_written(c: RESTClient, namespace: str, n: int, timeout: float) -> None:
    """Wait until `n` events exist in the namespace: each started pod gets four (Scheduled, Pulled,
    Created, Started), which components send after the fact, so a cluster whose pods all run may
    still be writing them."""
    deadline = time.perf_counter() + timeout
    while len((await c.list("events", namespace))["items"]) < n and time.perf_counter() < deadline:
        await asyncio.sleep(0.5)


def creator(url: str) -> RESTClient:
    """The project's own client, as components use it, with CONCURRENCY connections and no rate limit."""
    return RESTClient(url, qps=0, burst=1, max_inflight=CONCURRENCY, timeout=60)


async def burst(
    url: str, n: int, namespace: str, freeze_pid: int | None = None, settle: bool = False
) -> dict[str, Any]:
    """Create n pods as fast as possible; pods bound per second through a watch. With `settle`,
    also wait until every pod is Running and its events are written, so whatever is measured next
    starts on a quiet cluster.

    With `freeze_pid` (the scheduler), the scheduler is stopped (SIGSTOP) while the pods are
    created and resumed (SIGCONT) after: the rate from resume to the last binding is the
    scheduler's own throughput on a backlog, free of the API server's create rate."""
    async with creator(url) as c:
        await create_ns(c, namespace)
        watch = PodWatch(url, namespace)
        await watch.start()
        names = iter(range(n))
        errors = 0

        async def worker() -> None:
            nonlocal errors
            for i in names:
                errors += not await post_pod(c, f"p-{i}", namespace)

        if freeze_pid:
            os.kill(freeze_pid, signal.SIGSTOP)
        t0 = t_create = time.perf_counter()
        try:
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        finally:
            if freeze_pid:
                os.kill(freeze_pid, signal.SIGCONT)
        created = time.perf_counter()
        if freeze_pid:
            t0 = created  # measure from the moment the scheduler resumes
        complete = await watch.wait(watch.bound, n, timeout=max(120, n / 20))
        if settle:
            await watch.wait(watch.running, n, timeout=max(120, n / 20))
            await events_written(c, namespace, 4 * n, timeout=max(120, n / 20))
        await watch.stop()
    last = max(watch.bound.values()) if watch.bound else created
    settled = {"all_running_s": round(max(watch.running.values()) - t0, 2)} if settle and watch.running else {}
    return settled | {
        "mode": "backlog (scheduler frozen during creation)" if freeze_pid else "create-as-fast-as-possible",
        "pods": n,
        "create_errors": errors,
        "created_per_s": round(n / (created - t_create), 1),
        "bound": len(watch.bound),
        "all_bound": complete,
        "bound_per_s": round(len(watch.bound) / (last - t0), 1),
        "seconds": round(last - t0, 2),
    }


async def steady(url: str, rate: float, seconds: float, namespace: str) -> dict[str, Any]:
    """Create pods at a steady rate; create -> Running latency through a watch."""
    n = int(rate * seconds)
    sent: dict[str, float] = {}
    async with creator(url) as c:
        await create_ns(c, namespace)
        watch = PodWatch(url, namespace)
        await watch.start()
        t0 = time.perf_counter()

        async def one(i: int) -> None:
            await asyncio.sleep(max(0.0, t0 + i / rate - time.perf_counter()))
            name = f"s-{i}"
            sent[name] = time.perf_counter()
            await post_pod(c, name, namespace)

        await asyncio.gather(*(one(i) for i in range(n)))
        await watch.wait(watch.running, n, timeout=120)
        await watch.stop()
    latencies = [watch.running[k] - sent[k] for k in watch.running if k in sent]
    bound = [watch.bound[k] - sent[k] for k in watch.bound if k in sent]
    out: dict[str, Any] = {"rate_per_s": rate, "pods": n, "running": len(latencies)}
    if latencies:
        out |= {
            "startup_p50_s": round(percentile(latencies, 50), 3),
            "startup_p99_s": round(percentile(latencies, 99), 3),
        }
    if bound:
        out |= {"bind_p50_s": round(percentile(bound, 50), 3), "bind_p99_s": round(percentile(bound, 99), 3)}
    return out


async def measure_cpu(pids: dict[str, int], window: float) -> dict[str, float]:
    before = {k: cpu_seconds(p) for k, p in pids.items()}
    await asyncio.sleep(window)
    return {k: round((cpu_seconds(p) - before[k]) / window, 3) for k, p in pids.items()}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {
        "benchmark": "scheduler",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load_avg_start": os.getloadavg()},
        "scheduler_flags": SCHEDULER_ARGS,
        "runs": [],
    }
    # 100 nodes: burst throughput and steady start-up latency.
    small = Cluster(100)
    small.start()
    try:
        first = await burst(small.api.url, args.pods_small, "burst-100", settle=True)
        r: dict[str, Any] = {"nodes": 100, "burst": first}
        r["steady"] = await steady(small.api.url, 100.0, args.steady_seconds, "steady-100")
        report["runs"].append(r)
    finally:
        small.stop()
    # 1,000 nodes: heartbeat cost first (no pods), then bursts.
    big = Cluster(1000)
    big.start()
    try:
        r = {"nodes": 1000}
        assert big.scheduler is not None and big.scheduler.proc is not None
        pids = {"scheduler": big.scheduler.proc.pid}
        if big.kubelet is not None and big.kubelet.proc is not None:
            pids["kubelet"] = big.kubelet.proc.pid
        if big.api.proc is not None:
            pids["apiserver"] = big.api.proc.pid
        r["idle_heartbeat_cpu_cores"] = await measure_cpu(pids, args.cpu_window)
        r["cpu_window_s"] = args.cpu_window
        r["bursts"] = [await burst(big.api.url, n, f"burst-1000-{n}") for n in args.pods_big]
        r["bursts"].append(
            await burst(big.api.url, args.pods_big[-1], "backlog-1000", freeze_pid=big.scheduler.proc.pid)
        )
        report["runs"].append(r)
    finally:
        big.stop()
    report["machine"]["load_avg_end"] = os.getloadavg()
    goals = {}
    big_bursts = report["runs"][-1].get("bursts") or []
    if big_bursts:
        goals["bound_per_s_1000_nodes>=300"] = max(b["bound_per_s"] for b in big_bursts)
    steady_run = report["runs"][0].get("steady")
    if steady_run and "startup_p99_s" in steady_run:
        goals["startup_p99_s<=2"] = steady_run["startup_p99_s"]
    cpu = report["runs"][-1].get("idle_heartbeat_cpu_cores", {})
    if "kubelet" in cpu:
        goals["kubelet_cores_1000_nodes<0.5"] = cpu["kubelet"]
    report["goals"] = goals
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods-small", type=int, default=1000)
    parser.add_argument("--pods-big", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--steady-seconds", type=float, default=10.0)
    parser.add_argument("--cpu-window", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true", help="Small numbers, for a smoke run.")
    args = parser.parse_args(argv)
    if args.quick:
        args.pods_small, args.pods_big, args.steady_seconds, args.cpu_window = 200, [300], 3.0, 5.0
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
