"""Pod networking of the process runtime: a network namespace per pod on a bridge per node.

Desired state: every pod (but hostNetwork ones) of this node has its own network namespace with
`eth0` = its pod IP from the node's podCIDR and a default route via the node's bridge; the
containers of the pod share it (so they talk over localhost); the host reaches every pod IP
through the bridge; the pod range is routed locally only (the bridge's connected route), so no
packet for a pod address leaves the machine.
Current state, in the kernel (read and changed with pyroute2's netlink, never by parsing `ip`):

    bridge  mk-<node+CIDR hash>   address <podCIDR>.1/24, up        (one per node)
    veth    mkv<pod hash> ---- eth0 in netns mk-<pod uid>           (one per pod)

and a record per pod in `--root-dir/sandboxes/<uid>.json`, so a restarted kubelet, the sweeper
and `mini-k8s down` know what is ours. What it does about the difference: `ensure` creates what is
missing (idempotent: a kubelet restart finds it all there), `remove` deletes a pod's veth and
namespace, `remove_bridge` the node's bridge. Pods on two nodes of one machine talk through the
host only when it forwards IPv4 (net.ipv4.ip_forward=1), which the kubelet does not switch on.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import ipaddress
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

NETNS_DIR = Path("/var/run/netns")
CLONE_NEWNET = 0x40000000
LOOPBACK_IFINDEX = 1  # the kernel gives every namespace's loopback this index (include/net/flow.h)
MS_BIND = 4096
MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)
_bridge_lock = threading.Lock()  # sandboxes are made on a few threads; the bridge only once
_bridges_ready: dict[tuple[str, str], int] = {}  # (bridge, root dir) → index, made or checked and recorded here


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


@contextlib.contextmanager
def _inside(path: str) -> Iterator[None]:
    """Run the block with THIS thread in the network namespace at `path` (setns changes only the
    calling thread's namespace; the kubelet does netlink work on threads of its own).
    pyroute2's own NetNS forks helper processes, which a kubelet with child processes of its own
    cannot afford."""
    host = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(path, os.O_RDONLY)
        try:
            _check(_libc.setns(target, CLONE_NEWNET), f"setns {path}")
            try:
                yield
            finally:
                if _libc.setns(host, CLONE_NEWNET) != 0:
                    # this thread would go on in the pod's network: every later netlink call on it
                    # (a pool thread) would change the pod instead of the host. Nothing can be trusted.
                    os.write(2, f"fatal: cannot return a thread from {path} to the host's network namespace\n".encode())
                    os.abort()
        finally:
            os.close(target)
    finally:
        os.close(host)


def _create_netns(name: str) -> None:
    """What `ip netns add` does: a new namespace, kept alive by a bind mount at /var/run/netns/<name>."""
    NETNS_DIR.mkdir(parents=True, exist_ok=True)
    path = NETNS_DIR / name
    path.touch()
    host = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
        try:
            _check(_libc.mount(b"/proc/thread-self/ns/net", str(path).encode(), None, MS_BIND, None), "bind mount")
        finally:
            _check(_libc.setns(host, CLONE_NEWNET), "setns back to the host")
    except OSError:
        path.unlink(missing_ok=True)
        raise
    finally:
        os.close(host)


def _remove_netns(name: str) -> None:
    path = NETNS_DIR / name
    if not path.exists():
        return
    _libc.umount2(str(path).encode(), MNT_DETACH)
    path.unlink(missing_ok=True)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def bridge_name(node: str, pod_cidr: str) -> str:
    """13 characters (Linux allows 15). The range is in the hash too: two clusters on one machine
    may both have a `node-1`, never with the same podCIDR."""
    return f"mk-{_hash(node + '/' + pod_cidr)}"


def netns_name(uid: str) -> str:
    return f"mk-{uid}"


def netns_path(uid: str) -> str:
    return str(NETNS_DIR / netns_name(uid))


def _link(ipr: Any, name: str) -> int | None:
    """The index of the link called `name`, asked of the kernel by name (RTM_GETLINK with
    IFLA_IFNAME: one message back). pyroute2's link_lookup dumps every link and filters them
    here, which with a veth per pod made each pod's sandbox cost more than the last."""
    try:
        return int(ipr.link("get", ifname=name)[0]["index"])
    except NetlinkError as exc:
        if exc.code == errno.ENODEV:
            return None
        raise


def ensure_bridge(node: str, pod_cidr: str, root: Path) -> str:
    """The node's bridge, made and addressed if missing; returns the gateway (the bridge's address)."""
    return _bridge(node, pod_cidr, root, recheck=True)[0]


def _bridge(node: str, pod_cidr: str, root: Path, *, recheck: bool) -> tuple[str, int]:
    """(gateway, bridge index). Without `recheck`, a bridge this process already made or checked is
    taken as it was, with no netlink message: a pod's sandbox would only ask again whether it
    exists, and if it has gone the veth that names it as master is refused (ensure asks again)."""
    net = ipaddress.ip_network(pod_cidr, strict=False)
    gateway = str(net.network_address + 1)
    name = bridge_name(node, pod_cidr)
    with _bridge_lock:
        known = _bridges_ready.get((name, str(root)))
        if known is not None and not recheck:
            return gateway, known
        with IPRoute() as ipr:
            index = _link(ipr, name)
            if index is not None and known == index:
                return gateway, index
            if index is None:
                ipr.link("add", ifname=name, kind="bridge")
                index = _link(ipr, name)
                assert index is not None
            if not any(a.get_attr("IFA_ADDRESS") == gateway for a in ipr.get_addr(index=index)):
                ipr.addr("add", index=index, address=gateway, prefixlen=net.prefixlen)
            ipr.link("set", index=index, state="up")
        (root / "bridge").write_text(json.dumps({"bridge": name, "cidr": pod_cidr}))
        _bridges_ready[(name, str(root))] = index
    return gateway, index


def _add_veth(ipr: Any, host_if: str, netns: str, bridge: int) -> bool:
    """The pod's veth pair in one message: the host end enslaved to the bridge and up, the peer
    made inside the pod's namespace already called eth0 (moving a link between namespaces
    afterwards waits for the kernel's RCU grace period, ~20 ms a pod). False if the host end
    exists already (a restarted kubelet's pod)."""
    try:
        ipr.link("add", ifname=host_if, kind="veth", peer={"ifname": "eth0", "net_ns_fd": netns},
                 master=bridge, state="up")  # fmt: skip
    except NetlinkError as exc:
        if exc.code == errno.EEXIST:
            return False
        raise
    return True


def _ignore_exists(call: Any, *args: Any, **kwargs: Any) -> None:
    """An address or route that is there already is what was wanted (asking first costs a dump)."""
    try:
        call(*args, **kwargs)
    except NetlinkError as exc:
        if exc.code != errno.EEXIST:
            raise


def ensure(node: str, pod_cidr: str, uid: str, pod_ip: str, root: Path) -> str:
    """The pod's namespace, wired to the node's bridge; returns its netns path.

    Six netlink round trips for a new pod (the veth pair; then, inside, lo up, eth0's index, its
    address, eth0 up, the default route) and none for the bridge: with 50 pods created at once,
    netlink was most of a kubelet's CPU (bench/runtime.py)."""
    gateway, bridge = _bridge(node, pod_cidr, root, recheck=False)
    prefix = ipaddress.ip_network(pod_cidr, strict=False).prefixlen
    name = netns_name(uid)
    host_if, peer_if = f"mkv{_hash(uid)}", f"mkp{_hash(uid)}"
    records = root / "sandboxes"
    records.mkdir(exist_ok=True)
    (records / f"{uid}.json").write_text(json.dumps({"netns": name, "veth": host_if, "ip": pod_ip}))
    if not os.path.ismount(NETNS_DIR / name):
        _create_netns(name)
    with IPRoute() as ipr:
        try:
            made = _add_veth(ipr, host_if, name, bridge)
        except NetlinkError:  # the bridge this process knew is gone or was made again: ask anew
            gateway, bridge = _bridge(node, pod_cidr, root, recheck=True)
            made = _add_veth(ipr, host_if, name, bridge)
        if not made:
            host = _link(ipr, host_if)
            ipr.link("set", index=host, master=bridge, state="up")
    with _inside(netns_path(uid)), IPRoute() as ns:
        ns.link("set", index=LOOPBACK_IFINDEX, state="up")
        eth = _link(ns, "eth0")
        if eth is None:  # a sandbox made by an older kubelet, which moved the peer in by its name
            eth = _link(ns, peer_if)
            ns.link("set", index=eth, ifname="eth0")
        _ignore_exists(ns.addr, "add", index=eth, address=pod_ip, prefixlen=prefix)
        ns.link("set", index=eth, state="up")
        _ignore_exists(ns.route, "add", dst="0.0.0.0/0", gateway=gateway)
    return netns_path(uid)


def remove(uid: str, root: Path) -> None:
    """Delete the pod's veth (its peer goes with it) and namespace, then its record."""
    record = root / "sandboxes" / f"{uid}.json"
    try:
        doc = json.loads(record.read_text())
    except (OSError, ValueError):
        doc = {"netns": netns_name(uid), "veth": f"mkv{_hash(uid)}"}
    with IPRoute() as ipr:
        index = _link(ipr, doc["veth"])
        if index is not None:
            ipr.link("del", index=index)
    _remove_netns(doc["netns"])
    record.unlink(missing_ok=True)


def recorded(root: Path) -> list[str]:
    """The pod uids this kubelet made a sandbox for."""
    return [p.stem for p in (root / "sandboxes").glob("*.json")]


def remove_bridge(root: Path) -> None:
    try:
        doc = json.loads((root / "bridge").read_text())
    except (OSError, ValueError):
        return
    with IPRoute() as ipr:
        index = _link(ipr, doc["bridge"])
        if index is not None:
            ipr.link("del", index=index)
    _bridges_ready.pop((doc["bridge"], str(root)), None)
    (root / "bridge").unlink(missing_ok=True)
