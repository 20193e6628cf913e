"""Services carry real packets: ClusterIP, NodePort and LoadBalancer addresses reach ready pods
through the rules mini-kube-proxy writes, from the host and from pods."""

from __future__ import annotations

import ipaddress
import json
import re
import subprocess
import sys
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from kube_proxy import nft
from kube_proxy.ruleset import TABLE_COMMENT
from tests.kube_proxy.conftest import LB_POOL, SERVICE_CIDR, ProxyCluster
from tests.runtime.test_process_runtime import apply
from tests.support.component import wait_for

SERVED_BY = re.compile(r"Served by pod <b>([^<]+)</b>")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:5]}"


def web(cluster: ProxyCluster, name: str, replicas: int = 3, service: dict[str, Any] | None = None,
        readiness: dict[str, Any] | None = None,
        lifecycle: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """A Deployment of the catalog's nginx and a Service in front of it; returns the Service once
    every replica is a ready endpoint that answers on its own IP. Without a readiness probe a pod is
    a ready endpoint once Running, perhaps before nginx listens (as in Kubernetes); the tests are
    about the proxy, so they start when every backend can answer."""
    container: dict[str, Any] = {"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}
    if readiness:
        container["readinessProbe"] = readiness
    if lifecycle:
        container["lifecycle"] = lifecycle
    apply(cluster, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": {
        "replicas": replicas, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}}})  # fmt: skip
    apply(cluster, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": {
        "selector": {"app": name}, "ports": [{"name": "http", "port": 80, "targetPort": 80}], **(service or {})}})
    for ip in wait_ready_endpoints(cluster, name, replicas):
        wait_served(f"http://{ip}/")
    return cluster.api.get(f"/api/v1/namespaces/default/services/{name}").json()


def ready_endpoints(cluster: ProxyCluster, name: str) -> list[str]:
    selector = {"labelSelector": f"kubernetes.io/service-name={name}"}
    slices = cluster.api.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", params=selector).json()
    slices = slices["items"]
    return sorted(ep["addresses"][0] for s in slices for ep in s.get("endpoints") or []
                  if (ep.get("conditions") or {}).get("ready"))  # fmt: skip


def wait_ready_endpoints(cluster: ProxyCluster, name: str, count: int) -> list[str]:
    return wait_for(lambda: (eps := ready_endpoints(cluster, name)) and len(eps) == count and eps, timeout=60,
                    interval=0.2, what=f"{count} ready endpoints of {name}")  # fmt: skip


def served_by(url: str) -> str:
    """One request on a new connection (so the kernel picks an endpoint afresh)."""
    with httpx.Client(timeout=5) as c:
        match = SERVED_BY.search(c.get(url).text)
    assert match, url
    return match.group(1)


def wait_served(url: str) -> str:
    """The first answer once the rules for a just-changed Service are in."""
    return wait_for(lambda: _try(url), timeout=20, interval=0.1, what=f"an answer from {url}")


def _try(url: str) -> str | None:
    try:
        return served_by(url)
    except (httpx.HTTPError, AssertionError):
        return None


def pod_names(cluster: ProxyCluster, app: str) -> set[str]:
    pods = cluster.api.get("/api/v1/namespaces/default/pods", params={"labelSelector": f"app={app}"}).json()
    return {p["metadata"]["name"] for p in pods["items"] if not p["metadata"].get("deletionTimestamp")}


def test_cluster_ip_spreads_connections_over_every_ready_pod(cluster: ProxyCluster) -> None:
    name = unique("web")
    svc = web(cluster, name)
    url = f"http://{svc['spec']['clusterIP']}/"
    wait_served(url)
    seen = Counter(served_by(url) for _ in range(300))
    assert set(seen) == pod_names(cluster, name), seen
    assert min(seen.values()) > 30, seen  # random choice: each of 3 gets ~100; 30 is far in the tail


def test_a_pod_reaches_a_service_by_its_cluster_ip(cluster: ProxyCluster) -> None:
    name = unique("web")
    svc = web(cluster, name, replicas=2)
    ip = svc["spec"]["clusterIP"]
    client = unique("client")
    script = f"for i in $(seq 20); do wget -qO- http://{ip}/ | grep -o 'pod <b>[^<]*'; done; sleep 3600"
    apply(cluster, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": client}, "spec": {
        "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", script]}]}})  # fmt: skip

    def answered() -> set[str] | None:
        lines = cluster.kubectl("logs", client).stdout.split()
        names = {line.split("<b>")[1] for line in lines if "<b>" in line}
        return names if len(names) == 2 else None

    assert wait_for(answered, timeout=40, interval=0.3, what="answers to the pod") == pod_names(cluster, name)
    cluster.kubectl("delete", "pod", client, "--wait=false")


