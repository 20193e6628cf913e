"""Which controllers exist, and how `--controllers` picks among them.

`--controllers` works as in kube-controller-manager: a comma-separated list where `*` means "every
controller that is on by default", a name turns one on, and `-name` turns one off
(`--controllers=*,-nodelifecycle`). Controllers are imported by name only when enabled.

Most names are kube-controller-manager's short, older ones (`replicaset`, `endpoints`), which it
still accepts as aliases. The Service controller goes by its current name, `service-lb-controller`,
and its old name `service` is accepted as an alias, as Kubernetes does.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing the registry stays cheap: `--help` lists the names below
    from controller_manager.controller import Controller

log = logging.getLogger("controller_manager")

# name → "module:Class"; one file per controller in controllers/.
CONTROLLERS: dict[str, str] = {
    "replicationcontroller": "controller_manager.controllers.replication:ReplicationManager",
    "replicaset": "controller_manager.controllers.replicaset:ReplicaSetController",
    "deployment": "controller_manager.controllers.deployment:DeploymentController",
    "nodelifecycle": "controller_manager.controllers.nodelifecycle:NodeLifecycleController",
    "endpoints": "controller_manager.controllers.endpoints:EndpointsController",
    "endpointslice": "controller_manager.controllers.endpointslice:EndpointSliceController",
    "endpointslicemirroring": "controller_manager.controllers.endpointslicemirroring:EndpointSliceMirroringController",
    "namespace": "controller_manager.controllers.namespace:NamespaceController",
    "garbagecollector": "controller_manager.controllers.garbagecollector:GarbageCollector",
    "podgc": "controller_manager.controllers.podgc:PodGCController",
    "serviceaccount": "controller_manager.controllers.serviceaccount:ServiceAccountsController",
    "job": "controller_manager.controllers.job:JobController",
    "cronjob": "controller_manager.controllers.cronjob:CronJobController",
    "ttl-after-finished": "controller_manager.controllers.ttlafterfinished:TTLAfterFinishedController",
    "daemonset": "controller_manager.controllers.daemonset:DaemonSetController",
    "statefulset": "controller_manager.controllers.statefulset:StatefulSetController",
    "serviceaccount-token": "controller_manager.controllers.serviceaccount_token:TokensController",
    "root-ca-cert-publisher": "controller_manager.controllers.rootcacertpublisher:RootCACertPublisher",
    "resourcequota": "controller_manager.controllers.resourcequota:ResourceQuotaController",
    "disruption": "controller_manager.controllers.disruption:DisruptionController",
    "persistentvolume-binder": "controller_manager.controllers.persistentvolume:PersistentVolumeController",
    "pvc-protection": "controller_manager.controllers.storage_protection:PVCProtectionController",
    "pv-protection": "controller_manager.controllers.storage_protection:PVProtectionController",
    "horizontalpodautoscaling": "controller_manager.controllers.horizontalpodautoscaler:HorizontalController",
    "service-lb-controller": "controller_manager.controllers.servicelb:ServiceController",
}
# Other names a controller answers to in --controllers (Kubernetes' ControllerDescriptor aliases).
ALIASES: dict[str, str] = {"service": "service-lb-controller"}
# Controllers that need a file to do anything: without the flag they are skipped with a log line,
# as kube-controller-manager skips serviceaccount-token when it has no private key.
NEEDS_FLAG: dict[str, tuple[str, str]] = {
    "serviceaccount-token": ("service_account_private_key_file", "no private key (--service-account-private-key-file)"),
    "root-ca-cert-publisher": ("root_ca_file", "no root CA (--root-ca-file)"),
}
# Controllers that exist but are off unless named (kube-controller-manager has such too).
DISABLED_BY_DEFAULT: set[str] = set()
# Real kube-controller-manager controllers mini-k8s does not have (yet). Naming one, as seed 000's
# `--controllers=*,bootstrapsigner,tokencleaner` does, is accepted with a warning instead of failing.
NOT_IMPLEMENTED = {
    "bootstrapsigner",
    "tokencleaner",
    "csrapproving",
    "csrcleaner",
    "csrsigning",
    "ttl",
    "route",
    "cloud-node-lifecycle",
    "persistentvolume-expander",
    "attachdetach",
    "ephemeral-volume",
    "clusterrole-aggregation",
}


def selected(spec: list[str]) -> list[str]:
    """Resolve a --controllers list to controller names, in registry order."""
    wanted: set[str] = set()
    for raw in spec:
        for item in (s.strip() for s in raw.split(",")):
            if not item:
                continue
            off, name = ("-", item[1:]) if item.startswith("-") else ("", item)
            item = off + ALIASES.get(name, name)
            if item == "*":
                wanted |= {n for n in CONTROLLERS if n not in DISABLED_BY_DEFAULT}
            elif item.startswith("-"):
                wanted.discard(item[1:])
            elif item in CONTROLLERS:
                wanted.add(item)
            elif item.lstrip("-") in NOT_IMPLEMENTED:
                log.warning("controller %r is not implemented in mini-k8s; ignoring it", item)
            else:
                raise ValueError(f'"{item}" is not in the list of known controllers: {", ".join(CONTROLLERS)}')
    return [n for n in CONTROLLERS if n in wanted]


def runnable(names: list[str], options: object) -> list[str]:
    """Drop (and say so) the controllers whose required flag is empty."""
    out = []
    for n in names:
        attr, what = NEEDS_FLAG.get(n, ("", ""))
        if attr and not getattr(options, attr):
            log.warning("controller %r is disabled because there is %s", n, what)
            continue
        out.append(n)
    return out


def load(name: str) -> type[Controller]:
    module, _, cls = CONTROLLERS[name].partition(":")
    return getattr(importlib.import_module(module), cls)  # type: ignore[no-any-return]
