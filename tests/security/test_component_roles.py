"""Least privilege for the control plane: the bootstrap roles of each component's own identity.

Each component authenticates as its own user (a client certificate) and each controller of the
controller-manager as its own ServiceAccount in kube-system; the API server's bootstrap policy
binds each to Kubernetes' role for it. Asked with SubjectAccessReviews (as an administrator),
with real requests under the components' certificates, and by impersonating the controllers'
ServiceAccounts: the key permissions are there, and what lies outside is refused.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from api import component_users as users
from api.controller_accounts import CONTROLLER_SERVICE_ACCOUNTS, NAMESPACE, OWN_CREDENTIALS, ROLE_PREFIX, username_for
from apiserver.auth import bootstrap
from apiserver.auth.bootstrap_controllers import MINI_K8S_ADDITIONS
from controller_manager.registry import CONTROLLERS
from tests.security.conftest import SecureCluster
from tests.support.fixtures import new_namespace
from tests.support.pki import CA

Obj = dict[str, Any]
AUTHENTICATED = ("system:authenticated",)
SA_GROUPS = ("system:serviceaccounts", f"system:serviceaccounts:{NAMESPACE}", "system:authenticated")
REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
COORD = "coordination.k8s.io"

# ------------------------------------------------------------------ unit level: the policy objects


def _by_name(objects: list[Obj]) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in objects}


def test_every_controller_has_an_identity_a_role_and_a_binding() -> None:
    assert set(CONTROLLER_SERVICE_ACCOUNTS) | OWN_CREDENTIALS == set(CONTROLLERS), "a controller with no identity"
    assert not set(CONTROLLER_SERVICE_ACCOUNTS) & OWN_CREDENTIALS
    assert len(set(CONTROLLER_SERVICE_ACCOUNTS.values())) == len(CONTROLLER_SERVICE_ACCOUNTS)
    roles, bindings = _by_name(bootstrap.cluster_roles()), _by_name(bootstrap.cluster_role_bindings())
    for controller, account in CONTROLLER_SERVICE_ACCOUNTS.items():
        name = ROLE_PREFIX + account
        assert roles.get(name, {}).get("rules"), f"{controller}: no ClusterRole {name}"
        binding = bindings.get(name)
        assert binding is not None, f"{controller}: no ClusterRoleBinding {name}"
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]
        assert username_for(controller) == f"system:serviceaccount:{NAMESPACE}:{account}"
    assert all(username_for(c) is None for c in OWN_CREDENTIALS)


def test_bootstrap_objects_are_labelled_unique_and_point_at_existing_roles() -> None:
    roles, bindings = bootstrap.cluster_roles(), bootstrap.cluster_role_bindings()
    ns_roles, ns_bindings = bootstrap.roles(), bootstrap.role_bindings()
    for kind, objects in (("ClusterRole", roles), ("ClusterRoleBinding", bindings), ("Role", ns_roles),
                          ("RoleBinding", ns_bindings)):  # fmt: skip
        keys = [(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects]
        assert len(keys) == len(set(keys)), f"duplicate {kind}"
        for o in objects:
            assert o["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults", o["metadata"]["name"]
            assert o["metadata"]["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    cluster_role_names = set(_by_name(roles))
    for b in bindings:
        assert b["roleRef"]["name"] in cluster_role_names, b["metadata"]["name"]
    for b in ns_bindings:
        assert b["roleRef"]["name"] in {r["metadata"]["name"] for r in ns_roles}, b["metadata"]["name"]
    # system:node exists as in Kubernetes, but nothing binds it: the Node authorizer authorizes kubelets
    assert "system:node" in cluster_role_names
    assert not [b for b in bindings + ns_bindings if b["roleRef"]["name"] == "system:node"]


# ------------------------------------------------------------------ against a real API server


def _groups(user: str) -> tuple[str, ...]:
    """The groups the authenticator would give `user`."""
    if user.startswith("system:serviceaccount:"):
        return SA_GROUPS
    return (users.NODES_GROUP, *AUTHENTICATED) if user.startswith(users.NODE_PREFIX) else AUTHENTICATED


def _sa(account: str) -> str:
    return f"system:serviceaccount:{NAMESPACE}:{account}"


# (user, verb, resource[/subresource], group, namespace, name) → allowed?
ALLOWED: list[tuple[str, str, str, str, str, str]] = [
    # the scheduler
    (users.KUBE_SCHEDULER, "create", "pods/binding", "", "default", "web"),
    (users.KUBE_SCHEDULER, "create", "bindings", "", "default", ""),
    (users.KUBE_SCHEDULER, "patch", "pods/status", "", "default", "web"),
    (users.KUBE_SCHEDULER, "watch", "pods", "", "", ""),
    (users.KUBE_SCHEDULER, "list", "nodes", "", "", ""),
    (users.KUBE_SCHEDULER, "create", "events", "", "default", ""),
    (users.KUBE_SCHEDULER, "patch", "events", "", "default", "web.1"),
    (users.KUBE_SCHEDULER, "create", "leases", COORD, "kube-system", ""),
    (users.KUBE_SCHEDULER, "update", "leases", COORD, "kube-system", "kube-scheduler"),
    (users.KUBE_SCHEDULER, "list", "persistentvolumeclaims", "", "", ""),  # system:volume-scheduler
    (users.KUBE_SCHEDULER, "patch", "persistentvolumes", "", "", "pv-1"),
    (users.KUBE_SCHEDULER, "get", "configmaps", "", "kube-system", "extension-apiserver-authentication"),
    # the controller-manager itself: the informers, the Token controller, the controllers' accounts
    (users.KUBE_CONTROLLER_MANAGER, "list", "secrets", "", "", ""),
    (users.KUBE_CONTROLLER_MANAGER, "watch", "deployments", "apps", "", ""),
    (users.KUBE_CONTROLLER_MANAGER, "update", "secrets", "", "default", "token-abc"),
    (users.KUBE_CONTROLLER_MANAGER, "create", "serviceaccounts/token", "", "kube-system", "job-controller"),
    (users.KUBE_CONTROLLER_MANAGER, "update", "leases", COORD, "kube-system", "kube-controller-manager"),
    # kube-proxy
    (users.KUBE_PROXY, "list", "endpointslices", "discovery.k8s.io", "", ""),
    (users.KUBE_PROXY, "watch", "services", "", "", ""),
    (users.KUBE_PROXY, "get", "nodes", "", "", "node-1"),
    # cluster DNS (system:coredns)
    (users.CLUSTER_DNS, "watch", "services", "", "", ""),
    (users.CLUSTER_DNS, "list", "endpointslices", "discovery.k8s.io", "", ""),
    (users.CLUSTER_DNS, "list", "namespaces", "", "", ""),
    # metrics-server (system:metrics-server, system:auth-delegator, the authentication reader)
    (users.METRICS_SERVER, "list", "nodes", "", "", ""),
    (users.METRICS_SERVER, "get", "nodes/metrics", "", "", "node-1"),
    (users.METRICS_SERVER, "watch", "pods", "", "", ""),
    (users.METRICS_SERVER, "create", "tokenreviews", "authentication.k8s.io", "", ""),
    (users.METRICS_SERVER, "create", "subjectaccessreviews", "authorization.k8s.io", "", ""),
    (users.METRICS_SERVER, "get", "configmaps", "", "kube-system", "extension-apiserver-authentication"),
    # the controllers, each as its ServiceAccount
    (_sa("replicaset-controller"), "create", "pods", "", "default", ""),
    (_sa("replicaset-controller"), "update", "replicasets/status", "apps", "default", "web"),
    (_sa("replicaset-controller"), "create", "events", "", "default", ""),
    (_sa("deployment-controller"), "create", "replicasets", "apps", "default", ""),
    (_sa("deployment-controller"), "update", "deployments/status", "apps", "default", "web"),
    (_sa("node-controller"), "update", "nodes/status", "", "", "node-1"),
    (_sa("node-controller"), "delete", "pods", "", "default", "web"),
    (_sa("job-controller"), "update", "jobs/status", "batch", "default", "pi"),
    (_sa("job-controller"), "patch", "pods", "", "default", "pi-x"),
    (_sa("cronjob-controller"), "create", "jobs", "batch", "default", ""),
    (_sa("namespace-controller"), "deletecollection", "pods", "", "gone", ""),
    (_sa("namespace-controller"), "update", "namespaces/finalize", "", "", "gone"),
    (_sa("generic-garbage-collector"), "delete", "deployments", "apps", "default", "web"),
    (_sa("endpointslice-controller"), "create", "endpointslices", "discovery.k8s.io", "default", ""),
    (_sa("statefulset-controller"), "create", "persistentvolumeclaims", "", "default", ""),
    (_sa("persistent-volume-binder"), "create", "persistentvolumes", "", "", ""),
    (_sa("horizontal-pod-autoscaler"), "update", "deployments/scale", "apps", "default", "web"),
    (_sa("horizontal-pod-autoscaler"), "list", "pods", "metrics.k8s.io", "default", ""),
    (_sa("service-controller"), "patch", "services/status", "", "default", "lb"),
    (_sa("root-ca-cert-publisher"), "create", "configmaps", "", "default", ""),
    (_sa("service-account-controller"), "create", "serviceaccounts", "", "default", ""),
]  # fmt: skip

DENIED: list[tuple[str, str, str, str, str, str]] = [
    (users.KUBE_SCHEDULER, "delete", "secrets", "", "default", "db"),
    (users.KUBE_SCHEDULER, "get", "secrets", "", "default", "db"),
    (users.KUBE_SCHEDULER, "create", "pods", "", "default", ""),
    (users.KUBE_SCHEDULER, "update", "leases", COORD, "kube-system", "kube-controller-manager"),
    (users.KUBE_SCHEDULER, "get", "configmaps", "", "kube-system", "kube-proxy"),
    (users.KUBE_CONTROLLER_MANAGER, "create", "pods", "", "default", ""),
    (users.KUBE_CONTROLLER_MANAGER, "update", "deployments", "apps", "default", "web"),
    (users.KUBE_CONTROLLER_MANAGER, "update", "leases", COORD, "kube-node-lease", "node-1"),  # a kubelet's
    (users.KUBE_PROXY, "create", "pods", "", "default", ""),
    (users.KUBE_PROXY, "update", "services", "", "default", "web"),
    (users.KUBE_PROXY, "list", "secrets", "", "", ""),
    (users.CLUSTER_DNS, "get", "secrets", "", "default", "db"),
    (users.CLUSTER_DNS, "watch", "secrets", "", "", ""),
    (users.CLUSTER_DNS, "create", "services", "", "default", ""),
    (users.METRICS_SERVER, "list", "secrets", "", "", ""),
    (users.METRICS_SERVER, "delete", "pods", "", "default", "web"),
    (_sa("replicaset-controller"), "create", "secrets", "", "default", ""),
    (_sa("replicaset-controller"), "create", "deployments", "apps", "default", ""),
    (_sa("deployment-controller"), "create", "pods", "", "default", ""),
    (_sa("node-controller"), "get", "secrets", "", "default", "db"),
    (_sa("job-controller"), "create", "jobs", "batch", "default", ""),
    (_sa("namespace-controller"), "create", "pods", "", "default", ""),
    (_sa("generic-garbage-collector"), "create", "pods", "", "default", ""),
    (_sa("endpointslice-controller"), "create", "endpoints", "", "default", ""),
    (_sa("horizontal-pod-autoscaler"), "update", "deployments", "apps", "default", "web"),
    (_sa("service-controller"), "get", "secrets", "", "default", "db"),
    (_sa("root-ca-cert-publisher"), "get", "secrets", "", "default", "db"),
    # the binding names the ServiceAccount in kube-system: a namesake elsewhere gets nothing
    ("system:serviceaccount:default:replicaset-controller", "create", "pods", "", "default", ""),
    # a kubelet is not a controller-manager: nothing here binds system:node
    ("system:node:node-1", "list", "secrets", "", "", ""),
]  # fmt: skip


def _case_id(case: tuple[str, ...]) -> str:
    user, verb, resource, group, namespace, name = case
    where = f"{namespace}/" if namespace else ""
    return f"{user.rsplit(':', 1)[-1]}-{verb}-{resource}{'.' + group if group else ''}-{where}{name}"


def _client(secure: SecureCluster, cert: str, key: str) -> httpx.Client:
    """A client on the secure port presenting the certificate `cert` (with its `key`)."""
    tls = ssl.create_default_context(cafile=str(secure.ca))
    tls.load_cert_chain(cert, key)
    return httpx.Client(base_url=secure.secure_url, verify=tls, timeout=10.0)


@pytest.fixture(scope="module")
def admin(secure: SecureCluster) -> Iterator[httpx.Client]:
    """The administrator (a system:masters certificate) on the secure port."""
    user = yaml.safe_load(secure.kubeconfigs["admin"].read_text())["users"][0]["user"]
    with _client(secure, user["client-certificate"], user["client-key"]) as c:
        yield c


def _review(admin: httpx.Client, user: str, groups: tuple[str, ...], asked: Obj) -> bool:
    """Ask, as the administrator, whether `user` in `groups` may do `asked` (a SubjectAccessReview)."""
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": user, "groups": list(groups), "resourceAttributes": asked}}  # fmt: skip
    r = admin.post(REVIEWS, json=review)
    assert r.status_code == 201, r.text
    allowed: bool = r.json()["status"]["allowed"]
    return allowed


def _allowed(admin: httpx.Client, case: tuple[str, ...]) -> bool:
    user, verb, resource, group, namespace, name = case
    base, _, sub = resource.partition("/")
    asked = {"verb": verb, "group": group, "resource": base, "subresource": sub, "namespace": namespace, "name": name}
    return _review(admin, user, _groups(user), asked)


@pytest.mark.parametrize("case", ALLOWED, ids=_case_id)
def test_a_component_may_do_its_job(admin: httpx.Client, case: tuple[str, ...]) -> None:
    assert _allowed(admin, case), f"{case[0]} should be allowed to {case[1]} {case[2]}"


@pytest.mark.parametrize("case", DENIED, ids=_case_id)
def test_a_component_may_do_nothing_else(admin: httpx.Client, case: tuple[str, ...]) -> None:
    assert not _allowed(admin, case), f"{case[0]} should not be allowed to {case[1]} {case[2]}"


@pytest.mark.parametrize("extra", MINI_K8S_ADDITIONS, ids=lambda g: f"{g[0]}-{g[1]}-{g[3]}")
def test_what_mini_k8s_controllers_send_beyond_kubernetes_roles_is_granted(
    admin: httpx.Client, extra: tuple[str, ...]
) -> None:
    """The PATCHes mini-k8s controllers send where Kubernetes' send UPDATEs (MINI_K8S_ADDITIONS)
    are in their roles — and only for that resource: the same verb on secrets stays refused."""
    controller, verb, group, resource, _ = extra
    user = username_for(controller)
    assert user is not None
    assert _allowed(admin, (user, verb, resource, group, "default", "x"))
    assert not _allowed(admin, (user, verb, "secrets", "", "default", "x"))


def test_every_controller_account_may_record_events_where_kubernetes_lets_it(admin: httpx.Client) -> None:
    silent = {"namespace-controller", "pod-garbage-collector"}  # Kubernetes gives these two no events rule
    for account in CONTROLLER_SERVICE_ACCOUNTS.values():
        allowed = _allowed(admin, (_sa(account), "create", "events", "", "default", ""))
        assert allowed is (account not in silent), account


def test_the_bootstrap_objects_are_in_the_cluster(admin: httpx.Client) -> None:
    r = admin.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/system:controller:replicaset-controller")
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
    r = admin.get("/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/"
                  "system::leader-locking-kube-scheduler")  # fmt: skip
    assert r.status_code == 200, r.text
    assert {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-scheduler"} in r.json()[
        "subjects"
    ]
    # system:aggregated-metrics-reader is aggregated into view
    pod_metrics = {"verb": "list", "group": "metrics.k8s.io", "resource": "pods", "namespace": "default"}
    assert not _review(admin, "viewer", ("viewers",), pod_metrics)
    binding = {"metadata": {"name": "viewers-view"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "viewers"}]}  # fmt: skip
    created = admin.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json=binding)
    assert created.status_code == 201, created.text
    try:
        assert _review(admin, "viewer", ("viewers",), pod_metrics)
    finally:
        admin.delete("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/viewers-view")


# ------------------------------------------------------------------ real requests, as the components


@pytest.fixture(scope="module")
def as_component(secure: SecureCluster) -> Iterator[dict[str, httpx.Client]]:
    """A client per component user, each with its own certificate from the cluster's CA."""
    ca = CA(secure.ca.parent)
    clients: dict[str, httpx.Client] = {}
    for user in (users.KUBE_SCHEDULER, users.KUBE_PROXY, users.CLUSTER_DNS, users.METRICS_SERVER):
        pair = ca.issue(user.replace(":", "-"), cn=user)
        clients[user] = _client(secure, str(pair.cert), str(pair.key))
    try:
        yield clients
    finally:
        for c in clients.values():
            c.close()


