"""NodeRestriction: a kubelet writes only what belongs to its own node.

The Node authorizer (apiserver/auth/node_authorizer.py) lets every node update nodes, pods'
status, leases and so on, because the request line alone does not say whose they are: which node
a pod is bound to, which name a Lease being created has, which labels a Node is given are in the
objects. This plugin, on whenever `--authorization-mode` includes Node (as kubeadm runs it), reads
them. For a user `system:node:<name>` in `system:nodes`:

- nodes: create, update, patch, delete only its own Node; never change its own taints (it could
  pull in workloads that tolerate nothing), nor set labels under `node-restriction.kubernetes.io/`,
  nor `kubernetes.io`/`k8s.io` labels other than the ones kubelets set themselves (hostname,
  os, arch, zone, instance type, `kubelet.kubernetes.io/`, `node.kubernetes.io/`);
- pods: create only mirror pods bound to itself and owned by its Node, naming no service account,
  secret, configmap or claim; delete, update the status of, and evict only pods bound to itself;
- leases: only in `kube-node-lease`, only the one named after the node;
- serviceaccounts/token: only bound to a pod (with its uid) scheduled on the node;
- persistentvolumeclaims: only `status.capacity` and `status.conditions` through `/status`.

Refusals are Kubernetes' 403s, word for word: `nodes "n2" is forbidden: node "n1" is not allowed
to modify node "n2"`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from api import errors, registry
from api.errors import go_quote
from apiserver.admission import Attributes
from apiserver.admission.service_account import MIRROR_ANNOTATION
from apiserver.auth.context import current_user
from apiserver.auth.node_authorizer import NODE_LEASE_NAMESPACE
from apiserver.auth.pod_references import pod_references
from apiserver.auth.user import node_identity

if TYPE_CHECKING:
    from apiserver.server import APIServer

Obj = dict[str, Any]
NODE_RESTRICTION_LABELS = "node-restriction.kubernetes.io"
# k8s.io/kubelet's KubeletLabels and KubeletLabelNamespaces: what a kubelet may set on its Node
KUBELET_LABELS = {
    "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type", "kubernetes.io/os", "kubernetes.io/arch",
    "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
}  # fmt: skip
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def _in_namespace(key: str, *namespaces: str) -> bool:
    prefix, slash, _ = key.partition("/")
    return bool(slash) and any(prefix == ns or prefix.endswith("." + ns) for ns in namespaces)


def forbidden_labels(new: dict[str, str], old: dict[str, str]) -> list[str]:
    """The added, removed or changed label keys a node may not set on itself, sorted."""
    modified = {k for k in new.keys() | old.keys() if new.get(k) != old.get(k)}  # a missing key reads None
    refused = set()
    for key in modified:
        if _in_namespace(key, NODE_RESTRICTION_LABELS):
            refused.add(key)
        kubelet_label = key in KUBELET_LABELS or _in_namespace(key, *KUBELET_LABEL_NAMESPACES)
        if _in_namespace(key, "kubernetes.io", "k8s.io") and not kubelet_label:
            refused.add(key)
    return sorted(refused)


def _labels(obj: Obj | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def _spec(obj: Obj | None) -> Obj:
    return dict((obj or {}).get("spec") or {})


def _node_name(pod: Obj | None) -> str:
    return _spec(pod).get("nodeName") or ""


class NodeRestriction:
    name = "NodeRestriction"

    def __init__(self, server: APIServer) -> None:
        self.server = server

    async def admit(self, attrs: Attributes) -> None:
        user = current_user()
        node = node_identity(user)
        if node is None:
            return  # our job is just to restrict nodes
        if not node:
            raise self._forbidden(attrs, f"could not determine node from user {go_quote(user.name)}")
        check = {
            "pods": self._pod, "nodes": self._node, "persistentvolumeclaims": self._claim,
            "serviceaccounts": self._service_account, "leases.coordination.k8s.io": self._lease,
        }.get(attrs.rt.key)  # fmt: skip
        if check is not None:
            await check(node, attrs)

    @staticmethod
    def _forbidden(attrs: Attributes, reason: str) -> errors.ForbiddenError:
        name = attrs.name or ((attrs.obj or {}).get("metadata") or {}).get("name") or ""
        return errors.forbidden_error(attrs.rt.key, name, reason)

    async def _get(self, key: str, namespace: str | None, name: str) -> Obj:
        rt = registry.by_key(key)
        assert rt is not None
        return await self.server.store(rt).get(namespace, name)  # NotFound is the answer, as in Kubernetes

    # -- pods -----------------------------------------------------------------------------------
    async def _pod(self, node: str, attrs: Attributes) -> None:
        q, op = go_quote(node), attrs.operation
        if not attrs.subresource:
            if op == "CREATE":
                await self._mirror_pod(node, attrs)
            elif op != "DELETE":
                raise self._forbidden(attrs, f"unexpected operation {go_quote(op)}, node {q} can only create and "
                                             "delete mirror pods")  # fmt: skip
            elif _node_name(attrs.old) != node:
                raise self._forbidden(attrs, f"node {q} can only delete pods with spec.nodeName set to itself")
        elif attrs.subresource == "status":
            if op != "UPDATE":
                raise self._forbidden(attrs, f"unexpected operation {go_quote(op)}")
            if _node_name(attrs.old) != node:
                raise self._forbidden(attrs, f"node {q} can only update pod status for pods with spec.nodeName set "
                                             "to itself")  # fmt: skip
            if _labels(attrs.old) != _labels(attrs.obj):
                raise self._forbidden(attrs, f"node {q} cannot update labels through pod status")
        elif attrs.subresource == "eviction":
            if op != "CREATE":
                raise self._forbidden(attrs, f"unexpected operation {op}")
            if _node_name(await self._get("pods", attrs.namespace, attrs.name)) != node:
                raise self._forbidden(attrs, f"node {node} can only evict pods with spec.nodeName set to itself")
        else:
            raise self._forbidden(attrs, f"unexpected pod subresource {go_quote(attrs.subresource)}, only 'status' "
                                         "and 'eviction' are allowed")  # fmt: skip

    async def _mirror_pod(self, node: str, attrs: Attributes) -> None:
        pod, q = attrs.obj or {}, go_quote(node)
        if MIRROR_ANNOTATION not in ((pod.get("metadata") or {}).get("annotations") or {}):
            raise self._forbidden(attrs, f"pod does not have {go_quote(MIRROR_ANNOTATION)} annotation, node {q} can "
                                         "only create mirror pods")  # fmt: skip
        if _node_name(pod) != node:
            raise self._forbidden(attrs, f"node {q} can only create pods with spec.nodeName set to itself")
        owners = (pod.get("metadata") or {}).get("ownerReferences") or []
        if len(owners) != 1:
            which = "a single owner reference" if owners else "an owner reference"
            raise self._forbidden(attrs, f"node {q} can only create pods with {which} set to itself")
        owner = owners[0]
        if (owner.get("apiVersion"), owner.get("kind"), owner.get("name")) != ("v1", "Node", node):
            raise self._forbidden(attrs, f"node {q} can only create pods with an owner reference set to itself")
        if owner.get("controller") is not True:
            raise self._forbidden(attrs, f"node {q} can only create pods with a controller owner reference set to "
                                         "itself")  # fmt: skip
        if owner.get("blockOwnerDeletion") is True:
            raise self._forbidden(attrs, f"node {q} must not set blockOwnerDeletion on an owner reference")
        node_uid = (await self._get("nodes", None, node))["metadata"].get("uid")
        if owner.get("uid") != node_uid:
            raise self._forbidden(attrs, f"node {node} UID mismatch: expected {owner.get('uid')} got {node_uid}")
        refs = pod_references(pod)
        for what, named in (("a service account", refs.serviceaccount), ("secrets", refs.secrets),
                            ("configmaps", refs.configmaps)):  # fmt: skip
            if named:
                raise self._forbidden(attrs, f"node {q} can not create pods that reference {what}")
        volumes = _spec(pod).get("volumes") or []
        if any(s.get("clusterTrustBundle") for v in volumes for s in (v.get("projected") or {}).get("sources") or []):
            raise self._forbidden(attrs, f"node {q} can not create pods that reference clustertrustbundles")
        if any(v.get("persistentVolumeClaim") is not None for v in volumes):
            raise self._forbidden(attrs, f"node {q} can not create pods that reference persistentvolumeclaims")

    # -- nodes ----------------------------------------------------------------------------------
    async def _node(self, node: str, attrs: Attributes) -> None:
        q = go_quote(node)
        if attrs.name != node:
            raise self._forbidden(attrs, f"node {q} is not allowed to modify node {go_quote(attrs.name)}")
        new, old = _spec(attrs.obj), _spec(attrs.old)
        if attrs.operation == "CREATE":
            if new.get("configSource") is not None:
                raise self._forbidden(attrs, f"node {q} is not allowed to create pods with a non-nil configSource")
            if refused := forbidden_labels(_labels(attrs.obj), {}):
                raise self._forbidden(attrs, f"node {q} is not allowed to set the following labels: "
                                             + ", ".join(refused))  # fmt: skip
        if attrs.operation == "UPDATE":
            if new.get("configSource") is not None and new.get("configSource") != old.get("configSource"):
                raise self._forbidden(attrs, f"node {q} is not allowed to update configSource to a new non-nil "
                                             "configSource")  # fmt: skip
            if (new.get("taints") or []) != (old.get("taints") or []):
                raise self._forbidden(attrs, f"node {q} is not allowed to modify taints")
            if refused := forbidden_labels(_labels(attrs.obj), _labels(attrs.old)):
                raise self._forbidden(attrs, "is not allowed to modify labels: " + ", ".join(refused))

    # -- leases, tokens, claims -----------------------------------------------------------------
    async def _lease(self, node: str, attrs: Attributes) -> None:
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            raise self._forbidden(attrs, f"can only access leases in the {go_quote(NODE_LEASE_NAMESPACE)} system "
                                         "namespace")  # fmt: skip
        if attrs.name != node:  # on create, the name in the Lease itself
            raise self._forbidden(attrs, "can only access node lease with the same name as the requesting node")

    async def _service_account(self, node: str, attrs: Attributes) -> None:
        if attrs.operation != "CREATE" or attrs.subresource != "token":
            return
        ref = _spec(attrs.obj).get("boundObjectRef") or {}
        if ref.get("apiVersion") != "v1" or ref.get("kind") != "Pod" or not ref.get("name"):
            raise self._forbidden(attrs, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise self._forbidden(attrs, "node requested token with a pod binding without a uid")
        pod = await self._get("pods", attrs.namespace, ref["name"])
        if ref["uid"] != pod["metadata"].get("uid"):
            raise self._forbidden(attrs, f"the UID in the bound object reference ({ref['uid']}) does not match "
                                         "the UID in record. The object might have been deleted and then "
                                         "recreated")  # fmt: skip
        if _node_name(pod) != node:
            raise self._forbidden(attrs, "node requested token bound to a pod scheduled on a different node")

    async def _claim(self, node: str, attrs: Attributes) -> None:
        if attrs.subresource != "status":
            raise self._forbidden(attrs, "may only update PVC status")
        if attrs.operation != "UPDATE":
            raise self._forbidden(attrs, f"unexpected operation {go_quote(attrs.operation)}")
        changed = _claim_changes(attrs.old or {}, attrs.obj or {})
        if changed:
            raise self._forbidden(attrs, f"node {go_quote(node)} is not allowed to update fields other than "
                                         f"status.capacity and status.conditions: {', '.join(changed)}")  # fmt: skip


_CLAIM_STATUS_FIELDS = ("capacity", "conditions", "allocatedResourceStatuses", "allocatedResources")


def _claim_changes(old: Obj, new: Obj) -> list[str]:
    """The fields, other than the ones a kubelet reports, that differ between two claims."""

    def comparable(claim: Obj) -> Obj:
        md = {k: v for k, v in (claim.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")}
        status = {k: v for k, v in (claim.get("status") or {}).items() if k not in _CLAIM_STATUS_FIELDS}
        return {**claim, "metadata": md, "status": status}

    a, b = comparable(old), comparable(new)
    changed: list[str] = []
    for top in sorted(a.keys() | b.keys()):
        x, y = a.get(top), b.get(top)
        if x == y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            changed += [f"{top}.{k}" for k in sorted(x.keys() | y.keys()) if x.get(k) != y.get(k)]
        else:
            changed.append(top)
    return changed
