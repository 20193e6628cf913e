"""Is a TCP port free? And which ports do the kubelets get?

`up` checks every port *before* starting anything: a second API server on a busy port would die
with "address already in use" deep in its log, while the user only sees "not ready after 60s".
Checking first turns that into one clear sentence.

The check binds the port the way the component will (with SO_REUSEADDR, like uvicorn), so a
socket in TIME_WAIT from a cluster that just stopped does not count as taken.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def kubelet_ports(
    first: int, count: int, *, reserved: Iterable[int] = (), is_free: Callable[[int], bool] = port_free
) -> list[int]:
    """`first` for node-1, then the next free ports above it that nobody else was given.

    node-1 always gets `first` (if it is taken, `up` says so); the others skip busy ports, so
    `--nodes 5` works next to whatever else runs on the machine. `is_free` is the machine's
    answer (a bind); the choice itself is a pure function of it.
    """
    taken = set(reserved)
    ports = [first]
    candidate = first + 1
    while len(ports) < count:
        if candidate > 65535:
            raise ValueError(f"no free ports above {first} for {count} kubelets")
        if candidate not in taken and is_free(candidate):
            ports.append(candidate)
        candidate += 1
    return ports
