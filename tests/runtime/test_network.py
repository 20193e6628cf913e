"""Pod networking of the process runtime: a network namespace per pod, on the node's bridge."""

from __future__ import annotations

import ipaddress
import subprocess

import httpx

from tests.runtime.conftest import Cluster, state, unique
from tests.runtime.test_process_runtime import apply


def test_containers_of_a_pod_share_localhost_and_the_host_reaches_the_pod_ip(cluster: Cluster) -> None:
    name = unique("sidecar")
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [
        {"name": "nginx", "image": "nginx"},
        {"name": "side", "image": "busybox", "command": ["sh", "-c",
         "until wget -qO- http://localhost/ | grep 'Served by'; do sleep 0.2; done; sleep 3600"]},
    ]}}  # fmt: skip
    apply(cluster, doc)
    pod = cluster.wait_pod(name, lambda p: all(s.get("ready") for s in p["status"].get("containerStatuses") or [{}]))
    ip = pod["status"]["podIP"]
    node = cluster.api.get(f"/api/v1/nodes/{cluster.node}").json()
    assert ipaddress.ip_address(ip) in ipaddress.ip_network(node["spec"]["podCIDR"])
    side = cluster.wait_pod(name, lambda p: "Served by" in cluster.kubectl("logs", name, "-c", "side").stdout)
    assert state(side, 1)["restartCount"] == 0
    assert f"<b>{name}</b>" in cluster.kubectl("logs", name, "-c", "side").stdout
    # the host reaches the pod IP through the node's bridge, a route on this machine only
    route = subprocess.run(["ip", "route", "get", ip], capture_output=True, text=True).stdout
    assert " dev mk-" in route and " via " not in route
    assert f"<b>{name}</b>" in httpx.get(f"http://{ip}/", timeout=5).text
