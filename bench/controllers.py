"""Workload-controller benchmark: a 1,000-replica Deployment on 100 simulated nodes.

Run: `.venv/bin/python bench/controllers.py [--replicas 1000] [--nodes 100] [--timeout 300]`. Prints
one JSON document; a phase that does not finish within --timeout is reported as far as it got.
It starts its own processes — mini-apiserver (embedded store in a temp dir), one kubelet simulating
`--nodes` nodes, the scheduler and the controller-manager (replicationcontroller, replicaset,
deployment) — exactly as a user would, and observes only through the API:

- `create_to_available_s`: from POSTing the Deployment until `status.availableReplicas` == replicas;
  with the milestones on the way: `pods_created_s` (all pods exist: the controller-manager's part),
  `pods_bound_s` (all scheduled: + the scheduler), `available_s` (all running and ready: + kubelet);
- `rolling_update_s`: from changing the image until the rollout is complete (all replicas updated
  and available, observedGeneration current), and `old_pods_gone_s` until the watch shows no pod
  of the old template left;
- `cpu_seconds_create_phase` and `cpu_seconds` (at the end) per process, API server included, to
  show where the time went;
- `peak_active_pods` / `peak_existing_pods`: the most pods the watch ever saw at once, without and
  with pods already terminating. The Deployment's bound is replicas + maxSurge on *active* pods (the
  controller counts ReplicaSet replicas; a terminating pod is no longer one), so
  `peak_within_max_surge` compares that one.

Goal (reported, not asserted): <= 20 s from create to 1,000 available. The default client rate
limits (--kube-api-qps 20) would by themselves make 1,000 pod creations take 50 s, so the bench
raises the components' QPS the way a cluster operator would for a big cluster; the flags used are
printed with the results. All processes share the machine with the bench itself.

What ResourceQuota admission costs (issue 16 asks it of this benchmark: pod creates/s with 10
quotas in the namespace against none, in one run) is bench/quota.py's: it measures the API server
alone, with no controllers, so the figure is admission's and not the control loops'.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from bench.processcpu import cpu_seconds  # noqa: E402
from bench.simcluster import start_components  # noqa: E402
from tests.controller_manager_workloads.podwatch import PodWatch  # noqa: E402
from tests.support.apiserver import APIServerProcess  # noqa: E402
from tests.support.component import ComponentProcess, wait_for  # noqa: E402

DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
GOAL_AVAILABLE_S = 20.0


def deployment(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "bench"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "bench"}},
            "template": {
                "metadata": {"labels": {"app": "bench"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.7.9"}]},
            },
        },
    }


def done(api: httpx.Client, replicas: int, image: str) -> bool:
    d = api.get(f"{DEPLOY}/bench").json()
    st = d.get("status") or {}
    return (
        d["spec"]["template"]["spec"]["containers"][0]["image"] == image
        and st.get("observedGeneration") == d["metadata"]["generation"]
        and st.get("updatedReplicas") == st.get("availableReplicas") == st.get("replicas") == replicas
    )


class Clock:
    """Milestones of one phase, polled from the pod watch and the Deployment's status."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.marks: dict[str, float] = {}

    def mark(self, name: str, reached: bool) -> None:
        if reached and name not in self.marks:
            self.marks[name] = round(time.monotonic() - self.t0, 2)


