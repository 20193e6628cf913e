"""Which group/versions other servers serve, read from the APIService watch cache.

A group/version this server serves itself is never proxied, whatever an APIService says: the
built-in groups stay built in. Everything here reads the in-memory cache, no storage round
trip, because `dispatch` asks on every request under /apis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from api import registry

if TYPE_CHECKING:
    from apiserver.server import APIServer

Obj = dict[str, Any]
API_SERVICES = registry.by_key("apiservices.apiregistration.k8s.io")
assert API_SERVICES is not None


def _local(group: str, version: str) -> bool:
    return any(rt.group == group and rt.version == version for rt in registry.resources_in(group, version))


def remote_services(server: APIServer) -> list[Obj]:
    """APIServices with a backing Service, for groups not built in."""
    out = []
    for obj in server.cache(API_SERVICES).objects.values():
        spec = obj.get("spec") or {}
        if isinstance(spec.get("service"), dict) and not _local(spec.get("group", ""), spec.get("version", "")):
            out.append(obj)
    return out


def backend_for(server: APIServer, group: str, version: str) -> Obj | None:
    """The APIService that serves /apis/<group>/<version>, or None when no other server does."""
    if not group:
        return None
    for obj in remote_services(server):
        spec = obj["spec"]
        if spec.get("group") == group and spec.get("version") == version:
            return obj
    return None


def remote_groups(server: APIServer) -> list[tuple[str, list[str]]]:
    """Groups for /apis, versions ordered by versionPriority (highest first, then by name), and
    groups by their highest groupPriorityMinimum, as kube-aggregator orders discovery."""
    by_group: dict[str, list[tuple[int, str]]] = {}
    priority: dict[str, int] = {}
    for obj in remote_services(server):
        spec = obj["spec"]
        group, version = spec["group"], spec["version"]
        by_group.setdefault(group, []).append((-int(spec.get("versionPriority") or 0), version))
        priority[group] = max(priority.get(group, 0), int(spec.get("groupPriorityMinimum") or 0))
    ordered = sorted(by_group, key=lambda g: (-priority[g], g))
    return [(g, [v for _, v in sorted(by_group[g])]) for g in ordered]
