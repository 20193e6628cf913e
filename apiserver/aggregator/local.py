"""The Local APIServices: one per built-in group/version, as kube-apiserver registers them.

`kubectl get apiservices` on Kubernetes lists every built-in group/version as served by
"Local", next to the aggregated ones; the priorities order groups in discovery (kube-aggregator's
table; a group it does not list gets min(table) - 100 and version priority 9, its own rule for
newcomers). They are created at start when missing and labelled as kube-apiserver labels them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from api import registry
from apiserver.aggregator.table import API_SERVICES
from apiserver.handlers.discovery import REVIEW_RESOURCES

if TYPE_CHECKING:
    from apiserver.server import APIServer

# (group, version) -> (groupPriorityMinimum, versionPriority)
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v1"): (17500, 15),
    ("batch", "v1"): (17400, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
}
_NEWCOMER = (min(g for g, _ in PRIORITIES.values()) - 100, 9)


def built_in_group_versions() -> list[tuple[str, str]]:
    seen = [(group, version) for group, versions in registry.groups() for version in versions]
    seen += [(group, "v1") for group in REVIEW_RESOURCES]
    return list(dict.fromkeys(seen))


def local_api_service(group: str, version: str) -> dict[str, Any]:
    group_priority, version_priority = PRIORITIES.get((group, version), _NEWCOMER)
    return {
        "metadata": {"name": f"{version}.{group}", "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"}},
        "spec": {"group": group, "version": version, "groupPriorityMinimum": group_priority,
                 "versionPriority": version_priority},
    }  # fmt: skip


async def register_local(server: APIServer) -> None:
    for group, version in built_in_group_versions():
        await server.ensure(API_SERVICES, None, local_api_service(group, version))
