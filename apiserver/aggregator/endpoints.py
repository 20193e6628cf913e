"""An APIService's `service` reference → the address the proxy calls.

Like kube-apiserver with `--enable-aggregator-routing=true` (mini-k8s has no kube-proxy to carry
a ClusterIP): the Service's port whose `port` is the APIService's `service.port` names the
Endpoints port to use, and the first ready address is called. The scheme is HTTPS when the
APIService gives a `caBundle` (verified with it) or `insecureSkipTLSVerify`; plain HTTP
otherwise — a deliberate difference, since mini-k8s' own components serve plain HTTP on loopback
(Kubernetes always speaks HTTPS to an extension server).

The failures carry kube-aggregator's availability reasons and messages, so `kubectl get
apiservice` explains itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from api import errors, registry

if TYPE_CHECKING:
    from apiserver.server import APIServer

Obj = dict[str, Any]


@dataclass(frozen=True)
class Backend:
    url: str  # scheme://host:port, no path
    ca_bundle: str = ""  # base64 PEM from the APIService: verify the backend with it
    insecure: bool = False  # insecureSkipTLSVerify


class Unreachable(Exception):
    """The APIService cannot be served: `reason` and `message` as kube-aggregator words them."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


async def _get(server: APIServer, key: str, namespace: str, name: str) -> Obj | None:
    """From the watch cache (every proxied request asks, so no storage round trip), and from
    storage only when the cache has not seen the object yet: one just created is found."""
    rt = registry.by_key(key)
    assert rt is not None
    store = server.store(rt)
    cached = server.cache(rt).objects.get(store.key(namespace, name))
    if cached is not None:
        return cached
    try:
        return await store.get(namespace, name)
    except errors.StatusError as exc:
        if exc.code == 404:
            return None
        raise


async def resolve(server: APIServer, api_service: Obj) -> Backend:
    spec = api_service["spec"]
    ref = spec["service"]
    ns, name, port = ref.get("namespace", ""), ref.get("name", ""), int(ref.get("port") or 443)
    svc = await _get(server, "services", ns, name)
    if svc is None:
        raise Unreachable("ServiceNotFound", f'service/{name} in "{ns}" is not present')
    svc_port = next((p for p in (svc.get("spec") or {}).get("ports") or [] if p.get("port") == port), None)
    if svc_port is None:
        raise Unreachable("ServicePortError", f'service/{name} in "{ns}" is not listening on port {port}')
    port_name = svc_port.get("name", "")
    eps = await _get(server, "endpoints", ns, name)
    if eps is None:
        raise Unreachable("EndpointsNotFound", f'cannot find endpoints for service/{name} in "{ns}"')
    for subset in eps.get("subsets") or []:
        target = next((p for p in subset.get("ports") or [] if p.get("name", "") == port_name), None)
        addresses = subset.get("addresses") or []
        if target is not None and addresses:
            host = addresses[0]["ip"]
            host = f"[{host}]" if ":" in host else host
            ca, insecure = spec.get("caBundle") or "", bool(spec.get("insecureSkipTLSVerify"))
            scheme = "https" if ca or insecure else "http"
            return Backend(f"{scheme}://{host}:{target['port']}", ca, insecure)
    raise Unreachable(
        "MissingEndpoints", f'endpoints for service/{name} in "{ns}" have no addresses with port name "{port_name}"'
    )
