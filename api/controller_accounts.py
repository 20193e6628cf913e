"""Which ServiceAccount each controller of the controller-manager acts as.

With `--use-service-account-credentials`, kube-controller-manager gives each controller its own
identity, the ServiceAccount `kube-system/<name>`, bound by the API server's bootstrap policy to
the ClusterRole `system:controller:<name>` — so a replicaset controller can create pods and
nothing else worth stealing. The keys are mini-k8s's `--controllers` names (controller_manager/
registry.py); the values are the ServiceAccount names Kubernetes uses (its `saRolePrefix` roles).

One controller has no ServiceAccount: the Token controller (`serviceaccount-token`) makes the
ServiceAccount token Secrets, so in Kubernetes it always runs with the controller-manager's own
credentials (user `system:kube-controller-manager`), flag or no flag. It is in OWN_CREDENTIALS.

Shared by the API server (the roles and bindings it creates) and the controller-manager (the
identity it acts as); neither may import the other.
"""

from __future__ import annotations

NAMESPACE = "kube-system"
ROLE_PREFIX = "system:controller:"

CONTROLLER_SERVICE_ACCOUNTS: dict[str, str] = {
    "replicationcontroller": "replication-controller",
    "replicaset": "replicaset-controller",
    "deployment": "deployment-controller",
    "nodelifecycle": "node-controller",  # also the taint eviction it does (Kubernetes: same client)
    "endpoints": "endpoint-controller",
    "endpointslice": "endpointslice-controller",
    "endpointslicemirroring": "endpointslicemirroring-controller",
    "namespace": "namespace-controller",
    "garbagecollector": "generic-garbage-collector",
    "podgc": "pod-garbage-collector",
    "serviceaccount": "service-account-controller",
    "job": "job-controller",
    "cronjob": "cronjob-controller",
    "ttl-after-finished": "ttl-after-finished-controller",
    "daemonset": "daemon-set-controller",
    "statefulset": "statefulset-controller",
    "root-ca-cert-publisher": "root-ca-cert-publisher",
    "resourcequota": "resourcequota-controller",
    "disruption": "disruption-controller",
    "persistentvolume-binder": "persistent-volume-binder",
    "pvc-protection": "pvc-protection-controller",
    "pv-protection": "pv-protection-controller",
    "horizontalpodautoscaling": "horizontal-pod-autoscaler",
    "service-lb-controller": "service-controller",
}

# Controllers that act as the controller-manager itself even with --use-service-account-credentials.
OWN_CREDENTIALS: frozenset[str] = frozenset({"serviceaccount-token"})


def service_account_for(controller: str) -> str | None:
    """The ServiceAccount name (in kube-system) `controller` acts as; None: the manager's own identity."""
    return CONTROLLER_SERVICE_ACCOUNTS.get(controller)


def username_for(controller: str) -> str | None:
    """`system:serviceaccount:kube-system:<account>` for `controller`, or None (see OWN_CREDENTIALS)."""
    account = service_account_for(controller)
    return f"system:serviceaccount:{NAMESPACE}:{account}" if account else None
