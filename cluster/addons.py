"""What a fresh cluster holds besides its components: the default StorageClass, and the
metrics API's registration when metrics-server runs (metrics_addon.py).

A real cluster ships with a few objects its installer creates (minikube's "default-storageclass"
addon, kind's `standard` class), so that a textbook's PersistentVolumeClaim without a class is
served. `mini-k8s up` creates `standard`, marked default, whose provisioner is
kube-controller-manager's development host-path provisioner (turned on by `up` with its volumes in
`<data-dir>/hostpath_pv`). It is created only when missing: a class the user changed or deleted
default-ness from is left as it is, and a restart of `up` over old data changes nothing.
"""

from __future__ import annotations

from typing import Any

from api.errors import AlreadyExistsError
from client import RESTClient
from cluster.metrics_addon import ensure_metrics_api

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


async def ensure_addons(api: RESTClient, metrics_server_port: int = 0) -> list[str]:
    """Create what is missing; returns a line for each object created."""
    lines = []
    try:
        await api.create("storageclasses.storage.k8s.io", DEFAULT_STORAGE_CLASS)
        lines.append('StorageClass "standard" (default): claims without a class get a host-path volume')
    except AlreadyExistsError:
        pass
    if metrics_server_port:
        lines += await ensure_metrics_api(api, metrics_server_port)
    return lines
