"""Discovery: how kubectl learns which resources exist, built from the kind registry.

kubectl 1.32 first asks for *aggregated* discovery (one document for everything). We answer the
older per-group documents instead, always as plain `application/json`, and kubectl falls back to
them: /api (APIVersions), /apis (APIGroupList), /api/v1 and /apis/<group>/<version>
(APIResourceList). `/version` says 1.32 because the kubectl dispatcher picks its binary by it.
The OpenAPI documents (/openapi/v2, /openapi/v3) are generated from the models: apiserver/openapi/.
"""

from __future__ import annotations

from typing import Any

from fastapi import Response

from api import registry
from apiserver.handlers.common import json_response

# The review APIs (apiserver/auth/reviews.py): (plural, kind, namespaced), create only.
REVIEW_RESOURCES = {
    "authentication.k8s.io": [("selfsubjectreviews", "SelfSubjectReview", False)],
    "authorization.k8s.io": [
        ("localsubjectaccessreviews", "LocalSubjectAccessReview", True),
        ("selfsubjectaccessreviews", "SelfSubjectAccessReview", False),
        ("selfsubjectrulesreviews", "SelfSubjectRulesReview", False),
        ("subjectaccessreviews", "SubjectAccessReview", False),
    ],
}

VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-mini-k8s",
    "gitCommit": "",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "python",
    "compiler": "cpython",
    "platform": "linux/amd64",
}


def version() -> Response:
    return json_response(VERSION)


def api_versions(server_address: str) -> Response:
    return json_response(
        {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
        }
    )


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    vs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": vs, "preferredVersion": vs[0]}


Groups = list[tuple[str, list[str]]]


def _all_groups(remote: Groups) -> Groups:
    """The registry's groups, the review groups (apiserver/auth/reviews.py), which store nothing,
    and the groups other servers serve through the aggregation layer (apiserver/aggregator/)."""
    local = [*((g, list(vs)) for g, vs in registry.groups() if g), *((g, ["v1"]) for g in REVIEW_RESOURCES)]
    names = {g for g, _ in local}
    return local + [(g, vs) for g, vs in remote if g not in names]


def api_group_list(remote: Groups | None = None) -> Response:
    groups = [_group(g, vs) for g, vs in _all_groups(remote or [])]
    return json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})


def api_group(group: str, remote: Groups | None = None) -> Response | None:
    for g, vs in _all_groups(remote or []):
        if g == group:
            return json_response({"kind": "APIGroup", "apiVersion": "v1", **_group(g, vs)})
    return None


def api_resource_list(group: str, version: str) -> Response | None:
    resources: list[dict[str, Any]] = []
    if group in REVIEW_RESOURCES and version == "v1":
        resources = [{"name": plural, "singularName": plural[:-1], "namespaced": namespaced, "kind": kind,
                      "verbs": ["create"]} for plural, kind, namespaced in REVIEW_RESOURCES[group]]  # fmt: skip
    for rt in registry.resources_in(group, version):
        entry: dict[str, Any] = {
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": list(rt.verbs),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        resources.append(entry)
        for name in rt.subresources:
            sub = registry.subresource(rt, name)
            assert sub is not None
            sub_entry: dict[str, Any] = {
                "name": f"{rt.plural}/{name}",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": sub.kind,
                "verbs": list(sub.verbs),
            }
            if (sub.group, sub.version) != (rt.group, rt.version):
                sub_entry.update({"group": sub.group, "version": sub.version})
            resources.append(sub_entry)
    if not resources:
        return None
    gv = version if not group else f"{group}/{version}"
    return json_response({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
