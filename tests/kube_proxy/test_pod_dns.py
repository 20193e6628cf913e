"""Name resolution inside pods, the whole chain as in Kubernetes: the kubelet writes the pod's
resolv.conf (nameserver = the `kube-dns` Service's ClusterIP, the namespace's search path,
ndots:5), the shim mounts it over /etc/resolv.conf, kube-proxy carries 10.112.0.10:53 to the
cluster DNS on the node's bridge address, and the DNS answers from Services and EndpointSlices."""

from __future__ import annotations

import uuid
from typing import Any

from kubelet import dns
from tests.kube_proxy.conftest import DNS_IP, ProxyCluster
from tests.kube_proxy.test_kube_proxy import pod_names, web
from tests.runtime.test_process_runtime import apply
from tests.support.component import wait_for


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:5]}"


def run(cluster: ProxyCluster, script: str, spec: dict[str, Any] | None = None, until: str = "") -> str:
    """A busybox pod that runs `script` and stays; returns its log once `until` shows in it."""
    name = unique("dns")
    apply(cluster, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", script + "; sleep 3600"]}],
        **(spec or {})}})  # fmt: skip

    def logs() -> str | None:
        out = cluster.kubectl("logs", name).stdout
        return out if until in out and out.strip() else None

    try:
        return wait_for(logs, timeout=40, interval=0.3, what=f"{until!r} in the log of {name}")
    finally:
        cluster.kubectl("delete", "pod", name, "--wait=false")


def test_a_pod_finds_a_service_by_its_short_name_and_reaches_every_replica(cluster: ProxyCluster) -> None:
    name = unique("web")
    web(cluster, name, replicas=2)
    script = f"cat /etc/resolv.conf; for i in $(seq 30); do wget -qO- http://{name}/ | grep -o 'pod <b>[^<]*'; done"
    out = run(cluster, script + "; echo END", until="END")
    assert out.startswith("search default.svc.cluster.local svc.cluster.local cluster.local"), out
    assert f"nameserver {DNS_IP}\n" in out and "options ndots:5\n" in out
    assert {line.split("<b>")[1] for line in out.split() if "<b>" in line} == pod_names(cluster, name), out


def test_nslookup_answers_for_a_service_a_headless_service_and_a_name_outside_the_cluster(
    cluster: ProxyCluster,
) -> None:
    name, headless = unique("web"), unique("hl")
    svc = web(cluster, name, replicas=1)
    web(cluster, headless, replicas=2, service={"clusterIP": "None"})
    out = run(cluster, f"nslookup {name}.default.svc.cluster.local; echo ==; "
                       f"nslookup {headless}.default.svc.cluster.local; echo ==; "
                       f"nslookup nothing.default.svc.cluster.local; echo END", until="END")  # fmt: skip
    service, pods, missing = out.split("==")
    assert f"Server:\t\t{DNS_IP}" in service, service
    assert f"Address: {svc['spec']['clusterIP']}" in service, service
    endpoints = cluster.api.get("/api/v1/namespaces/default/endpoints/" + headless).json()
    pod_ips = {a["ip"] for s in endpoints["subsets"] for a in s["addresses"]}
    assert {line.split()[-1] for line in pods.splitlines() if line.startswith("Address: ")} == pod_ips
    assert "NXDOMAIN" in missing, missing


def test_dns_policies_none_and_default_and_the_hosts_file(cluster: ProxyCluster) -> None:
    config = {"nameservers": ["192.0.2.1"], "searches": ["a.example"], "options": [{"name": "ndots", "value": "2"}]}
    out = run(cluster, "cat /etc/resolv.conf; echo END", {"dnsPolicy": "None", "dnsConfig": config}, until="END")
    assert out == "search a.example\nnameserver 192.0.2.1\noptions ndots:2\nEND\n"

    host = dns.host_resolv_conf("/etc/resolv.conf").render()
    out = run(cluster, "cat /etc/resolv.conf; echo END", {"dnsPolicy": "Default"}, until="END")
    assert out == host + "END\n"

    spec = {"hostname": "db-0", "subdomain": "db", "hostAliases": [{"ip": "192.0.2.7", "hostnames": ["legacy"]}]}
    out = run(cluster, "hostname; cat /etc/hosts; echo END", spec, until="END")
    lines = out.splitlines()
    assert lines[0] == "db-0"
    assert any(line.endswith("\tdb-0.db.default.svc.cluster.local\tdb-0") for line in lines), out
    assert "192.0.2.7\tlegacy" in lines
