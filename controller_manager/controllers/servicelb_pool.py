"""AddressPool: the local stand-in for a cloud provider's load balancers (`--load-balancer-ip-pool`).

On a cloud, kube-controller-manager's service controller asks the provider for a load balancer and
writes the address the provider answers into the Service's status; the provider remembers which
balancer belongs to which Service. A laptop has no such provider, so mini-k8s does what kind's and
minikube's helpers do: it hands out addresses from a local range, and this object is the provider's
memory — which address belongs to which Service:

    pool 127.1.0.0/30        usable   127.1.0.1  127.1.0.2      (network .0 and broadcast .3 never)
    by_ip                    {"127.1.0.1": "default/web"}
    by_key                   {"default/web": "127.1.0.1"}

- One address per Service key (`namespace/name`); the lowest free one is handed out, so what a
  student gets is predictable.
- `take(key, ip)` asks for one address (`spec.loadBalancerIP`): granted only inside the pool and
  when free or already this key's, and then the key gives up any other. `allocate(key)` gives the
  key's address, or the lowest free one, or None when the pool is exhausted. `release(key)` gives
  it back.
- The network address is never handed out, nor the broadcast address of an IPv4 pool (Python's
  `hosts()`: a /31 or /32 has neither, so `127.1.0.9/32` is a pool of exactly one).

It lives only in memory: after a restart the controller rebuilds it from what the Services' statuses
say (`take` in creation order), so nothing is handed out twice. It does no I/O and is not
thread-safe; the controller uses it from the event loop only.
"""

from __future__ import annotations

import ipaddress

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_pool(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """`127.1.0.0/24` → the network; a ValueError naming the flag when it is not a CIDR."""
    try:
        return ipaddress.ip_network(cidr.strip(), strict=True)
    except ValueError as exc:
        raise ValueError(
            f'invalid --load-balancer-ip-pool "{cidr}": {exc} (want a CIDR such as 127.1.0.0/24)'
        ) from None


class AddressPool:
    def __init__(self, cidr: str) -> None:
        self.network = parse_pool(cidr)
        net = self.network
        if net.prefixlen >= net.max_prefixlen - 1:  # /31 and /32 (/127, /128): every address is a host
            self._first, self._last = int(net.network_address), int(net.broadcast_address)
        else:  # the network address never; for IPv4 the broadcast address neither
            self._first = int(net.network_address) + 1
            self._last = int(net.broadcast_address) - (1 if net.version == 4 else 0)
        self.by_ip: dict[str, str] = {}
        self.by_key: dict[str, str] = {}

    def __str__(self) -> str:
        return str(self.network)

    @property
    def size(self) -> int:
        return self._last - self._first + 1

    def _parse(self, ip: str) -> Address | None:
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return None
        return addr if addr.version == self.network.version and self._first <= int(addr) <= self._last else None

    def usable(self, ip: str) -> bool:
        """Is `ip` an address this pool hands out?"""
        return self._parse(ip) is not None

    def held_by(self, key: str) -> str | None:
        return self.by_key.get(key)

    def spelled(self, ip: str) -> str | None:
        """`ip` as this pool writes it (IPv6 compressed); None when it is not one of its addresses."""
        addr = self._parse(ip)
        return None if addr is None else str(addr)

    def available_to(self, key: str, ip: str) -> bool:
        """Could `key` have `ip`: in the pool, and free or already its own?"""
        addr = self._parse(ip)
        return addr is not None and self.by_ip.get(str(addr), key) == key

    def take(self, key: str, ip: str) -> str | None:
        """Give `key` exactly `ip` if it is available to it (giving up any other address it held);
        returns the address as this pool spells it, None when it is not available."""
        if not self.available_to(key, ip):
            return None
        ip = str(self._parse(ip))  # one spelling per address
        if self.by_key.get(key) != ip:
            self.release(key)
            self.by_ip[ip], self.by_key[key] = key, ip
        return ip

    def allocate(self, key: str) -> str | None:
        """`key`'s address, else the lowest free one (now `key`'s); None when none is free."""
        if key in self.by_key:
            return self.by_key[key]
        if len(self.by_ip) >= self.size:
            return None
        version = self.network.version
        for n in range(self._first, self._last + 1):  # stops after at most len(by_ip) + 1 steps
            ip = str(ipaddress.IPv4Address(n) if version == 4 else ipaddress.IPv6Address(n))
            if ip not in self.by_ip:
                self.by_ip[ip], self.by_key[key] = key, ip
                return ip
        return None

    def release(self, key: str) -> str | None:
        """Give back `key`'s address; returns it (None if it had none)."""
        ip = self.by_key.pop(key, None)
        if ip is not None:
            del self.by_ip[ip]
        return ip
