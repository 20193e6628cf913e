"""The API server's settings, one field per command-line flag.

Kept apart from `main.py` so tests and the app factory can build a server without parsing argv.
"""

from __future__ import annotations

import functools
import socket
from dataclasses import dataclass, field


@dataclass
class ServerConfig:
    data_dir: str = "./.mini-k8s"
    etcd_servers: list[str] = field(default_factory=list)  # empty → embedded SQLite store
    etcd_prefix: str = ""  # prepended to every etcd key, so several clusters can share one etcd
    etcd_request_timeout: float = 5.0  # deadline of one etcd request; a write that hits it is a 504
    sqlite_synchronous: str = "normal"  # embedded store: "normal" (survives a crash) or "full" (power loss)
    bind_address: str = "127.0.0.1"
    port: int = 8080
    service_cluster_ip_range: str = "10.96.0.0/12"
    service_node_port_range: str = "30000-32767"
    watch_cache_size: int = 10000  # events kept per resource for watch resumption
    max_request_bytes: int = 3 * 1024 * 1024
    compaction_interval: float = 300.0  # seconds between compactions; 0 disables
    watch_bookmark_interval: float = 10.0  # seconds between BOOKMARK events when asked for
    default_not_ready_toleration_seconds: int = 300
    default_unreachable_toleration_seconds: int = 300
    verbosity: int = 0
    # flow control (flowcontrol.py): their sum is the server's seats; the watcher buffer is how
    # many events a watch may fall behind before it is closed (watchcache.py)
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    watch_buffer_events: int = 10_000
    # security (apiserver/auth/): HTTPS on secure_port only with a certificate; plain --port
    # requests act as system:unsecured (system:masters), as kube-apiserver's old insecure port did
    secure_port: int = 6443
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    client_ca_file: str = ""
    token_auth_file: str = ""
    service_account_key_files: list[str] = field(default_factory=list)
    service_account_issuers: list[str] = field(default_factory=list)
    service_account_signing_key_file: str = ""  # the TokenRequest API signs with it
    service_account_lookup: bool = True
    service_account_max_token_seconds: int = 0  # TokenRequest tokens live at most this long (0: no cap)
    anonymous_auth: bool = True
    authorization_mode: str = "AlwaysAllow"
    audit_log_path: str = ""
    # talking to kubelets (pods/log, pods/exec, pods/attach): with a client certificate the API
    # server speaks HTTPS to them and presents it (as kube-apiserver always does); their serving
    # certificates are verified against the authority when one is given
    kubelet_client_certificate: str = ""
    kubelet_client_key: str = ""
    kubelet_certificate_authority: str = ""

    advertise_address_flag: str = ""  # --advertise-address

    @property
    def advertise_address(self) -> str:
        """Where members of the cluster reach this server (the `kubernetes` Service's endpoint), as
        kube-apiserver chooses it: --advertise-address, else the bind address, else (bound to every
        address) the address of the interface with the default route — a container's own address
        in docker compose — and loopback when there is none."""
        if self.advertise_address_flag:
            return self.advertise_address_flag
        if self.bind_address not in ("0.0.0.0", "::", ""):
            return self.bind_address
        return default_interface_address()

    @property
    def advertise_port(self) -> int:
        """The port behind the `kubernetes` Service: the HTTPS one when there is HTTPS (in-cluster
        clients speak TLS to 10.96.0.1:443), else the plain one."""
        return self.secure_port if self.secure_port and self.tls_cert_file else self.port


@functools.cache
def default_interface_address() -> str:
    """The source address the kernel picks for an outside destination (a UDP connect sends
    nothing); 127.0.0.1 without a default route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never a real host
            return str(probe.getsockname()[0])
        except OSError:
            return "127.0.0.1"
