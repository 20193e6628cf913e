"""The published documents: /openapi/v2 (one Swagger 2.0 document) and /openapi/v3 (one
OpenAPI 3.0 document per group/version, plus an index of them).

    GET /openapi/v3            {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=4A7B..."},
                                          "apis/apps/v1": {...}, ...}}
    GET /openapi/v3/api/v1     {"openapi": "3.0.0", "paths": {...}, "components": {"schemas": {...}}}
    GET /openapi/v2            {"swagger": "2.0", "paths": {...}, "definitions": {...}}

kubectl 1.32 reads v3 (explain, apply's patch, the field-validation check) and falls back to v2
only when v3 fails. Each group/version document holds the definitions its kinds reach, so kubectl
downloads and parses only what it needs; the hash in the index is the SHA-512 of the document,
so a client may cache a document for as long as the index names the same hash.

Cost: nothing at start-up. The documents are built on first request (a few hundred ms, in a worker
thread) and then served from memory as ready bytes with an ETag; the models cannot change while
the server runs.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from api import registry
from api.models import meta
from api.registry import ResourceType
from apiserver.openapi import generic
from apiserver.openapi.definitions import SchemaBuilder
from apiserver.openapi.paths import CONNECT_SUBRESOURCES, resource_paths
from apiserver.openapi.swagger2 import swagger2

INFO = {"title": "Kubernetes (mini-k8s)", "version": "v1.32.0"}


@dataclass(frozen=True)
class Document:
    body: bytes
    hash: str  # upper-case hex SHA-512 of body

    @property
    def etag(self) -> str:
        return f'"{self.hash}"'


@dataclass(frozen=True)
class Documents:
    v2: Document
    v3: dict[str, Document]  # "api/v1", "apis/apps/v1", ...

    def v3_index(self) -> dict[str, Any]:
        return {"paths": {key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={doc.hash}"}
                          for key, doc in self.v3.items()}}


def _document(obj: dict[str, Any]) -> Document:
    body = json.dumps(obj, separators=(",", ":"), sort_keys=False).encode()
    return Document(body, hashlib.sha512(body).hexdigest().upper())


def _gv_key(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "version": version}


class _GroupVersion:
    """The paths and definitions of one group/version."""

    def __init__(self, group: str, version: str) -> None:
        self.group, self.version = group, version
        self.builder = SchemaBuilder()
        self.paths: dict[str, Any] = {}
        self.gvks: dict[str, list[dict[str, str]]] = {}

    def add(self, rt: ResourceType) -> None:
        model = self._root(rt.model, _gvk(rt.group, rt.version, rt.kind))
        list_model = self._root(rt.list_model, _gvk(rt.group, rt.version, rt.list_kind)) if rt.list_model else model
        subs: dict[str, str] = {}
        for name in rt.subresources:
            sub = registry.subresource(rt, name)
            if sub is None or name in CONNECT_SUBRESOURCES:
                subs[name] = ""
                continue
            sub_api_version = f"{sub.group}/{sub.version}" if sub.group else sub.version
            sub_model = registry.subresource_model(sub_api_version, sub.kind) or rt.model
            subs[name] = self._root(sub_model, _gvk(sub.group, sub.version, sub.kind))
        self.paths.update(resource_paths(rt, model, list_model, subs))

    def _root(self, model: type | None, gvk: dict[str, str]) -> str:
        assert model is not None and issubclass(model, BaseModel)
        name = self.builder.build(model)
        known = self.gvks.setdefault(name, [])
        if gvk not in known:
            known.append(gvk)
        return name

    def finish(self, served: list[tuple[str, str]]) -> dict[str, dict[str, Any]]:
        self._root(meta.Status, _gvk("", "v1", "Status"))
        delete_options = self.builder.build(meta.DeleteOptions)
        self.gvks[delete_options] = [_gvk(g, v, "DeleteOptions") for g, v in served]
        schemas = {**self.builder.definitions, **generic.value_definitions(openapi_v3=True)}
        for name, gvks in self.gvks.items():
            schemas[name] = {**schemas[name], "x-kubernetes-group-version-kind": gvks}
        return dict(sorted(schemas.items()))


def build() -> Documents:
    """Every document, from the kind registry and the models."""
    served = [(g, v) for g, versions in registry.groups() for v in versions]
    gvs: dict[tuple[str, str], _GroupVersion] = {}
    for group, version in served:  # every served version, converted ones (autoscaling/v1) included
        for rt in registry.resources_in(group, version):
            gvs.setdefault((group, version), _GroupVersion(group, version)).add(rt)
    v3: dict[str, Document] = {}
    all_paths: dict[str, Any] = {}
    all_schemas: dict[str, Any] = {}
    for (group, version), gv in gvs.items():
        schemas = gv.finish(served)
        v3[_gv_key(group, version)] = _document(
            {"openapi": "3.0.0", "info": INFO, "paths": gv.paths, "components": {"schemas": schemas}}
        )
        all_paths.update(gv.paths)
        for name, schema in schemas.items():
            if name in all_schemas and "x-kubernetes-group-version-kind" in schema:
                merged = all_schemas[name].get("x-kubernetes-group-version-kind", [])
                extra = [g for g in schema["x-kubernetes-group-version-kind"] if g not in merged]
                schema = {**schema, "x-kubernetes-group-version-kind": merged + extra}
            all_schemas[name] = schema
    v2 = _document(swagger2(INFO, all_paths, all_schemas))
    return Documents(v2=v2, v3=v3)


_lock = threading.Lock()
_built: Documents | None = None


def documents() -> Documents:
    """The documents, built on first use and kept (thread-safe; call it from a worker thread)."""
    global _built
    with _lock:
        if _built is None:
            _built = build()
        return _built
