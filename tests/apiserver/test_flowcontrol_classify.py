"""Which FlowSchema and priority level a request lands in, and what it costs: pure functions."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from apiserver.auth.requestinfo import request_attributes
from apiserver.flowcontrol import MAX_SEATS, FlowController
from apiserver.flowcontrol_schemas import classify, classify_user, parse

KUBECTL = "kubectl/v1.32.0 (linux/amd64) kubernetes/abc"
KUBELET = "mini-kubelet/v1.32 (linux)"
LEASES = "/apis/coordination.k8s.io/v1/namespaces"


@pytest.mark.parametrize(
    ("method", "path", "agent", "schema", "level"),
    [
        ("GET", "/readyz", KUBECTL, "exempt", "exempt"),
        ("GET", "/metrics", KUBECTL, "exempt", "exempt"),
        ("PUT", f"{LEASES}/kube-node-lease/leases/n1", KUBECTL, "system-node-high", "node-high"),
        ("PATCH", "/api/v1/nodes/n1/status", KUBELET, "system-node-high", "node-high"),
        ("GET", "/api/v1/pods", KUBELET, "system-nodes", "system"),
        ("PUT", f"{LEASES}/kube-system/leases/x", "mini-scheduler", "system-leader-election", "leader-election"),
        ("GET", "/api/v1/pods", "mini-controller-manager", "kube-controller-manager", "workload-high"),
        ("GET", "/api/v1/pods", "mini-scheduler", "kube-scheduler", "workload-high"),
        ("GET", "/api/v1/namespaces/default/pods", KUBECTL, "global-default", "global-default"),
        ("GET", "/apis", KUBECTL, "global-default", "global-default"),
    ],
)
def test_classification(method: str, path: str, agent: str, schema: str, level: str) -> None:
    c = classify(parse(method, path, "", agent, "127.0.0.1"))
    assert (c.flow_schema, c.priority_level) == (schema, level)


AUTHN = ("system:authenticated",)
NODE = ("system:nodes", "system:authenticated")
SA = ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated")
KCM, SCHED = "system:kube-controller-manager", "system:kube-scheduler"
KUBE_SYSTEM_SA = "system:serviceaccount:kube-system:"


@pytest.mark.parametrize(
    ("method", "path", "user", "groups", "schema", "level", "flow"),
    [
        ("GET", "/api/v1/pods", "admin", ("system:masters", *AUTHN), "exempt", "exempt", ""),
        ("GET", "/readyz", "system:anonymous", ("system:unauthenticated",), "probes", "exempt", ""),
        ("GET", "/metrics", "alice", AUTHN, "global-default", "global-default", "alice"),
        ("PUT", f"{LEASES}/kube-system/leases/kube-scheduler", SCHED, AUTHN,
         "system-leader-election", "leader-election", SCHED),
        ("GET", f"{LEASES}/apps/leases/x", KUBE_SYSTEM_SA + "op", SA,
         "system-leader-election", "leader-election", KUBE_SYSTEM_SA + "op"),
        ("PUT", "/api/v1/namespaces/apps/endpoints/web", KUBE_SYSTEM_SA + "endpoint-controller", SA,
         "endpoint-controller", "workload-high", KUBE_SYSTEM_SA + "endpoint-controller"),
        ("PUT", "/api/v1/namespaces/apps/configmaps/lock", KUBE_SYSTEM_SA + "op", SA,
         "workload-leader-election", "leader-election", KUBE_SYSTEM_SA + "op"),
        ("PATCH", "/api/v1/nodes/n1/status", "system:node:n1", NODE, "system-node-high", "node-high", "system:node:n1"),
        ("PUT", f"{LEASES}/kube-node-lease/leases/n1", "system:node:n1", NODE,
         "system-node-high", "node-high", "system:node:n1"),
        ("GET", "/api/v1/pods", "system:node:n1", NODE, "system-nodes", "system", "system:node:n1"),
        ("GET", "/api/v1/namespaces/apps/pods", KCM, AUTHN, "kube-controller-manager", "workload-high", "apps"),
        ("POST", "/api/v1/namespaces/apps/pods/p/binding", SCHED, AUTHN, "kube-scheduler", "workload-high", "apps"),
        ("POST", "/api/v1/namespaces/apps/pods", KUBE_SYSTEM_SA + "replicaset-controller", SA,
         "kube-system-service-accounts", "workload-high", "apps"),
        ("GET", "/api/v1/namespaces/apps/pods", "system:serviceaccount:apps:bot",
         ("system:serviceaccounts", "system:serviceaccounts:apps", *AUTHN),
         "service-accounts", "workload-low", "system:serviceaccount:apps:bot"),
        ("GET", "/api/v1/namespaces/apps/pods", "bob", ("dev", *AUTHN), "global-default", "global-default", "bob"),
    ],
)
def test_classification_by_the_authenticated_user(
    method: str, path: str, user: str, groups: tuple[str, ...], schema: str, level: str, flow: str
) -> None:
    """The secure port: the same User-Agent (kubectl's) for all, the user decides."""
    verb = request_attributes(method, path, {}).verb
    c = classify_user(parse(method, path, "", KUBECTL, "127.0.0.1"), user, groups, verb)
    assert (c.flow_schema, c.priority_level, c.flow) == (schema, level, flow)


def test_request_info() -> None:
    a = parse("PUT", "/api/v1/namespaces/ns1/finalize", "", KUBECTL, "x")
    assert (a.namespace, a.resource, a.name, a.subresource) == (None, "namespaces", "ns1", "finalize")
    a = parse("PATCH", "/apis/apps/v1/namespaces/d/deployments/web/scale", "", KUBECTL, "x")
    assert (a.namespace, a.resource, a.name, a.subresource) == ("d", "deployments.apps", "web", "scale")
    a = parse("GET", "/api/v1/nodes", "", KUBECTL, "x")
    assert (a.namespace, a.resource, a.name) == (None, "nodes", None)


def test_flows_are_user_agent_and_address() -> None:
    a = classify(parse("GET", "/api/v1/pods", "", KUBECTL, "10.0.0.1"))
    b = classify(parse("GET", "/api/v1/pods", "", KUBECTL, "10.0.0.2"))
    assert a.flow != b.flow and a.priority_level == b.priority_level


def test_long_running_requests_take_no_seat() -> None:
    assert parse("GET", "/api/v1/pods", "watch=1&resourceVersion=5", KUBECTL, "x").long_running
    assert parse("GET", "/api/v1/namespaces/d/pods/p/log", "follow=true", KUBECTL, "x").long_running
    assert not parse("GET", "/api/v1/namespaces/d/pods/p/log", "", KUBECTL, "x").long_running
    assert not parse("GET", "/api/v1/pods", "watch=false", KUBECTL, "x").long_running


def test_work_estimate_and_seats() -> None:
    fc = FlowController(400, 200, CollectorRegistry(), count_objects=lambda key: 2000 if key == "pods" else 30)
    assert fc.levels["global-default"].limit == 50  # 600 seats * 20 shares / 240 shares
    assert fc.seats(parse("GET", "/api/v1/pods", "", KUBECTL, "x")) == MAX_SEATS
    assert fc.seats(parse("GET", "/api/v1/pods", "limit=250", KUBECTL, "x")) == 3
    assert fc.seats(parse("GET", "/api/v1/configmaps", "", KUBECTL, "x")) == 1
    assert fc.seats(parse("GET", "/api/v1/namespaces/d/pods/p", "", KUBECTL, "x")) == 1
    assert fc.seats(parse("POST", "/api/v1/namespaces/d/pods", "", KUBECTL, "x")) == 1


def test_hand_is_distinct_queues() -> None:
    level = FlowController(400, 200, CollectorRegistry()).levels["global-default"]
    for flow in ("a", "b", "kubectl@127.0.0.1", "x" * 50):
        hand = level.hand(flow)
        assert len(hand) == len(set(hand)) == level.config.hand_size
        assert all(0 <= q < level.config.queues for q in hand)
