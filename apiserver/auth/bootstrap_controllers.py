"""One ClusterRole per controller, `system:controller:<account>`, bound to ServiceAccount kube-system/<account>.

Kubernetes' controller_policy.go: with `--use-service-account-credentials` the controller-manager
runs each controller as its own ServiceAccount (api/controller_accounts.py maps mini-k8s's
controller names to them), and each account holds only the writes its controller makes. The
reads mostly come from the shared informers, which list and watch as the controller-manager
itself (`system:kube-controller-manager`), so many roles read little.

The rules are Kubernetes', for the controllers mini-k8s has; roles of controllers it does not
have (attachdetach, expand, ephemeral-volume, route, ttl, certificate, clusterrole-aggregation …)
and rules on the retired `extensions` group are left out. Where a mini-k8s controller makes a
request its Kubernetes role does not allow, the role gains exactly that verb (MINI_K8S_ADDITIONS,
each with the reason): always a PATCH where Kubernetes' controller sends an UPDATE of the same
object, which gives no power an update does not.
"""

from __future__ import annotations

from api.controller_accounts import CONTROLLER_SERVICE_ACCOUNTS, NAMESPACE, ROLE_PREFIX
from apiserver.auth.bootstrap_objects import (
    APPS,
    AUTOSCALING,
    BATCH,
    DISCOVERY,
    LEGACY,
    POLICY,
    READ,
    STORAGE,
    Obj,
    cluster_role,
    cluster_role_binding,
    events_rule,
    rule,
    service_account,
)