def test_node_port_answers_on_the_node_address_and_loopback(cluster: ProxyCluster) -> None:
    name = unique("np")
    svc = web(cluster, name, replicas=2, service={"type": "NodePort"})
    port = svc["spec"]["ports"][0]["nodePort"]
    wait_served(f"http://127.0.0.1:{port}/")
    node = cluster.api.get(f"/api/v1/nodes/{cluster.node}").json()
    gateway = str(ipaddress.ip_network(node["spec"]["podCIDR"]).network_address + 1)
    seen = {served_by(f"http://{addr}:{port}/") for addr in ("127.0.0.1", gateway) for _ in range(30)}
    assert seen == pod_names(cluster, name)


def test_a_load_balancer_service_answers_on_its_external_ip(cluster: ProxyCluster) -> None:
    name = unique("lb")
    web(cluster, name, replicas=2, service={"type": "LoadBalancer"})

    def external_ip() -> str | None:
        svc = cluster.api.get(f"/api/v1/namespaces/default/services/{name}").json()
        ingress = (svc.get("status") or {}).get("loadBalancer", {}).get("ingress") or []
        return ingress[0]["ip"] if ingress else None

    ip = wait_for(external_ip, timeout=20, what="an EXTERNAL-IP from the service-lb-controller")
    assert ipaddress.ip_address(ip) in ipaddress.ip_network(LB_POOL)
    wait_served(f"http://{ip}/")
    assert {served_by(f"http://{ip}/") for _ in range(30)} == pod_names(cluster, name)
    assert ip in cluster.kubectl("get", "svc", name).stdout  # EXTERNAL-IP, as kubectl prints it
    # loadBalancerSourceRanges: a client outside them (this host, 127.0.0.1) is dropped, then let in
    patch = json.dumps({"spec": {"loadBalancerSourceRanges": ["192.0.2.0/24"]}})
    assert cluster.kubectl("patch", "svc", name, "-p", patch).returncode == 0
    wait_for(lambda: _try_once(f"http://{ip}/") == "timeout", timeout=20, interval=0.2, what="the firewall rule")
    patch = json.dumps({"spec": {"loadBalancerSourceRanges": ["192.0.2.0/24", "127.0.0.0/8"]}})
    assert cluster.kubectl("patch", "svc", name, "-p", patch).returncode == 0
    wait_served(f"http://{ip}/")


def _try_once(url: str) -> str:
    try:
        httpx.get(url, timeout=0.5)
        return "answered"
    except httpx.TimeoutException:
        return "timeout"
    except httpx.HTTPError:
        return "error"


def test_session_affinity_client_ip_keeps_a_client_on_one_pod(cluster: ProxyCluster) -> None:
    name = unique("sticky")
    svc = web(cluster, name, service={"sessionAffinity": "ClientIP"})
    url = f"http://{svc['spec']['clusterIP']}/"
    first = wait_served(url)
    assert {served_by(url) for _ in range(40)} == {first}


def test_a_service_without_endpoints_refuses_and_an_unallocated_cluster_ip_drops(cluster: ProxyCluster) -> None:
    name = unique("empty")
    apply(cluster, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": {
        "selector": {"app": "nothing-has-this"}, "ports": [{"port": 80}]}})  # fmt: skip
    ip = cluster.api.get(f"/api/v1/namespaces/default/services/{name}").json()["spec"]["clusterIP"]

    def refused() -> bool:
        try:
            httpx.get(f"http://{ip}/", timeout=2)
        except httpx.ConnectError as exc:
            return "refused" in str(exc).lower()
        except httpx.TimeoutException:
            return False
        return False

    wait_for(refused, timeout=20, interval=0.2, what="connection refused by the no-endpoints rule")
    # a port the Service does not have: rejected as well, by cluster-ips-check
    with pytest.raises(httpx.ConnectError, match="(?i)refused"):
        httpx.get(f"http://{ip}:81/", timeout=2)
    # an address of the range no Service has: dropped here, not sent out of the default route
    last = SERVICE_CIDR.replace("0.0/16", "255.254")
    with pytest.raises(httpx.ConnectTimeout):
        httpx.get(f"http://{last}/", timeout=1)
    route = subprocess.run(["ip", "route", "get", last], capture_output=True, text=True).stdout
    assert route.startswith("local "), route


