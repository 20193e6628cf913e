"""What a fresh cluster holds besides its components: the `kube-dns` Service when the cluster DNS
runs (dns_addon.py), the default StorageClass, and the metrics API's registration when
metrics-server runs (metrics_addon.py).

A real cluster ships with a few objects its installer creates (minikube's "default-storageclass"
addon, kind's `standard` class), so that a textbook's PersistentVolumeClaim without a class is
served. `mini-k8s up` creates `standard`, marked default, whose provisioner is
kube-controller-manager's development host-path provisioner (turned on by `up` with its volumes in
`<data-dir>/hostpath_pv`). It is created only when missing: a class the user changed or deleted
default-ness from is left as it is, and a restart of `up` over old data changes nothing.
"""

from __future__ import annotations

from typing import Any

from api.errors import AlreadyExistsError, InvalidError, NotFoundError
from client import RESTClient
from cluster.dns_addon import dns_objects
from cluster.metrics_addon import metrics_objects

DEFAULT_STORAGE_CLASS: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {
        "name": "standard",
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        "labels": {"addonmanager.kubernetes.io/mode": "EnsureExists"},
    },
    "provisioner": "kubernetes.io/host-path",
    "reclaimPolicy": "Delete",
    "volumeBindingMode": "Immediate",
}


async def ensure_objects(api: RESTClient, objects: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Create each object, or bring an existing one to what `up` wants (these belong to `up`: their
    spec, subsets and rules are overwritten); returns "Kind name" for each one created."""
    created = []
    for resource, obj in objects:
        name, namespace = obj["metadata"]["name"], obj["metadata"].get("namespace")
        try:
            await api.create(resource, obj)
            created.append(f"{obj['kind']} {name}")
        except (AlreadyExistsError, InvalidError) as exc:
            # A Service with a fixed clusterIP that exists already is refused as Invalid ("provided
            # IP is already allocated"), before AlreadyExists, as kube-apiserver refuses it.
            if isinstance(exc, InvalidError) and not await _exists(api, resource, name, namespace):
                raise
            change = {k: v for k, v in obj.items() if k in ("spec", "subsets", "rules")}
            await api.patch(resource, name, change, namespace)
    return created


async def _exists(api: RESTClient, resource: str, name: str, namespace: str | None) -> bool:
    try:
        await api.get(resource, name, namespace)
    except NotFoundError:
        return False
    return True


async def ensure_addons(
    api: RESTClient, metrics_server_port: int = 0, dns: tuple[str, list[str], int] | None = None,
    metrics_server_addresses: tuple[str, ...] = ("127.0.0.1",),
) -> list[str]:
    """Create what is missing; returns a line for each object created. `dns`: the kube-dns Service's
    address, where the cluster DNS listens and its port (no DNS: None)."""
    lines = []
    if dns:
        lines += await ensure_cluster_dns(api, *dns)
    try:
        await api.create("storageclasses.storage.k8s.io", DEFAULT_STORAGE_CLASS)
        lines.append('StorageClass "standard" (default): claims without a class get a host-path volume')
    except AlreadyExistsError:
        pass
    if metrics_server_port:
        lines += await ensure_metrics_api(api, metrics_server_port, metrics_server_addresses)
    return lines


async def ensure_metrics_api(api: RESTClient, port: int, addresses: tuple[str, ...] = ("127.0.0.1",)) -> list[str]:
    """The metrics API's registration, brought to this port and these addresses."""
    created = await ensure_objects(api, metrics_objects(port, addresses))
    if not created:
        return []
    return [f"metrics API: {', '.join(created)} (kubectl top; metrics-server on {', '.join(addresses)}:{port})"]


async def ensure_cluster_dns(api: RESTClient, cluster_ip: str, addresses: list[str], port: int) -> list[str]:
    try:
        created = await ensure_objects(api, dns_objects(addresses, port, cluster_ip))
    except InvalidError as exc:  # e.g. a Service of the user's holds 10.96.0.10 already
        return [f"! no kube-dns Service, pods will not resolve names: {exc}"]
    if not created:
        return []
    return [f"cluster DNS: {', '.join(created)} ({cluster_ip}:53 → {', '.join(addresses)} port {port})"]
