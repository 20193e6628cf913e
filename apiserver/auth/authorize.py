"""Authorization: `--authorization-mode`, a comma list tried in order until one decides.

- AlwaysAllow: every request is allowed (the default, and what mini-k8s did before RBAC).
- RBAC: allowed when a rule bound to the user, one of their groups or their ServiceAccount
  allows it (rbac.py); otherwise no opinion, and the next mode is asked.

`system:masters` is allowed everything before any mode is asked, as kube-apiserver's
privileged-group authorizer does, so an administrator cannot lock themselves out with RBAC.
A request no mode allows is refused with 403 and Kubernetes' message, e.g.
`pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from api import errors, registry
from apiserver.auth import rbac
from apiserver.auth.requestinfo import RequestAttributes
from apiserver.auth.user import MASTERS, UserInfo

if TYPE_CHECKING:
    from apiserver.server import APIServer
    from apiserver.watchcache import WatchCache

MODES = ("AlwaysAllow", "AlwaysDeny", "RBAC")


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


def forbidden(user: UserInfo, attrs: RequestAttributes) -> errors.ForbiddenError:
    if not attrs.resource_request:
        return errors.forbidden_error("", "", forbidden_message(user, attrs))
    resource = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    err = errors.forbidden_error(resource, attrs.name, forbidden_message(user, attrs))
    err.details = {"name": attrs.name, "group": attrs.api_group, "kind": attrs.resource}
    return err


class Authorizer:
    def __init__(self, server: APIServer, modes: tuple[str, ...]) -> None:
        self.server = server
        self.modes = modes
        self._index = rbac.Index()
        self._caches: list[WatchCache] = []

    @property
    def uses_rbac(self) -> bool:
        return "RBAC" in self.modes

    def index(self) -> rbac.Index:
        """The RBAC index, rebuilt when a Role, ClusterRole or binding changed since the last one."""
        if not self._caches:
            self._caches = [self.server.cache(registry.by_key(k)) for k in rbac.KINDS]  # type: ignore[arg-type]
        caches = self._caches
        revisions = tuple(c.revision for c in caches)
        if revisions != self._index.revisions:
            objects = {k: list(c.objects.values()) for k, c in zip(rbac.KINDS, caches, strict=True)}
            self._index = rbac.build_index(objects, revisions)
        return self._index

    def allowed(self, user: UserInfo, attrs: RequestAttributes) -> bool:
        if MASTERS in user.groups:
            return True
        for mode in self.modes:
            if mode == "AlwaysAllow":
                return True
            if mode == "AlwaysDeny":
                return False
            if mode == "RBAC" and rbac.allows(self.index(), user, attrs):
                return True
        return False

    def authorize(self, user: UserInfo, attrs: RequestAttributes) -> None:
        if not self.allowed(user, attrs):
            raise forbidden(user, attrs)
