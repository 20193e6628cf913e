"""Admission: the plugins every write passes through after validation of its shape, in order.

In Kubernetes, admission is where cluster policy lives — things no single object can know about:
does the namespace exist? what service account should a pod run as? how long should a pod stay on
an unreachable node? Each plugin here is one such rule, in its own file, run in the order of
DESIGN §4: NamespaceLifecycle, ServiceAccount, NodeRestriction (only with the Node authorizer:
a kubelet writes only what is its own node's), LimitRanger, DefaultTolerationSeconds, then
DefaultStorageClass and StorageObjectInUseProtection. A plugin may mutate the object (`admit`) or
refuse it (raise a Status error); the chain runs them all and stops at the first refusal.

Validating plugins (`validate`) run after the object passed validation, just before it is
stored, as Kubernetes' validating admission does: ResourceQuota charges a quota there, so an
object that would have failed validation never costs anything. `dry_run` says the write will
not happen: such plugins check and change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from api.registry import ResourceType

if TYPE_CHECKING:
    from apiserver.server import APIServer


@dataclass
class Attributes:
    operation: str  # CREATE | UPDATE | DELETE
    rt: ResourceType
    namespace: str | None
    name: str
    obj: dict[str, Any] | None
    old: dict[str, Any] | None = None
    subresource: str | None = None
    dry_run: bool = False


class Plugin(Protocol):
    name: str

    async def admit(self, attrs: Attributes) -> None: ...


class ValidatingPlugin(Protocol):
    name: str

    async def validate(self, attrs: Attributes) -> None: ...


class AdmissionChain:
    def __init__(self, plugins: list[Plugin], validators: list[ValidatingPlugin] | None = None) -> None:
        self.plugins = plugins
        self.validators = validators or []

    async def admit(self, attrs: Attributes) -> None:
        for p in self.plugins:
            await p.admit(attrs)

    async def validate(self, attrs: Attributes) -> None:
        for v in self.validators:
            await v.validate(attrs)


def default_chain(server: APIServer) -> AdmissionChain:
    from apiserver.admission.default_storage_class import DefaultStorageClass
    from apiserver.admission.default_tolerations import DefaultTolerationSeconds
    from apiserver.admission.limit_ranger import LimitRanger
    from apiserver.admission.namespace_lifecycle import NamespaceLifecycle
    from apiserver.admission.node_restriction import NodeRestriction
    from apiserver.admission.rbac_escalation import RBACEscalation
    from apiserver.admission.resource_quota import ResourceQuota
    from apiserver.admission.service_account import ServiceAccount
    from apiserver.admission.storage_protection import StorageObjectInUseProtection

    modes = [m.strip() for m in server.config.authorization_mode.split(",")]
    node_restriction: list[Plugin] = [NodeRestriction(server)] if "Node" in modes else []
    return AdmissionChain(
        [
            NamespaceLifecycle(server),
            ServiceAccount(server),
            *node_restriction,
            limit_ranger := LimitRanger(server),
            DefaultTolerationSeconds(
                server.config.default_not_ready_toleration_seconds, server.config.default_unreachable_toleration_seconds
            ),
            DefaultStorageClass(server),
            StorageObjectInUseProtection(),
        ],
        [limit_ranger, RBACEscalation(server), ResourceQuota(server)],
    )
