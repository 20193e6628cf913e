"""ClusterIP and NodePort allocators: hand out unique addresses from a fixed range.

Every ClusterIP Service gets an IP from `--service-cluster-ip-range` (10.96.0.0/12 by default
in kubeadm clusters) and every NodePort a port from 30000-32767. Two services must never share
one, so the API server keeps a bitmap of what is taken. In Kubernetes that bitmap is itself
stored in etcd; in mini-k8s it is in memory and rebuilt at start-up from the stored Services
with `mark_allocated` — the Services are the source of truth, the bitmap only an index.

How a free value is found: Kubernetes picks at random so that a deleted service's IP is not
handed straight to the next one (stale clients might still talk to it). We do the same cheaply:
start at a random offset and walk forward to the first free slot. With a set of taken values
that is O(1) amortised while the range is mostly free, and it still finds the last free slot
of a nearly full range.

A user may ask for a specific value (`clusterIP: 10.96.0.10`, `nodePort: 30001`); it must be
inside the range and free. The errors carry Kubernetes' field paths and wording so the REST
layer can return them as a 422 Invalid unchanged.
"""

from __future__ import annotations

import ipaddress
import random

from api.errors import FieldError, invalid_value


class AllocationError(Exception):
    """A requested value is taken or out of range, or the range is full.

    `field_error` is the FieldError to put in the 422 reply; `str()` is its full message.
    """

    def __init__(self, field_error: FieldError) -> None:
        super().__init__(str(field_error))
        self.field_error = field_error


class RangeFullError(AllocationError):
    """No free value is left (Kubernetes: "range is full")."""


class _OffsetAllocator:
    """A set of taken offsets in [0, size), allocated from a random starting point."""

    def __init__(self, size: int, rng: random.Random | None = None) -> None:
        self.size = size
        self.taken: set[int] = set()
        self._rng = rng or random.Random()

    def free_count(self) -> int:
        return self.size - len(self.taken)

    def take_any(self) -> int | None:
        if len(self.taken) >= self.size:
            return None
        start = self._rng.randrange(self.size)
        for step in range(self.size):
            offset = (start + step) % self.size
            if offset not in self.taken:
                self.taken.add(offset)
                return offset
        return None  # unreachable: the size check above guarantees a free slot


class IPAllocator:
    """Allocates service IPs from a CIDR such as "10.96.0.0/12".

    The network address (10.96.0.0) is never handed out, nor the broadcast address of an IPv4
    range. The first host (10.96.0.1) belongs by convention to the `kubernetes` Service, which
    asks for it explicitly; automatic allocation hands it out only when nothing else is free.
    """

    FIELD = "spec.clusterIPs"

    def __init__(self, cidr: str, rng: random.Random | None = None) -> None:
        self.cidr = cidr
        self.network = ipaddress.ip_network(cidr, strict=False)
        # Usable offsets from the network address: 1 .. last (exclusive of broadcast for IPv4).
        last = self.network.num_addresses - (1 if self.network.version == 4 else 0)
        self._first = 1
        self._alloc = _OffsetAllocator(max(last - self._first, 0), rng)

    # ---------------------------------------------------------------- helpers

    def _offset(self, ip: str) -> int | None:
        """Index of `ip` in the allocator, or None if it is outside the usable range."""
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return None
        if addr.version != self.network.version or addr not in self.network:
            return None
        offset = int(addr) - int(self.network.network_address) - self._first
        return offset if 0 <= offset < self._alloc.size else None

    def _ip(self, offset: int) -> str:
        return str(self.network.network_address + self._first + offset)

    def _error(self, ip: str, reason: str) -> AllocationError:
        return AllocationError(invalid_value(self.FIELD, [ip], f"failed to allocate IP {ip}: {reason}"))

    # ---------------------------------------------------------------- API

    def allocate(self, requested: str | None = None) -> str:
        """Take `requested` if given (and free and in range), else any free IP."""
        if requested:
            offset = self._offset(requested)
            if offset is None:
                raise self._error(requested, "provided IP is not in the valid range. "
                                             f"The range of valid IPs is {self.cidr}")
            if offset in self._alloc.taken:
                raise self._error(requested, "provided IP is already allocated")
            self._alloc.taken.add(offset)
            return self._ip(offset)
        # Leave the first host for the `kubernetes` Service while anything else is free (like
        # Kubernetes, which hands out the low end of the range last).
        hold = self._alloc.size > 1 and 0 not in self._alloc.taken
        if hold:
            self._alloc.taken.add(0)
        offset = self._alloc.take_any()
        if hold:
            self._alloc.taken.discard(0)
            if offset is None:
                offset = 0
                self._alloc.taken.add(0)
        if offset is None:
            raise RangeFullError(invalid_value(self.FIELD, [], "range is full"))
        return self._ip(offset)

    def release(self, ip: str) -> None:
        """Give `ip` back. Releasing something not allocated (or not ours) is a no-op."""
        offset = self._offset(ip)
        if offset is not None:
            self._alloc.taken.discard(offset)

    def mark_allocated(self, ip: str) -> bool:
        """Record `ip` as taken (rebuilding state from stored Services). Returns False for an
        IP outside the range or "None" (headless), which is simply not tracked."""
        offset = self._offset(ip)
        if offset is None:
            return False
        self._alloc.taken.add(offset)
        return True

    def is_allocated(self, ip: str) -> bool:
        offset = self._offset(ip)
        return offset is not None and offset in self._alloc.taken

    def free(self) -> int:
        return self._alloc.free_count()


class PortAllocator:
    """Allocates NodePorts from an inclusive range such as "30000-32767"."""

    def __init__(self, range_str: str = "30000-32767", rng: random.Random | None = None) -> None:
        base, sep, top = range_str.partition("-")
        self.base = int(base)
        last = int(top) if sep else self.base
        if last < self.base:
            raise ValueError(f"invalid port range {range_str!r}")
        self.range_str = f"{self.base}-{last}"
        self._alloc = _OffsetAllocator(last - self.base + 1, rng)

    def _offset(self, port: int) -> int | None:
        offset = port - self.base
        return offset if 0 <= offset < self._alloc.size else None

    def allocate(self, requested: int | None = None, field: str = "spec.ports[0].nodePort") -> int:
        """Take `requested` if given (and free and in range), else any free port. `field` is
        the path reported in errors: pass `spec.ports[i].nodePort` for the i-th port."""
        if requested:
            offset = self._offset(requested)
            if offset is None:
                raise AllocationError(invalid_value(
                    field, requested, "provided port is not in the valid range. "
                                      f"The range of valid ports is {self.range_str}"))
            if offset in self._alloc.taken:
                raise AllocationError(invalid_value(field, requested, "provided port is already allocated"))
            self._alloc.taken.add(offset)
            return requested
        offset = self._alloc.take_any()
        if offset is None:
            raise RangeFullError(invalid_value(field, 0, "range is full"))
        return self.base + offset

    def release(self, port: int) -> None:
        offset = self._offset(port)
        if offset is not None:
            self._alloc.taken.discard(offset)

    def mark_allocated(self, port: int) -> bool:
        offset = self._offset(port)
        if offset is None:
            return False
        self._alloc.taken.add(offset)
        return True

    def is_allocated(self, port: int) -> bool:
        offset = self._offset(port)
        return offset is not None and offset in self._alloc.taken

    def free(self) -> int:
        return self._alloc.free_count()
