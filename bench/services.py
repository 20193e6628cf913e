"""What a Service costs on the wire, and how fast kube-proxy follows an endpoint change.

Run as root: `.venv/bin/python bench/services.py [--quick]`. Prints one JSON document. It starts
its own API server (Service range 10.112.0.0/16), scheduler, controllers, one process-runtime
kubelet and mini-kube-proxy, then:

1. `throughput`: one nginx pod (the catalog's) behind a ClusterIP Service; rounds that alternate
   GETs straight to the pod IP and GETs to the ClusterIP, each on a new TCP connection (so every
   request's first packet goes through the nat hooks; on a kept-alive connection conntrack alone
   carries it), 4 clients. Goal (issue 15): the Service path >= 90% of the direct path.
2. `rule_latency`: 1,000 Services, each with an EndpointSlice of two addresses; then, one at a time,
   an address is added to a random Service's slice, and we time from the API write until the new
   endpoint chain is in the kernel (`nft list chain`, polled every 5 ms). Goal: p99 <= 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from kube_proxy.ruleset import endpoint_chain  # noqa: E402
from kube_proxy.servicemodel import service_ports  # noqa: E402
from kubelet.volumes import mounts_under  # noqa: E402
from tests.support.apiserver import APIServerProcess  # noqa: E402
from tests.support.component import ComponentProcess, free_port, wait_for  # noqa: E402

CLIENTS = 4


async def rate(ip: str, total: int) -> float:
    """Requests per second, each an HTTP/1.0 GET on a connection of its own (a bare socket: an
    HTTP client library would spend more per connection than the kernel's NAT does)."""
    per = total // CLIENTS

    async def worker() -> None:
        for _ in range(per):
            reader, writer = await asyncio.open_connection(ip, 80)
            writer.write(b"GET / HTTP/1.0\r\nHost: web\r\n\r\n")
            reply = await reader.read()
            writer.close()
            if not reply.startswith(b"HTTP/1.0 200"):
                raise RuntimeError(reply[:100])

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CLIENTS)))
    return per * CLIENTS / (time.perf_counter() - started)


def throughput(api: httpx.Client, rounds: int, per_round: int) -> dict[str, object]:
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}]}}  # fmt: skip
    api.post("/api/v1/namespaces/default/pods", json=doc).raise_for_status()
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}}  # fmt: skip
    cluster_ip = api.post("/api/v1/namespaces/default/services", json=svc).json()["spec"]["clusterIP"]
    pod_ip = wait_for(lambda: api.get("/api/v1/namespaces/default/pods/web").json()["status"].get("podIP"),
                      timeout=60, what="pod IP")  # fmt: skip
    wait_for(lambda: _ok(f"http://{cluster_ip}/"), timeout=60, interval=0.1, what="the Service answering")
    direct, service = [], []
    for _ in range(rounds):
        direct.append(asyncio.run(rate(pod_ip, per_round)))
        service.append(asyncio.run(rate(cluster_ip, per_round)))
    d, s = statistics.median(direct), statistics.median(service)
    return {"direct_requests_per_s": round(d, 1), "service_requests_per_s": round(s, 1),
            "ratio": round(s / d, 3), "goal": ">= 0.90", "rounds": rounds, "requests_per_round": per_round}  # fmt: skip


def _ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _slice(name: str, ips: list[str]) -> dict[str, object]:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": f"{name}-manual", "labels": {"kubernetes.io/service-name": name}},
            "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
            "endpoints": [{"addresses": [ip], "conditions": {"ready": True}} for ip in ips]}  # fmt: skip


def rule_latency(api: httpx.Client, table: str, services: int, changes: int) -> dict[str, object]:
    slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
    names = [f"s{i:04d}" for i in range(services)]
    for i, name in enumerate(names):
        svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
               "spec": {"ports": [{"name": "http", "port": 80}]}}  # fmt: skip
        api.post("/api/v1/namespaces/default/services", json=svc).raise_for_status()
        api.post(slices, json=_slice(name, [f"10.201.{i // 200}.{i % 200 + 1}", f"10.202.{i // 200}.{i % 200 + 1}"]))
    seconds = []
    for n in range(changes):
        name = random.choice(names)
        current = api.get(f"{slices}/{name}-manual").json()
        new_ip = f"10.203.{n // 250}.{n % 250 + 1}"
        current["endpoints"].append({"addresses": [new_ip], "conditions": {"ready": True}})
        svc = api.get(f"/api/v1/namespaces/default/services/{name}").json()
        sp = service_ports(svc, [current])[0]
        chain = endpoint_chain(sp, next(e for e in sp.endpoints if e.ip == new_ip))
        started = time.perf_counter()
        api.put(f"{slices}/{name}-manual", json=current).raise_for_status()
        while subprocess.run(["nft", "list", "chain", "ip", table, chain], capture_output=True).returncode != 0:
            time.sleep(0.005)
            if time.perf_counter() - started > 30:
                raise RuntimeError(f"chain {chain} never appeared")
        seconds.append(time.perf_counter() - started)
    seconds.sort()
    return {"services": services, "changes": changes, "p50_s": round(statistics.median(seconds), 3),
            "p99_s": round(seconds[max(0, int(len(seconds) * 0.99) - 1)], 3), "max_s": round(seconds[-1], 3),
            "goal": "p99 <= 1 s"}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    if os.geteuid() != 0:
        sys.exit("bench/services.py needs root (pod networks and nftables)")
    apiserver = APIServerProcess(args=["--service-cluster-ip-range", "10.112.0.0/16"]).start()
    root = Path(tempfile.mkdtemp(prefix="bench-services-"))
    table = f"mkp-bench-{uuid.uuid4().hex[:4]}"
    procs: list[ComponentProcess] = []
    try:
        for module, args in [
            ("scheduler", ["--port", str(free_port())]),
            ("controller_manager", ["--port", str(free_port()), "--controllers", "endpointslice"]),
            ("kubelet", ["--port", str(free_port()), "--node-name", "bench", "--runtime", "process",
                         "--root-dir", str(root), "--pod-cidr", "10.204.7.0/24", "--pod-startup-delay", "0"]),
            ("kube_proxy", ["--cluster-cidr", "10.200.0.0/13", "--service-cluster-ip-range", "10.112.0.0/16",
                            "--nftables-table", table, "--min-sync-period", "0s"]),
        ]:  # fmt: skip
            port = args[args.index("--port") + 1] if "--port" in args else str(free_port())
            if module == "kube_proxy":
                args = [*args, "--healthz-bind-address", f"127.0.0.1:{port}"]
            procs.append(ComponentProcess(module, ["--master", apiserver.url, *args], health_port=int(port)).start())
        with apiserver.client() as api:
            result = {
                "bench": "services",
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                "throughput": throughput(api, rounds=3 if quick else 5, per_round=400 if quick else 1000),
                "rule_latency": rule_latency(api, table, services=200 if quick else 1000, changes=20 if quick else 50),
            }
        print(json.dumps(result, indent=2))
    finally:
        for p in reversed(procs):
            p.stop()
        subprocess.run([sys.executable, "-m", "kubelet.cleanup", "--root-dir", str(root)], capture_output=True)
        if not mounts_under(root):  # never rmtree through a mount that is left
            shutil.rmtree(root, ignore_errors=True)
        apiserver.cleanup()


if __name__ == "__main__":
    main()
