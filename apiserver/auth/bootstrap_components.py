"""The ClusterRoles of the control-plane components, and who holds them (least privilege).

From Kubernetes' bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go),
each bound to the user the component's client certificate names, as kubeadm sets clusters up:

    system:kube-scheduler, system:volume-scheduler   → User system:kube-scheduler
    system:kube-controller-manager                   → User system:kube-controller-manager
    system:node-proxier                              → User system:kube-proxy
    system:kube-dns                                  → ServiceAccount kube-system/kube-dns
    system:monitoring                                → Group system:monitoring
    system:node, system:auth-delegator                 (bound by nobody here; see below)

`system:node` is created as Kubernetes creates it, with no binding: kubelets (`system:node:<name>`
in `system:nodes`) are authorized by the Node authorizer, which holds the node rules itself.
The controller-manager's own role is small on purpose: it lists and watches everything (the shared
informers), and each controller acts as its own ServiceAccount (bootstrap_controllers.py).

Two components are not part of Kubernetes' bootstrap policy but of their add-on manifests, and
mini-k8s creates them too. Kubernetes runs CoreDNS and metrics-server as pods, with the
ServiceAccounts kube-system/coredns and kube-system/metrics-server; mini-k8s runs
mini-cluster-dns and mini-metrics-server as host processes with client certificates, hence
User subjects (api/component_users.py):

    system:coredns (CoreDNS' manifest)                → User mini-k8s:cluster-dns
    system:metrics-server, system:auth-delegator      → User mini-k8s:metrics-server
    system:aggregated-metrics-reader                    (aggregated into view, edit and admin)

Left out as noise: rules on the `extensions` group (gone since 1.16), rules behind feature gates
mini-k8s does not have (dynamic resource allocation, ServiceCIDRs), and the roles of components
mini-k8s has no counterpart of (heapster, kube-aggregator, node-problem-detector, the CSR approvers;
service-account-issuer-discovery, as the API server serves no OIDC discovery documents).
"""

from __future__ import annotations

from api import component_users as users
from api.controller_accounts import NAMESPACE as KUBE_SYSTEM
from apiserver.auth.bootstrap_objects import (
    APPS,
    AUTHENTICATION,
    AUTHORIZATION,
    COORDINATION,
    DISCOVERY,
    LEGACY,
    POLICY,
    READ,
    STORAGE,
    Obj,
    cluster_role,
    cluster_role_binding,
    events_rule,
    group,
    rule,
    service_account,
    urls,
    user,
)

METRICS = "metrics.k8s.io"

KUBE_SCHEDULER_RULES = [
    events_rule(),
    # leader election: anyone may create the lease, only this one may be renewed
    rule(["create"], [COORDINATION], ["leases"]),
    rule(["get", "update"], [COORDINATION], ["leases"], ["kube-scheduler"]),
    rule(READ, [LEGACY], ["nodes"]),
    rule(["delete", *READ], [LEGACY], ["pods"]),  # delete: preemption
    rule(["create"], [LEGACY], ["bindings", "pods/binding"]),
    rule(["patch", "update"], [LEGACY], ["pods/status"]),  # the PodScheduled condition
    rule(READ, [LEGACY], ["replicationcontrollers", "services"]),  # spreading
    rule(READ, [APPS], ["replicasets"]),
    rule(READ, [APPS], ["statefulsets"]),
    rule(READ, [POLICY], ["poddisruptionbudgets"]),
    rule(READ, [LEGACY], ["persistentvolumeclaims", "persistentvolumes"]),
    # delegated authentication and authorization of its own /metrics and /healthz callers
    rule(["create"], [AUTHENTICATION], ["tokenreviews"]),
    rule(["create"], [AUTHORIZATION], ["subjectaccessreviews"]),
    rule(READ, [STORAGE], ["csinodes"]),
    rule(READ, [LEGACY], ["namespaces"]),  # inter-pod affinity's namespaceSelector
    rule(READ, [STORAGE], ["csidrivers"]),
    rule(READ, [STORAGE], ["csistoragecapacities"]),
]  # fmt: skip

VOLUME_SCHEDULER_RULES = [
    rule(["get", "list", "patch", "update", "watch"], [LEGACY], ["persistentvolumes"]),
    rule(READ, [STORAGE], ["storageclasses"]),
    rule(["get", "list", "patch", "update", "watch"], [LEGACY], ["persistentvolumeclaims"]),
]

KUBE_CONTROLLER_MANAGER_RULES = [
    events_rule(),
    rule(["create"], [COORDINATION], ["leases"]),
    rule(["get", "update"], [COORDINATION], ["leases"], ["kube-controller-manager"]),
    # the Token controller runs as the manager itself, and the manager makes the controllers' accounts
    rule(["create"], [LEGACY], ["secrets", "serviceaccounts"]),
    rule(["delete"], [LEGACY], ["secrets"]),
    rule(["get"], [LEGACY], ["configmaps", "namespaces", "secrets", "serviceaccounts"]),
    rule(["update"], [LEGACY], ["secrets", "serviceaccounts"]),
    rule(["create"], [AUTHENTICATION], ["tokenreviews"]),
    rule(["create"], [AUTHORIZATION], ["subjectaccessreviews"]),
    rule(["list", "watch"], ["*"], ["*"]),  # the shared informers (the garbage collector's: of every kind)
    rule(["create"], [LEGACY], ["serviceaccounts/token"]),  # tokens for the controllers' accounts
]  # fmt: skip

