"""DaemonSet and StatefulSet at scale: issue 13's two measures, in one run.

Run: `.venv/bin/python bench/workloads.py [--nodes 1000] [--replicas 100] [--timeout 180]`. Prints one
JSON document. It starts its own mini-apiserver (embedded store), one kubelet simulating `--nodes`
nodes, the scheduler and the controller-manager (daemonset, statefulset), and observes through the
API only:

- `daemonset_available_s`: from POSTing a DaemonSet until `status.numberAvailable` equals the
  number of nodes (one pod per node, each bound by the scheduler and started by the kubelet);
- `statefulset_ready_s`: from POSTing a StatefulSet with `podManagementPolicy: Parallel` and
  `--replicas` replicas until `status.readyReplicas` equals it.

Goals (issue 13, reported, not asserted): DaemonSet on 1,000 nodes ≤ 15 s, 100-replica Parallel
StatefulSet ≤ 10 s. As in bench/controllers.py the components' client QPS is raised the way an
operator would for a big cluster; the flags are printed with the results.
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

from bench.simcluster import start_components  # noqa: E402
from tests.support.apiserver import APIServerProcess  # noqa: E402
from tests.support.component import wait_for  # noqa: E402

GOALS = {"daemonset_available_s": 15.0, "statefulset_ready_s": 10.0}


def daemonset() -> dict[str, Any]:
    labels = {"app": "agent"}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "agent", "image": "fluentd:v2.5.2"}]}}}}  # fmt: skip


def statefulset(replicas: int) -> dict[str, Any]:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "serviceName": "web", "podManagementPolicy": "Parallel",
                     "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}}  # fmt: skip


def timed(api: httpx.Client, path: str, body: dict[str, Any], field: str, want: int, timeout: float) -> float | None:
    started = time.monotonic()
    api.post(path, json=body).raise_for_status()
    deadline = started + timeout
    while time.monotonic() < deadline:
        if (api.get(f"{path}/{body['metadata']['name']}").json().get("status") or {}).get(field) == want:
            return round(time.monotonic() - started, 2)
        time.sleep(0.1)
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=180.0)
    args = parser.parse_args()
    fast = ["--kube-api-qps", "1000", "--kube-api-burst", "2000"]
    kubelet_flags = ["--nodes", str(args.nodes), "--pod-startup-delay", "0.5", "--node-status-update-frequency",
                     "10s"]  # fmt: skip
    server, procs = APIServerProcess().start(), []
    try:
        start_components(server, kubelet_flags=kubelet_flags, scheduler_flags=fast, controllers="daemonset,statefulset",
                         manager_flags=fast, procs=procs, kubelet_start_timeout=120)
        with httpx.Client(base_url=server.url, timeout=30) as api:
            wait_for(lambda: len(api.get("/api/v1/nodes").json()["items"]) == args.nodes, timeout=180, interval=0.5,
                     what=f"{args.nodes} nodes")  # fmt: skip
            ds = timed(api, "/apis/apps/v1/namespaces/default/daemonsets", daemonset(), "numberAvailable", args.nodes,
                       args.timeout)  # fmt: skip
            sts = timed(api, "/apis/apps/v1/namespaces/default/statefulsets", statefulset(args.replicas),
                        "readyReplicas", args.replicas, args.timeout)  # fmt: skip
        result = {
            "benchmark": "workloads", "nodes": args.nodes, "statefulset_replicas": args.replicas,
            "daemonset_available_s": ds, "statefulset_ready_s": sts, "goals": GOALS,
            "meets_goals": {k: v is not None and v <= GOALS[k] for k, v in
                            (("daemonset_available_s", ds), ("statefulset_ready_s", sts))},
            "flags": {"components": fast, "kubelet": kubelet_flags},
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        }  # fmt: skip
        print(json.dumps(result, indent=2))
    finally:
        for p in reversed(procs):
            p.stop()
        server.cleanup()


if __name__ == "__main__":
    main()
