"""Turning a URL into "which resource, which namespace, which object, which subresource".

Kubernetes paths look like
    /api/v1/namespaces/default/pods/nginx/status
    /apis/apps/v1/namespaces/default/deployments
    /api/v1/nodes/node-1
and the kind registry (api.registry) is the single source for which plurals exist, in which
group/version, and whether they are namespaced. This is kube-apiserver's RequestInfo, small.
"""

from __future__ import annotations

from dataclasses import dataclass

from api import errors, registry
from api.registry import ResourceType


@dataclass(frozen=True)
class RequestInfo:
    rt: ResourceType
    namespace: str | None  # None: cluster-scoped, or a namespaced list across all namespaces
    name: str | None
    subresource: str | None

    @property
    def is_collection(self) -> bool:
        return self.name is None


def _find(group: str, version: str, plural: str) -> ResourceType | None:
    return registry.lookup(group, version, plural)


def resolve(group: str, version: str, segments: list[str]) -> RequestInfo:
    """Parse the part of the path after /api/v1 or /apis/<group>/<version>."""
    if not segments:
        raise errors.not_found_path()
    if segments[0] == "namespaces" and len(segments) >= 3:
        rt = _find(group, version, segments[2])
        if rt is not None and rt.namespaced:
            ns = segments[1]
            rest = segments[3:]
            if len(rest) > 2:
                raise errors.not_found_path()
            name = rest[0] if rest else None
            sub = rest[1] if len(rest) == 2 else None
            return _checked(RequestInfo(rt, ns, name, sub))
    rt = _find(group, version, segments[0])
    if rt is None or len(segments) > 3:
        raise errors.not_found_path()
    name = segments[1] if len(segments) >= 2 else None
    sub = segments[2] if len(segments) == 3 else None
    if rt.namespaced and name is not None:
        raise errors.not_found_path()  # a namespaced object is only addressable under /namespaces/<ns>/
    return _checked(RequestInfo(rt, None, name, sub))


def _checked(info: RequestInfo) -> RequestInfo:
    if info.subresource is not None and info.subresource not in info.rt.subresources:
        raise errors.not_found_path()
    if info.name == "":
        raise errors.not_found_path()
    return info
