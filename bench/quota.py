"""What ResourceQuota admission costs: pod creates/s in a namespace with 10 quotas against one with none.

Run: `.venv/bin/python bench/quota.py [--quick]`. Prints one JSON document. One mini-apiserver of its
own (embedded store); 16 clients, each on its own keep-alive connection, create pods in namespace
`free` (no quota) and then in `quoted`, which holds 10 ResourceQuotas. Two shapes are measured:
`one_counts_pods` (1 quota counts pods, 9 count ConfigMaps: the usual namespace) and
`all_count_pods` (every quota counts pods: each create is charged to 10 quotas, each a
compare-and-swap of its status).

Goal (issue 16, reported, not asserted): creates/s with 10 quotas ≥ 90 % of without.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from tests.support.apiserver import APIServerProcess  # noqa: E402

CLIENTS = 16


def pod(name: str) -> dict[str, Any]:
    small = {"cpu": "10m", "memory": "10Mi"}
    container = {"name": "c", "image": "nginx", "resources": {"requests": small, "limits": small}}
    return {"metadata": {"name": name}, "spec": {"containers": [container]}}


async def creates_per_s(base: str, namespace: str, total: int) -> float:
    clients = [httpx.AsyncClient(base_url=base, timeout=30) for _ in range(CLIENTS)]
    per = total // CLIENTS

    async def worker(i: int, c: httpx.AsyncClient) -> None:
        for j in range(per):
            r = await c.post(f"/api/v1/namespaces/{namespace}/pods", json=pod(f"p-{i}-{j}"))
            if r.status_code != 201:
                raise RuntimeError(f"{r.status_code}: {r.text[:200]}")

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(i, c) for i, c in enumerate(clients)))
    finally:
        for c in clients:
            await c.aclose()
    return round(per * CLIENTS / (time.perf_counter() - started), 1)


def setup(api: httpx.Client, namespace: str, quotas: int, counting_pods: int) -> None:
    api.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).raise_for_status()
    for i in range(quotas):
        hard = {"pods": "100000", "requests.cpu": "1000"} if i < counting_pods else {"configmaps": "1000"}
        made = api.post(f"/api/v1/namespaces/{namespace}/resourcequotas",
                        json={"metadata": {"name": f"q{i}"}, "spec": {"hard": hard}})  # fmt: skip
        made.raise_for_status()
        # what the resourcequota controller would write first (no controller-manager runs here)
        status = {"hard": hard, "used": {k: "0" for k in hard}}
        api.put(f"/api/v1/namespaces/{namespace}/resourcequotas/q{i}/status",
                json={**made.json(), "status": status}).raise_for_status()  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="800 pods per phase instead of 4,000")
    total = 800 if parser.parse_args().quick else 4000
    server = APIServerProcess().start()
    try:
        with server.client() as api:
            setup(api, "free", 0, 0)
            setup(api, "one", 10, 1)
            setup(api, "all", 10, 10)
        free = asyncio.run(creates_per_s(server.url, "free", total))
        one = asyncio.run(creates_per_s(server.url, "one", total))
        every = asyncio.run(creates_per_s(server.url, "all", total))
    finally:
        server.cleanup()
    print(json.dumps({
        "benchmark": "quota", "pods_per_phase": total, "clients": CLIENTS,
        "creates_per_s": {"no_quota": free, "one_counts_pods": one, "all_count_pods": every},
        "ratio": {"one_counts_pods": round(one / free, 3), "all_count_pods": round(every / free, 3)},
        "goal": {"ratio_at_least": 0.9},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
