"""RBAC on the secure port with the real kubectl: 403 in Kubernetes' words, grants through Roles
and bindings (to a user, to a group), `auth can-i` and `can-i --list`, the escalation check,
impersonation, and the audit log that records it all."""

from __future__ import annotations

import json

import httpx

from tests.security.conftest import SecureCluster
from tests.support.fixtures import new_namespace

ROLE = """apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: {name}, namespace: {ns}}}
rules:
- apiGroups: ["{group}"]
  resources: [{resources}]
  verbs: [{verbs}]
"""


def _role(secure: SecureCluster, ns: str, name: str, resources: str, verbs: str, group: str = "") -> None:
    manifest = ROLE.format(name=name, ns=ns, resources=resources, verbs=verbs, group=group)
    done = secure.kubectl("admin", "apply", "-f", "-", stdin=manifest)
    assert done.returncode == 0, done.stderr


def test_a_user_without_grants_is_refused_in_kubernetes_words(secure: SecureCluster) -> None:
    done = secure.kubectl("alice", "get", "pods")
    assert done.returncode == 1
    assert done.stderr == ('Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" '
                           'in API group "" in the namespace "default"\n')  # fmt: skip
    done = secure.kubectl("alice", "get", "deployment", "web")
    assert 'deployments.apps "web" is forbidden: User "alice" cannot get resource "deployments" in API group "apps" ' \
        'in the namespace "default"' in done.stderr
    done = secure.kubectl("alice", "get", "nodes")
    assert 'User "alice" cannot list resource "nodes" in API group "" at the cluster scope' in done.stderr


def test_a_role_binding_grants_in_its_namespace_only(secure: SecureCluster, plain: httpx.Client) -> None:
    ns = new_namespace(plain, "rbac")
    _role(secure, ns, "pod-reader", "pods", "get, list, watch")
    done = secure.kubectl("admin", "create", "rolebinding", "alice-reads", "--role=pod-reader", "--user=alice",
                          "-n", ns)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert secure.kubectl("alice", "get", "pods", "-n", ns).stderr == f"No resources found in {ns} namespace.\n"
    assert secure.kubectl("alice", "get", "pods").returncode == 1
    assert secure.kubectl("alice", "auth", "can-i", "list", "pods", "-n", ns).stdout == "yes\n"
    refused = secure.kubectl("alice", "auth", "can-i", "delete", "pods", "-n", ns)
    assert (refused.returncode, refused.stdout) == (1, "no\n")
    listed = secure.kubectl("alice", "auth", "can-i", "--list", "-n", ns).stdout.splitlines()
    assert listed[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["pods", "[]", "[]", "[get", "list", "watch]"] in [line.split() for line in listed]
    assert any(line.split()[:2] == ["selfsubjectaccessreviews.authorization.k8s.io", "[]"] for line in listed)
    # a group binding: bob is in "dev"
    assert secure.kubectl("bob", "get", "pods", "-n", ns).returncode == 1
    done = secure.kubectl("admin", "create", "rolebinding", "dev-reads", "--role=pod-reader", "--group=dev", "-n", ns)
    assert done.returncode == 0, done.stderr
    assert secure.kubectl("bob", "get", "pods", "-n", ns).returncode == 0
    # an administrator asks about alice with a SubjectAccessReview
    asked = {"namespace": ns, "verb": "get", "resource": "pods"}
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": "alice", "resourceAttributes": asked}}  # fmt: skip
    done = secure.kubectl("admin", "create", "-f", "-", "-o", "json", stdin=json.dumps(review))
    assert json.loads(done.stdout)["status"]["allowed"] is True, done.stderr


def test_nobody_grants_what_they_do_not_hold(secure: SecureCluster, plain: httpx.Client) -> None:
    ns = new_namespace(plain, "esc")
    _role(secure, ns, "role-maker", "roles, rolebindings", "get, list, create", group="rbac.authorization.k8s.io")
    _role(secure, ns, "pod-getter", "pods", "get")
    for role in ("role-maker", "pod-getter"):
        assert secure.kubectl("admin", "create", "rolebinding", f"alice-{role}", f"--role={role}", "--user=alice",
                              "-n", ns).returncode == 0  # fmt: skip
    done = secure.kubectl("alice", "create", "role", "peek", "--verb=get", "--resource=secrets", "-n", ns)
    assert done.returncode == 1
    assert done.stderr == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "peek" is forbidden: user "alice" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}\n'
    )
    # what she holds she may pass on
    done = secure.kubectl("alice", "create", "role", "my-pod-getter", "--verb=get", "--resource=pods", "-n", ns)
    assert done.returncode == 0, done.stderr
    done = secure.kubectl("alice", "create", "rolebinding", "grab", "--clusterrole=cluster-admin", "--user=alice",
                          "-n", ns)  # fmt: skip
    assert done.returncode == 1 and "is attempting to grant RBAC permissions not currently held" in done.stderr
    assert secure.kubectl("admin", "get", "rolebinding", "grab", "-n", ns).returncode == 1


def test_impersonation_needs_the_impersonate_verb(secure: SecureCluster) -> None:
    done = secure.kubectl("admin", "--as", "alice", "get", "pods")
    assert 'User "alice" cannot list resource "pods"' in done.stderr
    who = secure.kubectl("admin", "--as", "carol", "--as-group", "ops", "auth", "whoami")
    assert who.returncode == 0 and "carol" in who.stdout and "[ops system:authenticated]" in who.stdout
    done = secure.kubectl("alice", "--as", "bob", "get", "pods")
    assert done.returncode == 1
    assert done.stderr == ('Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate '
                           'resource "users" in API group "" at the cluster scope\n')  # fmt: skip


def test_the_audit_log_says_who_did_what_and_the_answer(secure: SecureCluster) -> None:
    secure.kubectl("alice", "get", "secrets", "-n", "kube-system")
    secure.kubectl("admin", "--as", "carol", "auth", "whoami")
    events = [json.loads(line) for line in secure.audit_log.read_text().splitlines()]
    hit = [e for e in events
           if e["user"].get("username") == "alice" and e.get("objectRef", {}).get("resource") == "secrets"]  # fmt: skip
    assert hit, "no audit event for alice's secrets list"
    event = hit[-1]
    assert (event["apiVersion"], event["kind"], event["level"], event["stage"]) == (
        "audit.k8s.io/v1", "Event", "Metadata", "ResponseComplete")
    assert event["verb"] == "list" and event["objectRef"]["namespace"] == "kube-system"
    assert event["responseStatus"]["code"] == 403
    assert event["annotations"]["authorization.k8s.io/decision"] == "forbid"
    impersonated = [e for e in events if e.get("impersonatedUser", {}).get("username") == "carol"]
    assert impersonated and impersonated[-1]["user"]["username"] == "kubernetes-admin"