def test_an_endpoint_that_turns_unready_gets_no_new_connections(cluster: ProxyCluster, tmp_path: Path) -> None:
    name = unique("ready")
    flag = tmp_path / "ready"
    flag.write_text("yes")
    probe = {"exec": {"command": ["sh", "-c", f"test -f {flag}-$(hostname) || test -f {flag}"]},
             "periodSeconds": 1, "failureThreshold": 1}  # fmt: skip
    svc = web(cluster, name, replicas=2, readiness=probe)
    url = f"http://{svc['spec']['clusterIP']}/"
    wait_served(url)
    pods = sorted(pod_names(cluster, name))
    keep = pods[0]
    Path(f"{flag}-{keep}").write_text("yes")
    flag.unlink()  # only `keep` still passes its probe
    wait_ready_endpoints(cluster, name, 1)
    wait_for(lambda: {served_by(url) for _ in range(5)} == {keep}, timeout=20, interval=0.2, what="rules updated")
    assert {served_by(url) for _ in range(50)} == {keep}


def test_deleting_a_pod_mid_loop_loses_no_request(cluster: ProxyCluster) -> None:
    """Readiness, EndpointSlices, kube-proxy and a preStop hook together: a client asking the
    ClusterIP all the while a pod is deleted and replaced gets an answer every time."""
    name = unique("steady")
    probe = {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 1}
    svc = web(cluster, name, replicas=2, readiness=probe, lifecycle={"preStop": {"sleep": {"seconds": 3}}})
    url = f"http://{svc['spec']['clusterIP']}/"
    wait_served(url)
    victim = sorted(pod_names(cluster, name))[0]
    results: Counter[str] = Counter()
    stop = threading.Event()

    def client() -> None:
        while not stop.is_set():
            try:
                results[str(httpx.get(url, timeout=2).status_code)] += 1
            except httpx.HTTPError as exc:
                results[type(exc).__name__] += 1

    loop = threading.Thread(target=client)
    loop.start()
    try:
        wait_for(lambda: sum(results.values()) > 20, timeout=10, what="the client running")
        cluster.kubectl("delete", "pod", victim, "--wait=false")
        wait_for(lambda: victim not in pod_names(cluster, name) and len(ready_endpoints(cluster, name)) == 2,
                 timeout=40, what="a ready replacement")  # fmt: skip
        wait_for(lambda: cluster.api.get(f"/api/v1/namespaces/default/pods/{victim}").status_code == 404,
                 timeout=30, what="the old pod gone")  # fmt: skip
        # the loop asked throughout: some answers came after the old pod was gone, however fast
        # the machine (a count of requests would measure its speed, not the proxy)
        gone_at = sum(results.values())
        wait_for(lambda: sum(results.values()) > gone_at + 5, timeout=20, what="answers after the old pod")
    finally:
        stop.set()
        loop.join()
    assert set(results) == {"200"}, results


def test_dump_prints_the_rules_and_stopping_removes_them(cluster: ProxyCluster) -> None:
    name = unique("dump")
    svc = web(cluster, name, replicas=1)
    dump = subprocess.run([sys.executable, "-m", "kube_proxy", *cluster.proxy_args, "--dump"],
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert dump.returncode == 0, dump.stderr
    assert f"{svc['spec']['clusterIP']} . tcp . 80 : goto service-" in dump.stdout
    assert f"default/{name}/tcp/http" in dump.stdout
    live = subprocess.run(["nft", "list", "table", "ip", cluster.table], capture_output=True, text=True).stdout
    assert "service-" in live and f"default/{name}/tcp/http" in live

    assert cluster.proxy is not None
    cluster.proxy.stop()
    assert cluster.proxy.proc is not None and cluster.proxy.proc.returncode == 0, cluster.proxy.log_tail()
    tables = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    assert cluster.table not in tables
    routes = subprocess.run(["ip", "route", "show", "table", "local"], capture_output=True, text=True).stdout
    if not nft.tables_with_comment(TABLE_COMMENT):  # the last proxy on the host also takes its routes away
        assert SERVICE_CIDR not in routes
    assert _try(f"http://{svc['spec']['clusterIP']}/") is None  # no rule of ours takes it to the pod any more
    cluster.start_proxy()  # for the tests that follow in this module
    wait_served(f"http://{svc['spec']['clusterIP']}/")


