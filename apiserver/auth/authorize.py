"""Authorization: `--authorization-mode`, a comma list tried in order until one decides.

- AlwaysAllow: every request is allowed (the default, and what mini-k8s did before RBAC).
- RBAC: allowed when a rule bound to the user, one of their groups or their ServiceAccount
  allows it (rbac.py); otherwise no opinion, and the next mode is asked.
- Node: kubelets (`system:node:<name>` in `system:nodes`) may do what a node needs for the pods
  bound to it, and no more (node_authorizer.py); no opinion on anyone else. `Node,RBAC` is
  kubeadm's default, and turns on the NodeRestriction admission plugin too.

`system:masters` is allowed everything before any mode is asked, as kube-apiserver's
privileged-group authorizer does, so an administrator cannot lock themselves out with RBAC.
A request no mode allows is refused with 403 and Kubernetes' message, e.g.
`pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"`,
followed by the reasons the modes gave, if any (`...: no relationship found between node 'n1' and
this object`).
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

from api import errors, registry
from apiserver.auth import rbac
from apiserver.auth.node_authorizer import NodeAuthorizer
from apiserver.auth.requestinfo import RequestAttributes
from apiserver.auth.user import MASTERS, UserInfo

if TYPE_CHECKING:
    from apiserver.server import APIServer
    from apiserver.watchcache import WatchCache

MODES = ("AlwaysAllow", "AlwaysDeny", "Node", "RBAC")
_GENERATION = attrgetter("generation")  # of a watch cache: moves with every change of its content


def parse_modes(text: str) -> tuple[str, ...]:
    modes = tuple(m.strip() for m in text.split(",") if m.strip())
    for mode in modes:
        if mode not in MODES:
            raise ValueError(f'authorization mode "{mode}" is not supported here (one of {", ".join(MODES)})')
    return modes or ("AlwaysAllow",)


def forbidden_message(user: UserInfo, attrs: RequestAttributes) -> str:
    if not attrs.resource_request:
        return f'User "{user.name}" cannot {attrs.verb} path "{attrs.path}"'
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    return (f'User "{user.name}" cannot {attrs.verb} resource "{attrs.resource_with_subresource}" '
            f'in API group "{attrs.api_group}" {where}')  # fmt: skip


def forbidden(user: UserInfo, attrs: RequestAttributes, reason: str = "") -> errors.ForbiddenError:
    message = forbidden_message(user, attrs) + (f": {reason}" if reason else "")
    if not attrs.resource_request:
        return errors.forbidden_error("", "", message)
    resource = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    err = errors.forbidden_error(resource, attrs.name, message)
    err.details = {"name": attrs.name, "group": attrs.api_group, "kind": attrs.resource}
    return err


class Authorizer:
    def __init__(self, server: APIServer, modes: tuple[str, ...]) -> None:
        self.server = server
        self.modes = modes
        self._index = rbac.Index()
        self._caches: list[WatchCache] = []
        self.node = NodeAuthorizer(server)

    @property
    def uses_rbac(self) -> bool:
        return "RBAC" in self.modes

    def index(self) -> rbac.Index:
        """The RBAC index, rebuilt when a Role, ClusterRole or binding changed since the last one."""
        if not self._caches:
            self._caches = [self.server.cache(registry.by_key(k)) for k in rbac.KINDS]  # type: ignore[arg-type]
        caches = self._caches
        revisions = tuple(map(_GENERATION, caches))  # per request: map + attrgetter, no generator frame
        if revisions != self._index.revisions:
            objects = {k: list(c.objects.values()) for k, c in zip(rbac.KINDS, caches, strict=True)}
            self._index = rbac.build_index(objects, revisions)
        return self._index

    @property
    def uses_node(self) -> bool:
        return "Node" in self.modes

    def decide(self, user: UserInfo, attrs: RequestAttributes) -> tuple[bool, str]:
        """(allowed, the reasons the modes gave for not allowing, one per line)."""
        if MASTERS in user.groups:
            return True, ""
        reasons: list[str] = []
        for mode in self.modes:
            if mode == "AlwaysAllow":
                return True, ""
            if mode == "AlwaysDeny":
                break
            if mode == "RBAC" and rbac.allows(self.index(), user, attrs):
                return True, ""
            if mode == "Node":
                allowed, reason = self.node.authorize(user, attrs)
                if allowed:
                    return True, ""
                if reason:
                    reasons.append(reason)
        return False, "\n".join(reasons)

    def allowed(self, user: UserInfo, attrs: RequestAttributes) -> bool:
        return self.decide(user, attrs)[0]

    def authorize(self, user: UserInfo, attrs: RequestAttributes) -> None:
        allowed, reason = self.decide(user, attrs)
        if not allowed:
            raise forbidden(user, attrs, reason)
