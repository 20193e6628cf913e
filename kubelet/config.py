"""The kubelet's settings, one per flag, spelled as the real kubelet spells them.

Durations accept seconds (`10`, `0.5`) or Go-style strings (`10s`, `5m`, `100ms`, `1h30m`).
`--node-labels` and `--register-with-taints` use the kubelet's own syntax:

    --node-labels disk=ssd,zone=a
    --register-with-taints dedicated=gpu:NoSchedule,maintenance:NoExecute

One process can simulate many nodes (`--nodes N`): they are `<node-name>-0 … <node-name>-(N-1)`
(with N = 1 the node is just `<node-name>`), the way KWOK fakes a thousand nodes on a laptop.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
RUNTIMES = ("simulated", "process")
AUTHORIZATION_MODES = ("AlwaysAllow", "Webhook")


def go_duration(seconds: float) -> str:
    """Format like Go's time.Duration.String(): 10s, 1m20s, 5m0s, 200ms - what kubelet messages show."""
    if seconds <= 0:
        return "0s"
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:g}ms" if ms >= 1 else f"{seconds * 1e6:g}µs"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:.9f}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{int(hours)}h{int(minutes)}m{text}"
    if minutes:
        return f"{int(minutes)}m{text}"
    return text


def parse_labels(text: str) -> dict[str, str]:
    """`k=v,k2=v2` -> {"k": "v", "k2": "v2"}."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise ValueError(f"invalid label {part!r}: expected key=value")
        out[key] = value
    return out


def parse_ips(text: str) -> list[str]:
    """`10.96.0.10,10.96.0.11` -> the addresses, each checked (--cluster-dns)."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            out.append(str(ipaddress.ip_address(part)))
        except ValueError:
            raise ValueError(f"invalid IP address {part!r} in --cluster-dns") from None
    return out


def parse_taints(text: str) -> list[dict[str, Any]]:
    """`key=value:Effect,key2:Effect` -> Node taints (value optional, as in the kubelet)."""
    taints: list[dict[str, Any]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        kv, sep, effect = part.rpartition(":")
        if not sep or effect not in TAINT_EFFECTS:
            raise ValueError(f"invalid taint {part!r}: expected key=value:Effect with Effect in {TAINT_EFFECTS}")
        key, _, value = kv.partition("=")
        taint: dict[str, Any] = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        taints.append(taint)
    return taints


@dataclass
class KubeletConfig:
    master: str = ""
    kubeconfig: str = ""
    node_name: str = field(default_factory=lambda: socket.gethostname().lower())
    nodes: int = 1
    cpu: str = "4"
    memory: str = "8Gi"
    max_pods: int = 110
    node_labels: dict[str, str] = field(default_factory=dict)
    register_with_taints: list[dict[str, Any]] = field(default_factory=list)
    node_status_update_frequency: float = 10.0
    node_status_report_frequency: float = 300.0  # post an unchanged status at least this often
    node_lease_duration: float = 40.0
    pod_startup_delay: float = 1.0
    port: int = 10250
    address: str = "127.0.0.1"
    cluster_cidr: str = "10.244.0.0/14"  # room for 1,024 nodes with a /24 each
    pod_cidr: str = ""  # fixed podCIDR for a single node (the kubelet's own --pod-cidr)
    kube_api_qps: float = 50.0
    kube_api_burst: int = 100
    crashloop_backoff_base: float = 10.0
    crashloop_backoff_max: float = 300.0
    job_run_time: float = 2.0
    log_line_interval: float = 10.0
    container_stop_delay: float = 0.0
    runtime: str = "simulated"  # simulated | process (see kubelet/cri.py)
    root_dir: str = "/var/lib/mini-kubelet"  # the process runtime's state: containers, logs
    pod_network: str = "bridge"  # process runtime: bridge (a netns per pod, netns.py) | host
    # name resolution in pods (dns.py): the cluster DNS Service's IPs and zone; Kubernetes' kubelet
    # has no defaults for the two (kubeadm and `mini-k8s up` pass 10.96.0.10 and cluster.local)
    cluster_dns: list[str] = field(default_factory=list)
    cluster_domain: str = ""
    resolv_conf: str = "/etc/resolv.conf"  # the node's resolver, for dnsPolicy Default
    verbosity: int = 0
    # the kubelet's API (server.py, streaming.py): HTTPS on --port when given a certificate, x509
    # client certificates checked against client_ca_file, and who may do what: AlwaysAllow, or
    # Webhook (a SubjectAccessReview to the API server, as kubeadm's kubelets do)
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    client_ca_file: str = ""
    authorization_mode: str = "AlwaysAllow"

    def node_names(self) -> list[str]:
        if self.nodes <= 1:
            return [self.node_name]
        return [f"{self.node_name}-{i}" for i in range(self.nodes)]

    @property
    def lease_renew_interval(self) -> float:
        """Kubernetes renews every quarter of the lease duration (10 s of 40 s)."""
        return self.node_lease_duration / 4