RULES: dict[str, list[Obj]] = {
    "cronjob-controller": [
        rule(["get", "list", "watch", "update"], [BATCH], ["cronjobs"]),
        rule(["get", "list", "watch", "create", "update", "delete", "patch"], [BATCH], ["jobs"]),
        rule(["update"], [BATCH], ["cronjobs/status"]),
        rule(["update"], [BATCH], ["cronjobs/finalizers"]),
        rule(["list", "watch", "delete"], [LEGACY], ["pods"]),
        events_rule(),
    ],
    "daemon-set-controller": [
        rule(READ, [APPS], ["daemonsets"]),
        rule(["update"], [APPS], ["daemonsets/status"]),
        rule(["update"], [APPS], ["daemonsets/finalizers"]),
        rule(["list", "watch"], [LEGACY], ["nodes"]),
        rule(["list", "watch", "create", "delete", "patch"], [LEGACY], ["pods"]),
        rule(["create"], [LEGACY], ["pods/binding"]),
        rule(["get", "list", "watch", "create", "delete", "update", "patch"], [APPS], ["controllerrevisions"]),
        events_rule(),
    ],
    "deployment-controller": [
        rule(["get", "list", "watch", "update"], [APPS], ["deployments"]),
        rule(["update"], [APPS], ["deployments/status"]),
        rule(["update"], [APPS], ["deployments/finalizers"]),
        rule(["get", "list", "watch", "create", "update", "patch", "delete"], [APPS], ["replicasets"]),
        rule(["get", "list", "watch", "update"], [LEGACY], ["pods"]),
        events_rule(),
    ],
    "disruption-controller": [
        rule(READ, [APPS], ["deployments"]),
        rule(READ, [APPS], ["replicasets"]),
        rule(READ, [LEGACY], ["replicationcontrollers"]),
        rule(READ, [POLICY], ["poddisruptionbudgets"]),
        rule(READ, [APPS], ["statefulsets"]),
        rule(["update"], [POLICY], ["poddisruptionbudgets/status"]),
        rule(["patch", "update"], [LEGACY], ["pods/status"]),
        rule(["get"], ["*"], ["*/scale"]),
        events_rule(),
    ],
    "endpoint-controller": [
        rule(READ, [LEGACY], ["services", "pods"]),
        rule(["get", "list", "watch", "create", "update", "delete"], [LEGACY], ["endpoints"]),
        rule(["create"], [LEGACY], ["endpoints/restricted"]),
        events_rule(),
    ],
    "endpointslice-controller": [
        rule(READ, [LEGACY], ["services", "pods", "nodes"]),
        # owner references with blockOwnerDeletion to the Service
        rule(["update"], [LEGACY], ["services/finalizers"]),
        rule(["get", "list", "watch", "create", "update", "delete"], [DISCOVERY], ["endpointslices"]),
        events_rule(),
    ],
    "endpointslicemirroring-controller": [
        rule(READ, [LEGACY], ["services", "endpoints"]),
        rule(["update"], [LEGACY], ["services/finalizers"]),
        rule(["update"], [LEGACY], ["endpoints/finalizers"]),
        rule(["get", "list", "watch", "create", "update", "delete"], [DISCOVERY], ["endpointslices"]),
        events_rule(),
    ],
    "generic-garbage-collector": [
        rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]),
        events_rule(),
    ],
    "horizontal-pod-autoscaler": [
        rule(READ, [AUTOSCALING], ["horizontalpodautoscalers"]),
        rule(["update"], [AUTOSCALING], ["horizontalpodautoscalers/status"]),
        rule(["get", "update"], ["*"], ["*/scale"]),
        rule(["list", "watch"], [LEGACY], ["pods"]),
        rule(["list", "watch"], ["metrics.k8s.io"], ["pods"]),
        rule(READ, ["custom.metrics.k8s.io"], ["*"]),
        rule(READ, ["external.metrics.k8s.io"], ["*"]),
        events_rule(),
    ],
    "job-controller": [
        rule(["get", "list", "watch", "update", "patch"], [BATCH], ["jobs"]),
        rule(["update"], [BATCH], ["jobs/status"]),
        rule(["update"], [BATCH], ["jobs/finalizers"]),
        rule(["list", "watch", "create", "delete", "patch"], [LEGACY], ["pods"]),
        events_rule(),
    ],
    "namespace-controller": [
        rule(["get", "list", "watch", "delete"], [LEGACY], ["namespaces"]),
        rule(["update"], [LEGACY], ["namespaces/finalize", "namespaces/status"]),
        rule(["get", "list", "watch", "delete", "deletecollection"], ["*"], ["*"]),
    ],
    "node-controller": [
        rule(["get", "list", "watch", "update", "delete", "patch"], [LEGACY], ["nodes"]),
        rule(["patch", "update"], [LEGACY], ["nodes/status"]),
        rule(["patch", "update"], [LEGACY], ["pods/status"]),  # conditions of pods on a lost node
        rule(["list", "watch", "get", "delete"], [LEGACY], ["pods"]),
        events_rule(),
    ],
    "persistent-volume-binder": [
        rule(["get", "list", "watch", "update", "create", "delete"], [LEGACY], ["persistentvolumes"]),
        rule(["update"], [LEGACY], ["persistentvolumes/status"]),
        rule(["get", "list", "watch", "update"], [LEGACY], ["persistentvolumeclaims"]),
        rule(["update"], [LEGACY], ["persistentvolumeclaims/status"]),
        rule(["list", "watch", "get", "create", "delete"], [LEGACY], ["pods"]),
        rule(READ, [STORAGE], ["storageclasses"]),
        rule(["list", "watch"], [LEGACY], ["nodes"]),
        events_rule(),
        rule(["watch"], [LEGACY], ["events"]),  # the recycler watches its pod's events
        rule(["get"], [LEGACY], ["services"]),
    ],
    "pod-garbage-collector": [
        rule(["list", "watch", "delete"], [LEGACY], ["pods"]),
        rule(READ, [LEGACY], ["nodes"]),
        rule(["patch"], [LEGACY], ["pods/status"]),
    ],
    "replicaset-controller": [
        rule(["get", "list", "watch", "update"], [APPS], ["replicasets"]),
        rule(["update"], [APPS], ["replicasets/status"]),
        rule(["update"], [APPS], ["replicasets/finalizers"]),
        rule(["list", "watch", "patch", "create", "delete"], [LEGACY], ["pods"]),
        events_rule(),
    ],
    "replication-controller": [
        rule(["get", "list", "watch", "update"], [LEGACY], ["replicationcontrollers"]),
        rule(["update"], [LEGACY], ["replicationcontrollers/status"]),
        rule(["update"], [LEGACY], ["replicationcontrollers/finalizers"]),
        rule(["list", "watch", "patch", "create", "delete"], [LEGACY], ["pods"]),
        events_rule(),
    ],
    "resourcequota-controller": [
        rule(["list", "watch"], ["*"], ["*"]),  # it may count anything
        rule(["update"], [LEGACY], ["resourcequotas/status"]),
        events_rule(),
    ],
    "service-account-controller": [
        rule(["create"], [LEGACY], ["serviceaccounts"]),
        events_rule(),
    ],
    # The controller mini-k8s calls service-lb-controller: it hands out load-balancer addresses
    # from a pool instead of asking a cloud, but writes what Kubernetes' service controller writes.
    "service-controller": [
        rule(READ, [LEGACY], ["services"]),
        rule(["patch", "update"], [LEGACY], ["services/status"]),
        rule(["list", "watch"], [LEGACY], ["nodes"]),
        events_rule(),
    ],
    "statefulset-controller": [
        rule(["list", "watch"], [LEGACY], ["pods"]),
        rule(READ, [APPS], ["statefulsets"]),
        rule(["update"], [APPS], ["statefulsets/status"]),
        rule(["update"], [APPS], ["statefulsets/finalizers"]),
        rule(["get", "create", "delete", "update", "patch"], [LEGACY], ["pods"]),
        rule(["get", "create", "delete", "update", "patch", "list", "watch"], [APPS], ["controllerrevisions"]),
        rule(["get", "create", "list", "watch"], [LEGACY], ["persistentvolumeclaims"]),
        rule(["update", "delete"], [LEGACY], ["persistentvolumeclaims"]),
        rule(["update"], [LEGACY], ["pods/finalizers"]),
        events_rule(),
    ],
    "ttl-after-finished-controller": [
        rule(["get", "list", "watch", "delete"], [BATCH], ["jobs"]),
        events_rule(),
    ],
    "root-ca-cert-publisher": [
        rule(["create", "update"], [LEGACY], ["configmaps"]),
        events_rule(),
    ],
    "pvc-protection-controller": [
        rule(["get", "list", "watch", "update"], [LEGACY], ["persistentvolumeclaims"]),
        rule(["list", "watch", "get"], [LEGACY], ["pods"]),
        events_rule(),
    ],
    "pv-protection-controller": [
        rule(["get", "list", "watch", "update"], [LEGACY], ["persistentvolumes"]),
        events_rule(),
    ],
}  # fmt: skip

