"""What API aggregation costs: GETs of metrics.k8s.io through the API server against straight to
metrics-server.

Run: `.venv/bin/python bench/aggregation.py [--quick]`. Prints one JSON document. It starts its own
mini-apiserver (embedded store) and mini-metrics-server (no kubelets: the answers are the small
discovery document and an empty NodeMetricsList, so what is measured is the hop, not the payload),
registers the backend as an installer does (Service without selector, Endpoints, APIService), and
has 8 clients on keep-alive connections GET `/apis/metrics.k8s.io/v1beta1/nodes`, first from
metrics-server directly, then through the API server's proxy.

No goal is set by an issue; the number to watch is `ratio` (proxied/direct requests per second):
each proxied request costs the API server a route match, authentication, authorization, a lookup
of the APIService and its Endpoints in the watch cache and a streamed upstream request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from tests.support.apiserver import APIServerProcess  # noqa: E402
from tests.support.component import ComponentProcess, free_port, wait_for  # noqa: E402

CLIENTS = 8
PATH = "/apis/metrics.k8s.io/v1beta1/nodes"


async def measure(base: str, total: int) -> dict[str, float]:
    clients = [httpx.AsyncClient(base_url=base, timeout=30) for _ in range(CLIENTS)]
    per = total // CLIENTS
    latencies: list[float] = []

    async def worker(c: httpx.AsyncClient) -> None:
        for _ in range(per):
            t = time.perf_counter()
            r = await c.get(PATH)
            latencies.append(time.perf_counter() - t)
            if r.status_code != 200:
                raise RuntimeError(f"{r.status_code}: {r.text[:200]}")

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(c) for c in clients))
    finally:
        for c in clients:
            await c.aclose()
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {"requests_per_s": round(per * CLIENTS / elapsed, 1),
            "p50_ms": round(statistics.median(latencies) * 1000, 2),
            "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 2)}  # fmt: skip


def register(api: httpx.Client, port: int) -> None:
    ns = "kube-system"
    ports = [{"name": "http", "port": 443, "targetPort": port}]
    api.post(f"/api/v1/namespaces/{ns}/services", json={"metadata": {"name": "ms"}, "spec": {"ports": ports}})
    subset = {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "http", "port": port}]}
    api.post(f"/api/v1/namespaces/{ns}/endpoints", json={"metadata": {"name": "ms"}, "subsets": [subset]})
    spec = {"group": "metrics.k8s.io", "version": "v1beta1", "service": {"namespace": ns, "name": "ms"},
            "groupPriorityMinimum": 100, "versionPriority": 100}  # fmt: skip
    api.post("/apis/apiregistration.k8s.io/v1/apiservices",
             json={"metadata": {"name": "v1beta1.metrics.k8s.io"}, "spec": spec}).raise_for_status()  # fmt: skip
    wait_for(lambda: api.get(PATH).status_code == 200, what="the proxied path")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="800 requests per phase instead of 4,000")
    total = 800 if parser.parse_args().quick else 4000
    server = APIServerProcess().start()
    port = free_port()
    backend = ComponentProcess("metrics_server", ["--master", server.url, "--port", str(port)], health_port=port)
    try:
        backend.start()
        with server.client() as api:
            register(api, port)
        direct = asyncio.run(measure(f"http://127.0.0.1:{port}", total))
        proxied = asyncio.run(measure(server.url, total))
    finally:
        backend.stop()
        server.cleanup()
    print(json.dumps({
        "benchmark": "aggregation", "requests_per_phase": total, "clients": CLIENTS, "path": PATH,
        "direct": direct, "through_apiserver": proxied,
        "ratio": round(proxied["requests_per_s"] / direct["requests_per_s"], 3),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