def follow(api: httpx.Client, watch: PodWatch, n: int, image: str, timeout: float, old_gone: bool) -> dict[str, Any]:
    """Poll until the Deployment is complete (and, if asked, no old pod is left) or `timeout`."""
    clock = Clock()
    while time.monotonic() - clock.t0 < timeout:
        active, ready = watch.counts()
        mine = [v for v in watch.state.values() if v[0]]
        if not old_gone:  # the create phase: who got how far when
            clock.mark("pods_created_s", len(mine) >= n)  # the controller-manager's part
            clock.mark("pods_bound_s", watch.bound >= n)  # + the scheduler's
        clock.mark("available_s", done(api, n, image))  # + the kubelet's
        if "available_s" in clock.marks and not old_gone:
            break
        if "available_s" in clock.marks and (active, ready, len(watch.state)) == (n, n, n):
            clock.mark("old_pods_gone_s", True)
            break
        time.sleep(0.2)
    d = api.get(f"{DEPLOY}/bench").json()
    st = d.get("status") or {}
    return {
        **clock.marks,
        "completed": "available_s" in clock.marks,
        "at_end": {k: st.get(k, 0) for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replicas", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=300.0, help="Per phase; partial results after it.")
    args = parser.parse_args()
    n, procs = args.replicas, []
    server = APIServerProcess().start()
    manager_flags = ["--kube-api-qps", "1000", "--kube-api-burst", "2000"]
    scheduler_flags = ["--kube-api-qps", "1000", "--kube-api-burst", "2000"]
    kubelet_flags = ["--nodes", str(args.nodes), "--pod-startup-delay", "0.5", "--node-status-update-frequency", "10s",
                     "--container-stop-delay", "0.1"]  # fmt: skip
    try:
        start_components(server, kubelet_flags=kubelet_flags, scheduler_flags=scheduler_flags, procs=procs,
                         controllers="replicationcontroller,replicaset,deployment", manager_flags=manager_flags)
        with httpx.Client(base_url=server.url, timeout=30) as api:

            def nodes_ready() -> bool:
                items = api.get("/api/v1/nodes").json()["items"]
                ready = [i for i in items for c in i["status"].get("conditions", [])
                         if c["type"] == "Ready" and c["status"] == "True"]  # fmt: skip
                return len(ready) == args.nodes

            wait_for(nodes_ready, timeout=120, interval=0.5, what=f"{args.nodes} Ready nodes")
            with PodWatch(server.url, label_selector="app=bench") as watch:
                assert api.post(DEPLOY, json=deployment(n)).status_code == 201
                create = follow(api, watch, n, "nginx:1.7.9", args.timeout, old_gone=False)
                cpu_after_create = cpu_by_process(server, procs)
                peak_after_create = watch.max_active
                rolling: dict[str, Any] = {"skipped": "the create phase did not complete"}
                if create["completed"]:
                    op = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.9.1"}]
                    headers = {"Content-Type": "application/json-patch+json"}
                    api.patch(f"{DEPLOY}/bench", json=op, headers=headers).raise_for_status()
                    rolling = follow(api, watch, n, "nginx:1.9.1", args.timeout, old_gone=True)
                d = api.get(f"{DEPLOY}/bench").json()
            per_rs: dict[str, dict[str, int]] = {}
            for e in api.get("/api/v1/namespaces/default/events").json()["items"]:
                obj = e["involvedObject"]
                if obj.get("kind") == "ReplicaSet":
                    counts = per_rs.setdefault(obj["name"], {})
                    counts[e["reason"]] = counts.get(e["reason"], 0) + int(e.get("count") or 1)
            strategy = d["spec"]["strategy"]["rollingUpdate"]
            max_surge = -(-n * int(str(strategy["maxSurge"]).rstrip("%")) // 100)  # 25% rounds up
            create_s = create.get("available_s")
            result = {
                "benchmark": "controllers",
                "replicas": n,
                "nodes": args.nodes,
                "strategy": {"maxSurge": strategy["maxSurge"], "maxUnavailable": strategy["maxUnavailable"]},
                "create_to_available_s": create_s,
                "goal_create_to_available_s": GOAL_AVAILABLE_S,
                "meets_goal": create_s is not None and create_s <= GOAL_AVAILABLE_S,
                "create_phase": create,
                "rolling_update_s": rolling.get("available_s"),
                "rolling_phase": rolling,
                "peak_active_pods_during_create": peak_after_create,
                "peak_active_pods": watch.max_active,
                "peak_existing_pods": watch.max_existing,
                "max_allowed_pods": n + max_surge,
                "peak_within_max_surge": watch.max_active <= n + max_surge,
                "pods_ever_created": len(watch.seen),
                "watch_events": watch.events,
                "replica_set_events": per_rs,
                "flags": {"controller_manager": manager_flags, "scheduler": scheduler_flags, "kubelet": kubelet_flags},
                "cpu_seconds_create_phase": cpu_after_create,
                "cpu_seconds": cpu_by_process(server, procs),
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                            "load_avg_1m": round(os.getloadavg()[0], 2)},
            }  # fmt: skip
        print(json.dumps(result, indent=2))
    finally:
        for p in reversed(procs):
            p.stop()
        server.cleanup()


def cpu_by_process(server: APIServerProcess, procs: list[ComponentProcess]) -> dict[str, float | None]:
    """user+system CPU seconds each process has used so far, to show who did the work."""
    pids = {"apiserver": server.proc.pid if server.proc else None}
    pids.update({p.module: p.proc.pid if p.proc else None for p in procs})
    return {name: _cpu_seconds(pid) for name, pid in pids.items()}


def _cpu_seconds(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        return round(cpu_seconds(pid), 1)
    except (OSError, IndexError, ValueError):
        return None


if __name__ == "__main__":
    main()