NODE_PROXIER_RULES = [
    rule(["list", "watch"], [LEGACY], ["endpoints", "services"]),
    rule(READ, [LEGACY], ["nodes"]),
    events_rule(),
    rule(["list", "watch"], [DISCOVERY], ["endpointslices"]),
]

# Kubernetes' node role (the Node authorizer is what actually authorizes kubelets).
NODE_RULES = [
    rule(["create"], [AUTHENTICATION], ["tokenreviews"]),
    rule(["create"], [AUTHORIZATION], ["localsubjectaccessreviews", "subjectaccessreviews"]),
    rule(READ, [LEGACY], ["services"]),
    rule(["create", "get", "list", "watch"], [LEGACY], ["nodes"]),
    rule(["patch", "update"], [LEGACY], ["nodes/status"]),
    rule(["patch", "update"], [LEGACY], ["nodes"]),
    rule(["create", "patch", "update"], [LEGACY], ["events"]),
    rule(READ, [LEGACY], ["pods"]),
    rule(["create", "delete"], [LEGACY], ["pods"]),  # mirror pods
    rule(["patch", "update"], [LEGACY], ["pods/status"]),
    rule(["create"], [LEGACY], ["pods/eviction"]),
    rule(READ, [LEGACY], ["configmaps", "secrets"]),
    rule(["get"], [LEGACY], ["persistentvolumeclaims", "persistentvolumes"]),
    rule(["get"], [LEGACY], ["endpoints"]),
    rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
    rule(["create", "delete", "get", "patch", "update"], [COORDINATION], ["leases"]),
    rule(["get"], [STORAGE], ["volumeattachments"]),
    rule(["create"], [LEGACY], ["serviceaccounts/token"]),
    rule(["get", "patch", "update"], [LEGACY], ["persistentvolumeclaims/status"]),
    rule(READ, [STORAGE], ["csidrivers"]),
    rule(["create", "delete", "get", "patch", "update"], [STORAGE], ["csinodes"]),
    rule(READ, ["node.k8s.io"], ["runtimeclasses"]),
]  # fmt: skip

AUTH_DELEGATOR_RULES = [
    rule(["create"], [AUTHENTICATION], ["tokenreviews"]),
    rule(["create"], [AUTHORIZATION], ["subjectaccessreviews"]),
]

KUBE_DNS_RULES = [rule(["list", "watch"], [LEGACY], ["endpoints", "services"])]

MONITORING_RULES = [
    urls(["get"], ["/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz",
                   "/readyz/*"]),
]  # fmt: skip

# CoreDNS' manifest (cluster/addons/dns/coredns), what mini-cluster-dns plays.
COREDNS_RULES = [
    rule(["list", "watch"], [LEGACY], ["endpoints", "services", "pods", "namespaces"]),
    rule(["list", "watch"], [DISCOVERY], ["endpointslices"]),
]

# metrics-server's manifest (kubernetes-sigs/metrics-server), what mini-metrics-server plays.
METRICS_SERVER_RULES = [
    rule(["get"], [LEGACY], ["nodes/metrics"]),  # scraping kubelets through their authorizing port
    rule(READ, [LEGACY], ["pods", "nodes"]),
]
AGGREGATED_METRICS_READER_RULES = [rule(READ, [METRICS], ["pods", "nodes"])]


def cluster_roles() -> list[Obj]:
    return [
        cluster_role("system:kube-scheduler", KUBE_SCHEDULER_RULES),
        cluster_role("system:volume-scheduler", VOLUME_SCHEDULER_RULES),
        cluster_role("system:kube-controller-manager", KUBE_CONTROLLER_MANAGER_RULES),
        cluster_role("system:node-proxier", NODE_PROXIER_RULES),
        cluster_role("system:node", NODE_RULES),
        cluster_role("system:auth-delegator", AUTH_DELEGATOR_RULES),
        cluster_role("system:kube-dns", KUBE_DNS_RULES),
        cluster_role("system:monitoring", MONITORING_RULES),
        cluster_role("system:coredns", COREDNS_RULES),
        cluster_role("system:metrics-server", METRICS_SERVER_RULES),
        cluster_role("system:aggregated-metrics-reader", AGGREGATED_METRICS_READER_RULES, "view", "edit", "admin"),
    ]


def cluster_role_bindings() -> list[Obj]:
    return [
        cluster_role_binding("system:kube-scheduler", [user(users.KUBE_SCHEDULER)]),
        cluster_role_binding("system:volume-scheduler", [user(users.KUBE_SCHEDULER)]),
        cluster_role_binding("system:kube-controller-manager", [user(users.KUBE_CONTROLLER_MANAGER)]),
        cluster_role_binding("system:node-proxier", [user(users.KUBE_PROXY)]),
        cluster_role_binding("system:kube-dns", [service_account(KUBE_SYSTEM, "kube-dns")]),
        cluster_role_binding("system:monitoring", [group("system:monitoring")]),
        cluster_role_binding("system:coredns", [user(users.CLUSTER_DNS)]),
        cluster_role_binding("system:metrics-server", [user(users.METRICS_SERVER)]),
        cluster_role_binding("metrics-server:system:auth-delegator", [user(users.METRICS_SERVER)],
                             "system:auth-delegator"),
    ]  # fmt: skip
