"""The Node authorizer and NodeRestriction, end to end: an API server on HTTPS with
`--authorization-mode Node,RBAC` (kubeadm's), kubelets as client certificates CN=system:node:<name>,
O=system:nodes, on both storage backends.

Two nodes, n1 and n2; pod `web` runs on n1 as service account `runner` and uses a secret and a
configmap; pod `far` runs on n2. n1 may read what `web` uses and nothing else, write its own Node
and Lease only, touch only its own pods, and get tokens only for them. A user outside
`system:nodes` — even one named `system:node:n1` — is judged by RBAC alone."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.security.conftest import ISSUER
from tests.support.apiserver import APIServerProcess
from tests.support.component import free_port, wait_for
from tests.support.fixtures import new_namespace
from tests.support.pki import CA, Pair

NO_RELATIONSHIP = "no relationship found between node 'n1' and this object"
MERGE = {"Content-Type": "application/merge-patch+json"}


@dataclass
class NodeCluster:
    server: APIServerProcess
    url: str
    ca: Path
    certs: dict[str, Pair]
    ns: str
    web_uid: str
    far_uid: str

    def as_user(self, who: str) -> httpx.Client:
        tls = ssl.create_default_context(cafile=str(self.ca))
        tls.load_cert_chain(str(self.certs[who].cert), str(self.certs[who].key))
        return httpx.Client(base_url=self.url, verify=tls, timeout=10.0)


def _pod(name: str, node: str, account: str, secret: str, configmap: str = "") -> dict[str, object]:
    env = [{"name": "C", "valueFrom": {"configMapKeyRef": {"name": configmap, "key": "k"}}}] if configmap else []
    return {"metadata": {"name": name}, "spec": {
        "nodeName": node, "serviceAccountName": account,
        "containers": [{"name": "c", "image": "busybox", "env": env}],
        "volumes": [{"name": "s", "secret": {"secretName": secret}}]}}  # fmt: skip


def _create(plain: httpx.Client, path: str, body: dict[str, object]) -> dict[str, object]:
    r = plain.post(path, json=body)
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def _populate(plain: httpx.Client) -> tuple[str, str, str]:
    ns = new_namespace(plain, "node-authz")
    for node in ("n1", "n2"):
        _create(plain, "/api/v1/nodes", {"metadata": {"name": node}})
        _create(plain, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                {"metadata": {"name": node}, "spec": {"holderIdentity": node}})  # fmt: skip
    for secret in ("used-secret", "unused-secret", "far-secret"):
        _create(plain, f"/api/v1/namespaces/{ns}/secrets", {"metadata": {"name": secret}})
    _create(plain, f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "used-config"}, "data": {"k": "v"}})
    for account in ("runner", "far-runner"):
        _create(plain, f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": account}})
    web = _create(plain, f"/api/v1/namespaces/{ns}/pods", _pod("web", "n1", "runner", "used-secret", "used-config"))
    far = _create(plain, f"/api/v1/namespaces/{ns}/pods", _pod("far", "n2", "far-runner", "far-secret"))
    return ns, web["metadata"]["uid"], far["metadata"]["uid"]  # type: ignore[index]


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeCluster]:
    d = tmp_path_factory.mktemp("node-pki")
    ca = CA(d)
    serving = ca.issue("apiserver", cn="kube-apiserver", server=True)
    certs = {
        "n1": ca.issue("n1", cn="system:node:n1", groups=("system:nodes",)),
        "n2": ca.issue("n2", cn="system:node:n2", groups=("system:nodes",)),
        "impostor": ca.issue("impostor", cn="system:node:n1"),  # the name, but not the group
        "alice": ca.issue("alice", cn="alice"),
    }
    sa_key = ec.generate_private_key(ec.SECP256R1())
    (d / "sa.key").write_bytes(sa_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))  # fmt: skip
    port = free_port()
    etcd_url = request.getfixturevalue("etcd_server").url if request.param == "etcd" else None
    server = APIServerProcess(etcd_url=etcd_url, args=[
        "--secure-port", str(port), "--tls-cert-file", str(serving.cert), "--tls-private-key-file", str(serving.key),
        "--client-ca-file", str(ca.pair.cert), "--authorization-mode", "Node,RBAC",
        "--service-account-signing-key-file", str(d / "sa.key"), "--service-account-issuer", ISSUER,
    ]).start()  # fmt: skip
    url = f"https://127.0.0.1:{port}"
    try:
        tls = ssl.create_default_context(cafile=str(ca.pair.cert))
        wait_for(lambda: httpx.get(url + "/healthz", verify=tls).status_code == 200, what="HTTPS")
        with server.client() as plain:
            ns, web_uid, far_uid = _populate(plain)
        cluster = NodeCluster(server, url, ca.pair.cert, certs, ns, web_uid, far_uid)
        with cluster.as_user("n1") as n1:  # the graph is fed by the pods watch: wait until it has `web`
            wait_for(lambda: n1.get(f"/api/v1/namespaces/{ns}/pods/web").status_code == 200, what="web on n1")
        yield cluster
    finally:
        server.cleanup()


@pytest.fixture
def n1(cluster: NodeCluster) -> Iterator[httpx.Client]:
    with cluster.as_user("n1") as c:
        yield c


@pytest.fixture
def plain(cluster: NodeCluster) -> Iterator[httpx.Client]:
    with cluster.server.client() as c:
        yield c


def _refused(r: httpx.Response, message: str) -> None:
    assert r.status_code == 403, r.text
    assert (r.json()["reason"], r.json()["message"]) == ("Forbidden", message)


def test_a_node_reads_the_secrets_and_configmaps_of_its_pods_only(cluster: NodeCluster, n1: httpx.Client) -> None:
    ns = cluster.ns
    assert n1.get(f"/api/v1/namespaces/{ns}/secrets/used-secret").status_code == 200
    assert n1.get(f"/api/v1/namespaces/{ns}/configmaps/used-config").status_code == 200
    who = f'User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "{ns}"'
    _refused(n1.get(f"/api/v1/namespaces/{ns}/secrets/unused-secret"),
             f'secrets "unused-secret" is forbidden: {who}: {NO_RELATIONSHIP}')  # fmt: skip
    _refused(n1.get(f"/api/v1/namespaces/{ns}/secrets/far-secret"),  # used, but by a pod on n2
             f'secrets "far-secret" is forbidden: {who}: {NO_RELATIONSHIP}')  # fmt: skip
    _refused(n1.get(f"/api/v1/namespaces/{ns}/secrets"),
             f'secrets is forbidden: User "system:node:n1" cannot list resource "secrets" in API group "" '
             f'in the namespace "{ns}": No Object name found')  # fmt: skip
    # the kubelet's way of watching one secret: a list of one, by name
    one = n1.get(f"/api/v1/namespaces/{ns}/secrets", params={"fieldSelector": "metadata.name=used-secret"})
    assert [s["metadata"]["name"] for s in one.json()["items"]] == ["used-secret"]
    with cluster.as_user("n2") as n2:
        assert n2.get(f"/api/v1/namespaces/{ns}/secrets/far-secret").status_code == 200
        assert n2.get(f"/api/v1/namespaces/{ns}/secrets/used-secret").status_code == 403


def test_a_node_sees_its_own_pods_and_node_only(cluster: NodeCluster, n1: httpx.Client) -> None:
    ns = cluster.ns
    _refused(n1.get(f"/api/v1/namespaces/{ns}/pods/far"),
             f'pods "far" is forbidden: User "system:node:n1" cannot get resource "pods" in API group "" '
             f'in the namespace "{ns}": {NO_RELATIONSHIP}')  # fmt: skip
    _refused(n1.get("/api/v1/pods"),
             'pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster '
             "scope: can only list/watch pods with spec.nodeName field selector")  # fmt: skip
    mine = n1.get("/api/v1/pods", params={"fieldSelector": "spec.nodeName=n1"})
    assert [p["metadata"]["name"] for p in mine.json()["items"] if p["metadata"]["namespace"] == ns] == ["web"]
    assert n1.get("/api/v1/nodes/n1").status_code == 200
    _refused(n1.get("/api/v1/nodes/n2"),
             'nodes "n2" is forbidden: User "system:node:n1" cannot get resource "nodes" in API group "" at the '
             "cluster scope: node 'n1' cannot read 'n2', only its own Node object")  # fmt: skip


def test_a_node_writes_its_own_node_status_and_lease_only(n1: httpx.Client) -> None:
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
    assert n1.patch("/api/v1/nodes/n1/status", json=ready, headers=MERGE).status_code == 200
    _refused(n1.patch("/api/v1/nodes/n2/status", json=ready, headers=MERGE),
             'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"')  # fmt: skip
    leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    renew = {"spec": {"renewTime": "2025-01-01T00:00:00.000000Z"}}
    assert n1.patch(f"{leases}/n1", json=renew, headers=MERGE).status_code == 200
    _refused(n1.patch(f"{leases}/n2", json=renew, headers=MERGE),
             'leases.coordination.k8s.io "n2" is forbidden: User "system:node:n1" cannot patch resource "leases" '
             'in API group "coordination.k8s.io" in the namespace "kube-node-lease": can only access node lease '
             "with the same name as the requesting node")  # fmt: skip
    _refused(n1.post(leases, json={"metadata": {"name": "n3"}}),  # a create names its lease in the body: admission
             'leases.coordination.k8s.io "n3" is forbidden: can only access node lease with the same name as the '
             "requesting node")  # fmt: skip


def test_a_node_may_not_change_its_taints_or_restricted_labels(n1: httpx.Client) -> None:
    taint = {"spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}}
    _refused(n1.patch("/api/v1/nodes/n1", json=taint, headers=MERGE),
             'nodes "n1" is forbidden: node "n1" is not allowed to modify taints')  # fmt: skip
    label = {"metadata": {"labels": {"node-restriction.kubernetes.io/pool": "secure"}}}
    _refused(n1.patch("/api/v1/nodes/n1", json=label, headers=MERGE),
             'nodes "n1" is forbidden: is not allowed to modify labels: '
             "node-restriction.kubernetes.io/pool")  # fmt: skip
    own = {"metadata": {"labels": {"kubernetes.io/hostname": "n1", "example.com/rack": "r7"}}}
    assert n1.patch("/api/v1/nodes/n1", json=own, headers=MERGE).status_code == 200


def test_a_node_touches_only_pods_bound_to_it(cluster: NodeCluster, n1: httpx.Client) -> None:
    pods = f"/api/v1/namespaces/{cluster.ns}/pods"
    _refused(n1.delete(f"{pods}/far"),
             'pods "far" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself')  # fmt: skip
    _refused(n1.post(f"{pods}/far/eviction", json={"metadata": {"name": "far"}}),
             'pods "far" is forbidden: node n1 can only evict pods with spec.nodeName set to itself')  # fmt: skip
    running = {"status": {"phase": "Running"}}
    _refused(n1.patch(f"{pods}/far/status", json=running, headers=MERGE),
             'pods "far" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to '
             "itself")  # fmt: skip
    assert n1.patch(f"{pods}/web/status", json=running, headers=MERGE).status_code == 200
    plain_pod = {"metadata": {"name": "sneaky"},
                 "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
    _refused(n1.post(pods, json=plain_pod),
             'pods "sneaky" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" '
             "can only create mirror pods")  # fmt: skip


def test_a_node_creates_a_mirror_pod_owned_by_its_node(cluster: NodeCluster, n1: httpx.Client) -> None:
    uid = n1.get("/api/v1/nodes/n1").json()["metadata"]["uid"]
    owner = {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": uid, "controller": True}
    mirror = {"metadata": {"name": "static-web-n1", "annotations": {"kubernetes.io/config.mirror": "abc"},
                           "ownerReferences": [owner]},
              "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
    r = n1.post(f"/api/v1/namespaces/{cluster.ns}/pods", json=mirror)
    assert r.status_code == 201, r.text
    assert "serviceAccountName" not in r.json()["spec"]
    mirror["metadata"] = {**mirror["metadata"], "name": "static-other-n1"}  # type: ignore[dict-item]
    mirror["spec"] = {**mirror["spec"], "volumes": [{"name": "s", "secret": {"secretName": "used-secret"}}]}  # type: ignore[dict-item]
    _refused(n1.post(f"/api/v1/namespaces/{cluster.ns}/pods", json=mirror),
             'pods "static-other-n1" is forbidden: node "n1" can not create pods that reference secrets')  # fmt: skip


def test_a_node_gets_tokens_only_for_the_accounts_of_its_pods(cluster: NodeCluster, n1: httpx.Client) -> None:
    accounts = f"/api/v1/namespaces/{cluster.ns}/serviceaccounts"

    def request(pod: str, uid: str) -> dict[str, object]:
        return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid}}}  # fmt: skip

    r = n1.post(f"{accounts}/runner/token", json=request("web", cluster.web_uid))
    assert r.status_code == 201, r.text
    assert r.json()["status"]["token"]
    _refused(n1.post(f"{accounts}/far-runner/token", json=request("far", cluster.far_uid)),
             f'serviceaccounts "far-runner" is forbidden: User "system:node:n1" cannot create resource '
             f'"serviceaccounts/token" in API group "" in the namespace "{cluster.ns}": {NO_RELATIONSHIP}')  # fmt: skip
    _refused(n1.post(f"{accounts}/runner/token", json=request("far", cluster.far_uid)),  # its account, n2's pod
             'serviceaccounts "runner" is forbidden: node requested token bound to a pod scheduled on a different '
             "node")  # fmt: skip
    _refused(n1.post(f"{accounts}/runner/token", json={"spec": {}}),
             'serviceaccounts "runner" is forbidden: node requested token not bound to a pod')  # fmt: skip


def test_access_ends_when_the_pod_leaves_the_node(cluster: NodeCluster, n1: httpx.Client, plain: httpx.Client) -> None:
    ns = cluster.ns
    _create(plain, f"/api/v1/namespaces/{ns}/secrets", {"metadata": {"name": "short-secret"}})
    _create(plain, f"/api/v1/namespaces/{ns}/pods", _pod("short", "n1", "runner", "short-secret"))
    secret = f"/api/v1/namespaces/{ns}/secrets/short-secret"
    wait_for(lambda: n1.get(secret).status_code == 200, what="the secret readable once its pod is on n1")
    assert plain.delete(f"/api/v1/namespaces/{ns}/pods/short", params={"gracePeriodSeconds": 0}).status_code == 200
    wait_for(lambda: n1.get(secret).status_code == 403, what="the secret refused once its pod is gone")
    assert n1.get(f"/api/v1/namespaces/{ns}/secrets/used-secret").status_code == 200  # web still uses its own


def test_users_outside_system_nodes_are_left_to_rbac(cluster: NodeCluster, plain: httpx.Client) -> None:
    ns = cluster.ns
    for who in ("alice", "impostor"):
        with cluster.as_user(who) as c:
            name = "alice" if who == "alice" else "system:node:n1"
            _refused(c.get(f"/api/v1/namespaces/{ns}/secrets/used-secret"),
                     f'secrets "used-secret" is forbidden: User "{name}" cannot get resource "secrets" in API group '
                     f'"" in the namespace "{ns}"')  # fmt: skip
            assert c.get("/api/v1/nodes/n1").status_code == 403
    _create(plain, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
            {"metadata": {"name": "secret-reader"},
             "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]})  # fmt: skip
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "secret-reader"}
    _create(plain, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
            {"metadata": {"name": "alice-reads"}, "subjects": [{"kind": "User", "name": "alice"}],
             "roleRef": role_ref})  # fmt: skip
    with cluster.as_user("alice") as alice:
        wait_for(lambda: alice.get(f"/api/v1/namespaces/{ns}/secrets/unused-secret").status_code == 200,
                 what="RBAC's grant to alice")  # fmt: skip
