"""The bootstrap Roles and RoleBindings inside kube-system (Kubernetes' namespace_policy.go).

- `extension-apiserver-authentication-reader`: reading the ConfigMap of that name, where an API
  server publishes how it authenticates (for servers and components that delegate to it), bound to
  the controller-manager and the scheduler — and, as metrics-server's manifest does, to
  mini-metrics-server (`metrics-server-auth-reader`);
- `system::leader-locking-kube-controller-manager` / `-kube-scheduler`: the older ConfigMap locks
  (the controller-manager's role also covers Leases in kube-system), bound to the component's user
  and to the ServiceAccounts Kubernetes names for them when they run as pods.

Kubernetes' Roles for controllers mini-k8s does not have (bootstrap-signer, token-cleaner,
cloud-provider) are left out.
"""

from __future__ import annotations

from api import component_users as users
from api.controller_accounts import NAMESPACE as KUBE_SYSTEM
from apiserver.auth.bootstrap_objects import (
    COORDINATION,
    LEGACY,
    READ,
    Obj,
    role,
    role_binding,
    rule,
    service_account,
    user,
)

AUTH_READER = "extension-apiserver-authentication-reader"
LOCK_KCM = "system::leader-locking-kube-controller-manager"
LOCK_SCHEDULER = "system::leader-locking-kube-scheduler"


def roles() -> list[Obj]:
    return [
        role(KUBE_SYSTEM, AUTH_READER, [rule(READ, [LEGACY], ["configmaps"], ["extension-apiserver-authentication"])]),
        role(KUBE_SYSTEM, LOCK_KCM, [
            rule(["watch"], [LEGACY], ["configmaps"]),
            rule(["get", "update"], [LEGACY], ["configmaps"], ["kube-controller-manager"]),
            rule(["get", "watch", "list", "create", "update"], [COORDINATION], ["leases"]),
        ]),
        role(KUBE_SYSTEM, LOCK_SCHEDULER, [
            rule(["watch"], [LEGACY], ["configmaps"]),
            rule(["get", "update"], [LEGACY], ["configmaps"], ["kube-scheduler"]),
        ]),
    ]  # fmt: skip


def role_bindings() -> list[Obj]:
    return [
        role_binding(KUBE_SYSTEM, "system::extension-apiserver-authentication-reader",
                     [user(users.KUBE_CONTROLLER_MANAGER), user(users.KUBE_SCHEDULER)], AUTH_READER),
        role_binding(KUBE_SYSTEM, LOCK_KCM, [user(users.KUBE_CONTROLLER_MANAGER),
                                             service_account(KUBE_SYSTEM, "kube-controller-manager"),
                                             service_account(KUBE_SYSTEM, "leader-election-controller")]),
        role_binding(KUBE_SYSTEM, LOCK_SCHEDULER, [user(users.KUBE_SCHEDULER),
                                                   service_account(KUBE_SYSTEM, "kube-scheduler")]),
        role_binding(KUBE_SYSTEM, "metrics-server-auth-reader", [user(users.METRICS_SERVER)], AUTH_READER),
    ]  # fmt: skip
