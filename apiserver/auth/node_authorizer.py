"""The Node authorizer (`--authorization-mode=Node`): what a kubelet may do, and no more.

A kubelet authenticates as `system:node:<nodeName>` in the group `system:nodes` (user.py's
node_identity). For anyone else this authorizer has no opinion, and the next mode decides. For a
node it allows what Kubernetes' bootstrap `NodeRules()` list (NODE_RULES), except where a rule
would let one node see or touch what belongs to another; those kinds are subdivided:

- secrets, configmaps: get/list/watch of one object (a list by `metadata.name`), and only when a
  pod bound to the node names it; persistentvolumeclaims and persistentvolumes: get, likewise
  (a volume through its `claimRef`); serviceaccounts: create `token`, only for an account a pod
  on the node runs as. The relations come from node_graph.py. A refusal says, as Kubernetes
  does, `no relationship found between node 'n1' and this object`.
- nodes: read only its own Node (a list must name it: `fieldSelector=metadata.name=n1`);
  pods: get its own pods, list/watch only with `fieldSelector=spec.nodeName=n1` — the
  AuthorizeNodeWithSelectors behaviour, on by default since Kubernetes 1.32.
- leases: only in `kube-node-lease`, only the one named after the node.

Writes the authorizer cannot judge from the request line alone (which node a pod is bound to,
which labels a Node gets) are allowed here and checked by the NodeRestriction admission plugin
(apiserver/admission/node_restriction.py), as in Kubernetes. The answer is (allowed, reason):
not allowed is "no opinion", and the reason ends the 403 message if no later mode allows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from api import registry
from apiserver.auth.node_graph import NodeGraph
from apiserver.auth.rbac_rules import Rule, rule_allows
from apiserver.auth.requestinfo import RequestAttributes
from apiserver.auth.user import UserInfo, node_identity

if TYPE_CHECKING:
    from apiserver.server import APIServer

Answer = tuple[bool, str]  # (allowed, reason); not allowed = no opinion
NODE_LEASE_NAMESPACE = "kube-node-lease"
NO = (False, "")
YES = (True, "")


def _rule(group: str, resources: list[str], verbs: list[str]) -> Rule:
    return {"apiGroups": [group], "resources": resources, "verbs": verbs}


# Kubernetes' bootstrappolicy.NodeRules() (the `system:node` ClusterRole), 1.32, default features
NODE_RULES: list[Rule] = [
    _rule("authentication.k8s.io", ["tokenreviews"], ["create"]),
    _rule("authorization.k8s.io", ["subjectaccessreviews", "localsubjectaccessreviews"], ["create"]),
    _rule("", ["services"], ["get", "list", "watch"]),
    _rule("", ["nodes"], ["create", "get", "list", "watch"]),
    _rule("", ["nodes/status"], ["update", "patch"]),
    _rule("", ["nodes"], ["update", "patch"]),
    _rule("", ["events"], ["create", "update", "patch"]),
    _rule("", ["pods"], ["get", "list", "watch"]),
    _rule("", ["pods"], ["create", "delete"]),
    _rule("", ["pods/status"], ["update", "patch"]),
    _rule("", ["pods/eviction"], ["create"]),
    _rule("", ["secrets", "configmaps"], ["get", "list", "watch"]),
    _rule("", ["persistentvolumeclaims", "persistentvolumes"], ["get"]),
    _rule("", ["endpoints"], ["get"]),
    _rule("certificates.k8s.io", ["certificatesigningrequests"], ["create", "get", "list", "watch"]),
    _rule("coordination.k8s.io", ["leases"], ["get", "create", "update", "patch", "delete"]),
    _rule("storage.k8s.io", ["volumeattachments"], ["get"]),
    _rule("", ["persistentvolumeclaims/status"], ["get", "update", "patch"]),
    _rule("", ["serviceaccounts/token"], ["create"]),
    _rule("storage.k8s.io", ["csidrivers"], ["get", "watch", "list"]),
    _rule("storage.k8s.io", ["csinodes"], ["get", "create", "update", "patch", "delete"]),
    _rule("node.k8s.io", ["runtimeclasses"], ["get", "list", "watch"]),
    # mini-k8s's own: the simulated runtime's usage model spreads a Service's load over its ready
    # Endpoints (kubelet/simusage.py) and watches them; Kubernetes' kubelet only ever gets one
    _rule("", ["endpoints"], ["list", "watch"]),
]


def no_relationship(node: str) -> Answer:
    return False, f"no relationship found between node '{node}' and this object"


def selects(field_selector: str, field: str, value: str) -> bool:
    """Does the selector require `field` to equal `value` (`=` or `==`)?"""
    for requirement in field_selector.split(","):
        key, eq, wanted = requirement.partition("=")
        if eq and key.strip() == field and wanted.removeprefix("=").strip() == value:
            return True
    return False


class NodeAuthorizer:
    def __init__(self, server: APIServer) -> None:
        self.server = server
        self._graph: NodeGraph | None = None
        self._subdivided: dict[tuple[str, str], Callable[[str, RequestAttributes], Answer]] = {
            ("", "secrets"): self._read_namespaced_object,
            ("", "configmaps"): self._read_namespaced_object,
            ("", "persistentvolumeclaims"): self._claim,
            ("", "persistentvolumes"): self._get,
            ("", "serviceaccounts"): self._create_token,
            ("coordination.k8s.io", "leases"): self._lease,
            ("", "nodes"): self._node,
            ("", "pods"): self._pod,
        }

    def graph(self) -> NodeGraph:
        if self._graph is None:
            pods = registry.by_key("pods")
            assert pods is not None
            self._graph = NodeGraph(self.server.cache(pods))
        return self._graph

    def authorize(self, user: UserInfo, attrs: RequestAttributes) -> Answer:
        node = node_identity(user)
        if node is None:
            return NO  # not a node: the next mode decides
        if not node:
            return False, f'unknown node for user "{user.name}"'
        if attrs.resource_request:
            subdivided = self._subdivided.get((attrs.api_group, attrs.resource))
            if subdivided is not None:
                return subdivided(node, attrs)
        return (True, "") if any(rule_allows(rule, attrs) for rule in NODE_RULES) else NO

    # -- the graph ------------------------------------------------------------------------------
    def _related(self, node: str, attrs: RequestAttributes) -> Answer:
        if not attrs.name:
            return False, "No Object name found"
        resource, namespace, name = attrs.resource, attrs.namespace, attrs.name
        if resource == "persistentvolumes":  # pv → its claim → a pod on the node
            rt = registry.by_key("persistentvolumes")
            assert rt is not None
            pv = self.server.cache(rt).peek(self.server.store(rt).key(None, name)) or {}
            claim = (pv.get("spec") or {}).get("claimRef") or {}
            resource, namespace, name = "persistentvolumeclaims", claim.get("namespace") or "", claim.get("name") or ""
            if not name:
                return no_relationship(node)
        return YES if self.graph().has_edge(node, (resource, namespace, name)) else no_relationship(node)

    def _read_namespaced_object(self, node: str, attrs: RequestAttributes) -> Answer:
        if attrs.verb not in ("get", "list", "watch"):
            return False, "can only read resources of this type"
        if attrs.subresource:
            return False, "cannot read subresource"
        if not attrs.namespace:
            return False, "can only read namespaced object of this type"
        return self._related(node, attrs)

    def _get(self, node: str, attrs: RequestAttributes) -> Answer:
        if attrs.verb != "get":
            return False, "can only get individual resources of this type"
        if attrs.subresource:
            return False, "cannot get subresource"
        return self._related(node, attrs)

    def _claim(self, node: str, attrs: RequestAttributes) -> Answer:
        if attrs.subresource != "status":
            return self._get(node, attrs)
        if attrs.verb not in ("update", "patch"):
            return False, "can only get/update/patch this type"
        return self._related(node, attrs)

    def _create_token(self, node: str, attrs: RequestAttributes) -> Answer:
        if attrs.verb != "create" or not attrs.name:
            return False, "can only create tokens for individual service accounts"
        if attrs.subresource != "token":
            return False, "can only create token subresource of serviceaccount"
        return self._related(node, attrs)

    # -- by name --------------------------------------------------------------------------------
    def _lease(self, node: str, attrs: RequestAttributes) -> Answer:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return False, "can only get, create, update, patch, or delete a node lease"
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            return False, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
        if attrs.verb != "create" and attrs.name != node:  # a create's name is in its body: admission
            return False, "can only access node lease with the same name as the requesting node"
        return YES

    def _node(self, node: str, attrs: RequestAttributes) -> Answer:
        if not attrs.subresource and attrs.verb in ("create", "update", "patch"):
            return YES  # NodeRestriction: only its own Node
        if not attrs.subresource and attrs.verb in ("get", "list", "watch"):
            if attrs.name == node:
                return YES
            if not attrs.name:
                return False, f"node '{node}' cannot read all nodes, only its own Node object"
            return False, f"node '{node}' cannot read '{attrs.name}', only its own Node object"
        if attrs.subresource == "status" and attrs.verb in ("update", "patch"):
            return YES  # NodeRestriction: only its own status
        return NO

    def _pod(self, node: str, attrs: RequestAttributes) -> Answer:
        if not attrs.subresource:
            if attrs.verb == "get":
                return self._get(node, attrs)
            if attrs.verb in ("list", "watch"):
                if selects(attrs.field_selector, "spec.nodeName", node):
                    return YES
                if attrs.name:
                    return self._related(node, attrs)
                return False, "can only list/watch pods with spec.nodeName field selector"
            if attrs.verb in ("create", "delete"):
                return YES  # mirror pods; NodeRestriction: only bound to itself
        if attrs.subresource == "status" and attrs.verb in ("update", "patch"):
            return YES  # NodeRestriction: only pods bound to itself
        if attrs.subresource == "eviction" and attrs.verb == "create":
            return YES  # NodeRestriction: only pods bound to itself
        return NO
