"""What else the rules need of the host, and how it is undone.

- `net.ipv4.ip_forward = 1`: a pod's packet to a ClusterIP is DNATed to a pod behind another (or
  the same) node bridge, which the host must route. On a real node the CNI plugin switches it on.
- `net.ipv4.conf.all.route_localnet = 1`: NodePorts answer on 127.0.0.1 and LoadBalancer IPs
  come from 127.1.0.0/24, so a DNATed packet may leave loopback with a 127/8 source (masqueraded
  on the way out). kube-proxy's iptables mode sets the same; the filter-prerouting chain drops
  127/8 packets arriving from real interfaces, as kube-proxy does.
- Routes that keep cluster traffic on this machine: the Service range is a `local` route (a packet
  for a ClusterIP that no rule takes is delivered here and dropped by the filter chains, instead of
  following the default route out), the pod range a `blackhole` route (the nodes' bridges carry the
  /24s that exist; any other pod address fails at once).

What we changed is written to a state file, so whichever mini-kube-proxy on this host stops last
(or `mini-kube-proxy --cleanup` after a SIGKILL) puts the sysctls back and removes our routes.
"Last" is judged by the nft tables of the proxies still running, so a proxy registers its table
before it prepares the host, and starting and stopping take a lock (`host_lock`): a proxy that
stopped while another was starting, before the new one had its table, used to undo the host for
both (its routes and sysctls gone, its Services unreachable).
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

STATE = Path("/run/mini-kube-proxy/host.json")
LOCK = Path("/run/mini-kube-proxy/host.lock")
SYSCTLS = {
    "net.ipv4.ip_forward": Path("/proc/sys/net/ipv4/ip_forward"),
    "net.ipv4.conf.all.route_localnet": Path("/proc/sys/net/ipv4/conf/all/route_localnet"),
}
RT_TABLE_LOCAL = 255


@contextlib.contextmanager
def host_lock() -> Iterator[None]:
    """Held while a proxy registers and prepares, or unregisters and maybe restores."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _load() -> dict[str, dict[str, str]]:
    try:
        return json.loads(STATE.read_text())
    except (OSError, ValueError):
        return {"sysctls": {}, "routes": {}}


def _save(state: dict[str, dict[str, str]]) -> None:
    STATE.parent.mkdir(parents=True, exist_ok=True)
    STATE.write_text(json.dumps(state))


def _route(net: ipaddress.IPv4Network | ipaddress.IPv6Network, kind: str, lo: int) -> dict[str, object]:
    """The netlink attributes of our route (the kernel matches a delete on all of them)."""
    attrs: dict[str, object] = {"dst": str(net.network_address), "dst_len": net.prefixlen, "type": kind}
    if kind == "local":
        attrs.update(oif=lo, table=RT_TABLE_LOCAL, scope=254)  # scope host, in the local table
    return attrs


def prepare(service_cidr: str, cluster_cidr: str) -> None:
    """Switch on the sysctls and add the routes, remembering the values found before."""
    state = _load()
    for name, path in SYSCTLS.items():
        current = path.read_text().strip()
        if current != "1":
            state["sysctls"].setdefault(name, current)
            _save(state)  # before the change: a crash right after it still leaves a record
            path.write_text("1")
    with IPRoute() as ipr:
        lo = ipr.link_lookup(ifname="lo")[0]
        wanted = {service_cidr: "local"}
        if cluster_cidr:
            wanted[cluster_cidr] = "blackhole"
        for cidr, kind in wanted.items():
            net = ipaddress.ip_network(cidr, strict=False)
            try:
                ipr.route("add", **_route(net, kind, lo))
            except NetlinkError as exc:
                if exc.code != 17:  # EEXIST: someone (another proxy of ours) has it already
                    raise
                continue
            state["routes"][str(net)] = kind
            _save(state)


def restore() -> None:
    """Put back what `prepare` changed: the last mini-kube-proxy of this host calls it."""
    state = _load()
    for name, value in state["sysctls"].items():
        with contextlib.suppress(OSError):
            SYSCTLS[name].write_text(value)
    with IPRoute() as ipr:
        lo = ipr.link_lookup(ifname="lo")[0]
        for cidr, kind in state["routes"].items():
            with contextlib.suppress(NetlinkError):
                ipr.route("del", **_route(ipaddress.ip_network(cidr), kind, lo))
    STATE.unlink(missing_ok=True)