# What mini-k8s controllers send beyond their Kubernetes role — (controller, verb, group, resource,
# why) — added to the role below. tests/security/test_component_roles.py checks each is allowed,
# and the end-to-end test (tests/cluster/test_up_secure.py) that no component is ever refused.
MINI_K8S_ADDITIONS: list[tuple[str, str, str, str, str]] = [
    ("deployment", "patch", APPS, "deployments",
     "the revision annotation is PATCHed; Kubernetes' controller UPDATEs the Deployment"),
    ("statefulset", "patch", LEGACY, "persistentvolumeclaims",
     "claim owner references (persistentVolumeClaimRetentionPolicy) are PATCHed; Kubernetes UPDATEs the claim"),
    ("pvc-protection", "patch", LEGACY, "persistentvolumeclaims",
     "the kubernetes.io/pvc-protection finalizer is removed by PATCH; Kubernetes UPDATEs the claim"),
    ("pv-protection", "patch", LEGACY, "persistentvolumes",
     "the kubernetes.io/pv-protection finalizer is removed by PATCH; Kubernetes UPDATEs the volume"),
    ("service-lb-controller", "patch", LEGACY, "services",
     "its service.kubernetes.io/load-balancer-cleanup finalizer is PATCHed onto the Service; Kubernetes' "
     "in-tree service-controller role has no write on services (cloud-controller-manager's own role does)"),
]  # fmt: skip


def _rules(account: str) -> list[Obj]:
    extra = [rule([verb], [group], [resource]) for controller, verb, group, resource, _ in MINI_K8S_ADDITIONS
             if CONTROLLER_SERVICE_ACCOUNTS[controller] == account]  # fmt: skip
    return RULES[account] + extra


def cluster_roles() -> list[Obj]:
    return [cluster_role(ROLE_PREFIX + account, _rules(account)) for account in RULES]


def cluster_role_bindings() -> list[Obj]:
    return [cluster_role_binding(ROLE_PREFIX + account, [service_account(NAMESPACE, account)]) for account in RULES]