def test_components_act_with_their_certificates(as_component: dict[str, httpx.Client]) -> None:
    scheduler, proxy = as_component[users.KUBE_SCHEDULER], as_component[users.KUBE_PROXY]
    dns, metrics = as_component[users.CLUSTER_DNS], as_component[users.METRICS_SERVER]
    assert scheduler.get("/api/v1/pods").status_code == 200
    assert scheduler.get("/api/v1/nodes").status_code == 200
    refused = scheduler.delete("/api/v1/namespaces/default/secrets/anything")
    assert refused.status_code == 403
    assert 'User "system:kube-scheduler" cannot delete resource "secrets"' in refused.json()["message"]
    assert proxy.get("/apis/discovery.k8s.io/v1/endpointslices").status_code == 200
    assert proxy.get("/api/v1/services").status_code == 200
    pod = {"metadata": {"name": "nope"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert proxy.post("/api/v1/namespaces/default/pods", json=pod).status_code == 403
    assert dns.get("/api/v1/services").status_code == 200
    assert dns.get("/api/v1/secrets").status_code == 403
    assert metrics.get("/api/v1/nodes").status_code == 200
    assert metrics.get("/api/v1/secrets").status_code == 403


def test_controllers_act_as_their_service_accounts(plain: httpx.Client, admin: httpx.Client) -> None:
    """Impersonating kube-system/replicaset-controller as the administrator: pods yes, secrets no."""
    ns = new_namespace(plain, "rsctl")
    headers = {"Impersonate-User": _sa("replicaset-controller")}
    pod = {"metadata": {"name": "made-by-rs"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    made = admin.post(f"/api/v1/namespaces/{ns}/pods", json=pod, headers=headers)
    assert made.status_code == 201, made.text
    secret = {"metadata": {"name": "stolen"}, "stringData": {"k": "v"}}
    refused = admin.post(f"/api/v1/namespaces/{ns}/secrets", json=secret, headers=headers)
    assert refused.status_code == 403
    assert "system:serviceaccount:kube-system:replicaset-controller" in refused.json()["message"]
    # the namespace controller may empty a namespace, but not fill one
    headers = {"Impersonate-User": _sa("namespace-controller")}
    assert admin.post(f"/api/v1/namespaces/{ns}/pods", json=pod, headers=headers).status_code == 403
    assert admin.delete(f"/api/v1/namespaces/{ns}/pods", headers=headers).status_code == 200
