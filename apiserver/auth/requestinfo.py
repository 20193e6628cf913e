"""What a request asks to do, in the terms authorization speaks: Kubernetes' RequestInfo.

    GET    /api/v1/namespaces/default/pods           list pods in default
    GET    /api/v1/namespaces/default/pods?watch=1   watch pods in default
    GET    /api/v1/namespaces/default/pods/web/log   get pods/log "web" in default
    DELETE /apis/apps/v1/namespaces/x/deployments    deletecollection deployments.apps in x
    GET    /api/v1/namespaces/x                      get namespaces "x" (namespace x too)
    GET    /healthz, /apis, /openapi/v3              a non-resource request: verb get, the path

A path of the API with no resource after its group/version (discovery) is a non-resource path.
"""

from __future__ import annotations

from dataclasses import dataclass

_WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}
_NAMESPACE_SUBRESOURCES = {"status", "finalize"}


@dataclass(frozen=True)
class RequestAttributes:
    verb: str
    path: str
    resource_request: bool = False
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    field_selector: str = ""  # of a list, watch or deletecollection (the Node authorizer reads it)

    @property
    def resource_with_subresource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def _truthy(query: dict[str, str], key: str) -> bool:
    return query.get(key, "").lower() in ("1", "true")


def request_attributes(method: str, path: str, query: dict[str, str]) -> RequestAttributes:
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        rest = []
    if not rest:
        return RequestAttributes(verb=method.lower(), path=path)
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 2:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 else ""
    if method == "GET":
        verb = "watch" if _truthy(query, "watch") else ("get" if name else "list")
        if not name and query.get("fieldSelector", "").startswith("metadata.name="):
            name = query["fieldSelector"][len("metadata.name="):]  # a list of one: resourceNames apply
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = _WRITE_VERBS.get(method, method.lower())
    selector = query.get("fieldSelector", "") if verb in ("list", "watch", "deletecollection") else ""
    return RequestAttributes(verb, path, True, group, version, resource, subresource, namespace, name, selector)
