"""The `kube-dns` Service: how pods reach the cluster DNS.

In Kubernetes, kubeadm creates the Service `kube-system/kube-dns` at 10.96.0.10 (the tenth address
of the Service range) in front of the CoreDNS pods, and every kubelet gets `--cluster-dns
10.96.0.10 --cluster-domain cluster.local`, which it writes into each pod's resolv.conf.

`mini-k8s up` runs the cluster DNS as a host process (cluster_dns/main.py says why), so the
Service has no selector and `up` writes its Endpoints itself, the way a Service is pointed at
something outside the cluster. The addresses are the nodes' bridge addresses (10.244.<i>.0/24's
first address: the host as a pod sees it; the DNS process listens there too), because an
endpoint must be reachable from pods and may not be a loopback address. With the simulated
runtime, whose pods have no network, it is 127.0.0.1: the host can still follow the whole chain.
The endpointslicemirroring controller copies the Endpoints into an EndpointSlice, and kube-proxy
turns that into the rules that carry 10.96.0.10:53 to the DNS port.

These objects belong to `up` (label addonmanager.kubernetes.io/mode: Reconcile): an `up` with
other nodes, runtime or --dns-port puts the new addresses and port in them.
"""

from __future__ import annotations

from typing import Any

NAMESPACE = "kube-system"
NAME = "kube-dns"
CLUSTER_DOMAIN = "cluster.local"
LABELS = {
    "k8s-app": NAME,
    "kubernetes.io/cluster-service": "true",
    "kubernetes.io/name": "mini-cluster-dns",
    "addonmanager.kubernetes.io/mode": "Reconcile",
}


def dns_objects(addresses: list[str], port: int, cluster_ip: str) -> list[tuple[str, dict[str, Any]]]:
    """(resource, object) in creation order: the Service first, so that it gets its address before
    anything a user creates could take it."""
    meta = {"name": NAME, "namespace": NAMESPACE, "labels": LABELS}
    ports = [("dns", "UDP"), ("dns-tcp", "TCP")]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "clusterIP": cluster_ip,
            "ports": [{"name": n, "port": 53, "protocol": p, "targetPort": port} for n, p in ports],
        },
    }
    endpoints = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta,
        "subsets": [{
            "addresses": [{"ip": ip} for ip in addresses],
            "ports": [{"name": n, "port": port, "protocol": p} for n, p in ports],
        }],
    }  # fmt: skip
    return [("services", service), ("endpoints", endpoints)]
