"""OpenAPI v3 -> Swagger 2.0: the same API, in the older format /openapi/v2 serves.

The differences that matter here:
- references point into `#/definitions/` instead of `#/components/schemas/`, and a reference may
  carry a description beside it (v3 needs the `allOf: [{$ref}]` wrapper for that);
- a parameter states its `type` itself, not in a `schema`; a request body is a parameter
  `in: body`; a response has one `schema` and the operation lists the media types it
  `consumes` and `produces`;
- IntOrString and Quantity are plain strings with a format: v2 has no "integer or string".
"""

from __future__ import annotations

from typing import Any

from apiserver.openapi import generic
from apiserver.openapi.definitions import REF_PREFIX
from apiserver.openapi.paths import STRATEGIC_MERGE_PATCH

_V2_PREFIX = "#/definitions/"


def _schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0] and "properties" not in node:
        out["$ref"] = all_of[0]["$ref"].replace(REF_PREFIX, _V2_PREFIX)
        node = {k: v for k, v in node.items() if k != "allOf"}
    for key, value in node.items():
        if key == "$ref":
            out[key] = value.replace(REF_PREFIX, _V2_PREFIX)
        elif key in ("properties", "definitions"):
            out[key] = {k: _schema(v) for k, v in value.items()}
        else:
            out[key] = _schema(value)
    return out


def _parameter(param: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in param.items() if k != "schema"}
    out.update(param.get("schema", {}))
    return out


def _operation(op: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in op.items() if k not in ("parameters", "requestBody", "responses")}
    params = [_parameter(p) for p in op.get("parameters", [])]
    body = op.get("requestBody")
    if body:
        content = body["content"]
        out["consumes"] = list(content)
        if op.get("x-kubernetes-action") == "patch":
            out["consumes"].append(STRATEGIC_MERGE_PATCH)  # see paths.py for why v3 leaves it out
        first = next(iter(content.values()))
        params.append({"name": "body", "in": "body", "required": True, "schema": _schema(first["schema"])})
    if params:
        out["parameters"] = params
    produces: list[str] = []
    responses: dict[str, Any] = {}
    for code, response in op.get("responses", {}).items():
        entry: dict[str, Any] = {"description": response["description"]}
        content = response.get("content", {})
        if content:
            entry["schema"] = _schema(next(iter(content.values()))["schema"])
            produces += [t for t in content if t not in produces]
        responses[code] = entry
    out["responses"] = responses
    if produces:
        out["produces"] = produces
    out["schemes"] = ["https"]
    return out


def swagger2(info: dict[str, str], paths: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    v2_paths: dict[str, Any] = {}
    for path, item in sorted(paths.items()):
        converted: dict[str, Any] = {}
        for key, value in item.items():
            converted[key] = [_parameter(p) for p in value] if key == "parameters" else _operation(value)
        v2_paths[path] = converted
    definitions = {name: _schema(schema) for name, schema in schemas.items()}
    definitions.update(generic.value_definitions(openapi_v3=False))
    return {"swagger": "2.0", "info": info, "paths": v2_paths, "definitions": dict(sorted(definitions.items()))}
