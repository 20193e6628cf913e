"""Process runtime benchmark: how fast real pods become Ready, and what running them costs.

Run (as root, on Linux): `.venv/bin/python bench/runtime.py [--pods 50] [--nodes 3]`. Prints one
JSON document. It starts its own API server, scheduler and `--nodes` kubelets with
`--runtime process` (root dirs in a temp dir), so it never touches a real cluster.

What is measured:
- N pods (busybox `sleep 3600`) created at once by N concurrent clients; per pod the time from
  sending its create to a watcher seeing its Ready condition True: p50, p99, max (goal from
  issue 14: p99 <= 2 s for 50 pods on 3 nodes); and, to tell the API server's, the scheduler's
  and the kubelets' shares apart, the time to the create's answer and to the watcher seeing the
  pod bound to a node;
- with them running, over a 10 s window: the kubelets' CPU (% of one core) and RSS, and the
  shims' RSS (one shim process per container), each also per 100 running pods;
- deleting them all: from the delete calls to the last pod gone.
On 2 shared cores everything here competes with the benchmark itself: treat numbers as bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from bench.processcpu import cpu_seconds  # noqa: E402
from kubelet.volumes import mounts_under  # noqa: E402
from tests.support.apiserver import APIServerProcess  # noqa: E402
from tests.support.component import ComponentProcess, free_port, wait_for  # noqa: E402

GOALS = {"create_to_ready_p99_s": 2.0}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def shim_pids(roots: list[Path]) -> list[int]:
    out = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"kubelet.shim" in a for a in cmd) and any(str(r).encode() in b" ".join(cmd) for r in roots):
            out.append(int(pid))
    return out


def ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in pod.get("status", {}).get("conditions")
               or [])  # fmt: skip


async def create_and_wait(url: str, count: int) -> dict[str, list[float]]:
    """Seconds from each pod's create to its create's answer, its binding and its Ready condition."""
    sent: dict[str, float] = {}
    answered: dict[str, float] = {}
    bound: dict[str, float] = {}
    seen: dict[str, float] = {}
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        rv = (await client.get("/api/v1/namespaces/default/pods")).json()["metadata"]["resourceVersion"]
        done = asyncio.Event()

        async def watch() -> None:
            params = {"watch": "1", "resourceVersion": rv}
            async with client.stream("GET", "/api/v1/namespaces/default/pods", params=params, timeout=None) as resp:
                async for line in resp.aiter_lines():
                    if not line:
                        continue
                    obj = json.loads(line)["object"]
                    name = obj["metadata"]["name"]
                    if name not in bound and obj["spec"].get("nodeName"):
                        bound[name] = time.monotonic()
                    if name not in seen and ready(obj):
                        seen[name] = time.monotonic()
                        if len(seen) == count:
                            done.set()
                            return

        watcher = asyncio.create_task(watch())

        async def create(i: int) -> None:
            name = f"bench-{i}"
            body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                    "spec": {"terminationGracePeriodSeconds": 1, "containers": [
                        {"name": "c", "image": "busybox", "command": ["sleep", "3600"]}]}}  # fmt: skip
            sent[name] = time.monotonic()
            resp = await client.post("/api/v1/namespaces/default/pods", json=body)
            resp.raise_for_status()
            answered[name] = time.monotonic()

        await asyncio.gather(*(create(i) for i in range(count)))
        await asyncio.wait_for(done.wait(), 120)
        watcher.cancel()
    return {stage: [when[name] - sent[name] for name in sent]
            for stage, when in (("answered", answered), ("bound", bound), ("ready", seen))}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=50)
    parser.add_argument("--nodes", type=int, default=3)
    opts = parser.parse_args()
    if os.geteuid() != 0 or sys.platform != "linux":
        sys.exit("bench/runtime.py needs root on Linux (the process runtime)")
    tmp = Path(tempfile.mkdtemp(prefix="mini-k8s-bench-runtime-"))
    server = APIServerProcess().start()
    procs: list[ComponentProcess] = []
    roots: list[Path] = []
    try:
        port = free_port()
        procs.append(ComponentProcess("scheduler", ["--master", server.url, "--port", str(port)], health_port=port))
        for i in range(opts.nodes):
            port = free_port()
            roots.append(tmp / f"node-{i}")
            args = ["--master", server.url, "--node-name", f"bench-node-{i}", "--port", str(port), "--runtime",
                    "process", "--root-dir", str(roots[-1]), "--pod-startup-delay", "0"]  # fmt: skip
            procs.append(ComponentProcess("kubelet", args, health_port=port))
        for p in procs:
            p.start()
        nodes_ready = lambda: len(httpx.get(f"{server.url}/api/v1/nodes").json()["items"]) == opts.nodes  # noqa: E731
        wait_for(nodes_ready, timeout=30, what="nodes registered")
        stages = asyncio.run(create_and_wait(server.url, opts.pods))
        latencies = stages["ready"]

        kubelets = [p.proc.pid for p in procs[1:] if p.proc is not None]
        before = sum(cpu_seconds(pid) for pid in kubelets)
        time.sleep(10)
        cpu_pct = (sum(cpu_seconds(pid) for pid in kubelets) - before) / 10 * 100
        kubelet_rss = sum(rss_bytes(pid) for pid in kubelets)
        shims = shim_pids(roots)
        shim_rss = sum(rss_bytes(pid) for pid in shims)

        start = time.monotonic()
        httpx.delete(f"{server.url}/api/v1/namespaces/default/pods", timeout=60).raise_for_status()
        wait_for(lambda: not httpx.get(f"{server.url}/api/v1/namespaces/default/pods").json()["items"], timeout=120,
                 interval=0.1, what="all pods gone")  # fmt: skip
        delete_s = time.monotonic() - start
        per100 = 100 / opts.pods
        result = {
            "benchmark": "runtime",
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "pods": opts.pods,
            "nodes": opts.nodes,
            "create_to_ready_s": {
                "p50": round(statistics.median(latencies), 3),
                "p99": round(pct(latencies, 0.99), 3),
                "max": round(max(latencies), 3),
            },  # fmt: skip
            **{f"create_to_{stage}_s": {"p50": round(statistics.median(stages[stage]), 3),
                                        "p99": round(pct(stages[stage], 0.99), 3)}
               for stage in ("answered", "bound")},  # fmt: skip
            "kubelets_cpu_percent_of_one_core": round(cpu_pct, 2),
            "kubelets_cpu_percent_per_100_pods": round(cpu_pct * per100, 2),
            "kubelets_rss_mib": round(kubelet_rss / 2**20, 1),
            "shims": len(shims),
            "shims_rss_mib": round(shim_rss / 2**20, 1),
            "shims_rss_mib_per_100_pods": round(shim_rss / 2**20 * per100, 1),
            "delete_all_s": round(delete_s, 3),
            "goals": GOALS,
            "goals_met": {"create_to_ready_p99_s": pct(latencies, 0.99) <= GOALS["create_to_ready_p99_s"]},
        }
        print(json.dumps(result, indent=2))
    finally:
        for p in reversed(procs):
            p.stop()
        server.cleanup()
        import subprocess

        for root in roots:
            subprocess.run([sys.executable, "-m", "kubelet.cleanup", "--root-dir", str(root)], capture_output=True)
        if not mounts_under(tmp):  # never rmtree through a mount that is left
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
