"""Our pydantic models, turned into OpenAPI schema definitions (the OpenAPI v3 flavour).

One model class becomes one definition under its Kubernetes name (names.py). Each field becomes a
property under its wire name, typed from the annotation:

    str / bool / float            -> string / boolean / number
    int, Int64                    -> integer with format int32 (Go's default here) or int64
    Time, MicroTime (plain str)   -> a reference to meta/v1 Time or MicroTime
    IntOrString (int | str)       -> a reference to intstr.IntOrString
    Quantity (str | int | float)  -> a reference to resource.Quantity
    list[X]                       -> array of X
    dict[str, X]                  -> object with additionalProperties X   (kubectl: map[string]X)
    FreeDict (dict[str, Any])     -> object that keeps unknown fields     (kubectl: Object)
    another model                 -> a reference to its definition

A reference that carries its own description is written `allOf: [{$ref}]` next to the
description, as Kubernetes' v3 documents do (a bare `$ref` may have no siblings in OpenAPI v3);
documents.py rewrites that to v2's form. Descriptions come from comments.py and generic.py,
`required` and `x-kubernetes-*` markers from facts.py and api/patch/schema.py.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any, Union

from pydantic import BaseModel

from api.models.base import GoType
from api.patch import schema as patch_schema
from apiserver.openapi import comments, facts, generic, names

REF_PREFIX = "#/components/schemas/"
_TIME = re.compile(r"\bTime\b")


def ref(definition: str) -> dict[str, Any]:
    return {"$ref": REF_PREFIX + definition}


def _strip_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
        return Union[tuple(args)]  # noqa: UP007 - rebuilt at run time
    return annotation


def _raw_annotation(cls: type, attribute: str) -> str:
    """The annotation as written in the source ("Time | None"): aliases of `str` are only visible there."""
    for klass in cls.__mro__:
        raw = klass.__dict__.get("__annotations__", {}).get(attribute)
        if raw is not None:
            return raw if isinstance(raw, str) else repr(raw)
    return ""


class SchemaBuilder:
    """Collects the definitions reachable from some root models: `build(Pod)` adds Pod, PodSpec,
    Container, ObjectMeta, ... to `definitions`, each once."""

    def __init__(self) -> None:
        self.definitions: dict[str, dict[str, Any]] = {}

    def build(self, model: type[BaseModel]) -> str:
        """Add `model` (and everything it refers to); return its definition name."""
        name = names.definition_name(model)
        if name in self.definitions:
            return name
        self.definitions[name] = {}  # placeholder first: self-references terminate
        self.definitions[name] = self._object(model)
        return name

    # --- one model -------------------------------------------------------------------------

    def _object(self, model: type[BaseModel]) -> dict[str, Any]:
        owner = model.__name__
        top_level = {"api_version", "kind", "metadata"} <= set(model.model_fields)
        is_list = "items" in model.model_fields and top_level
        properties: dict[str, Any] = {}
        for attribute, info in model.model_fields.items():
            wire = info.alias or attribute
            prop = self._property(model, attribute, info.annotation, info.metadata)
            description = comments.field_comment(model, attribute) or generic.role_description(
                wire, owner, top_level and not is_list, is_list
            )
            extra = self._markers(owner, wire)
            if description:
                extra = {"description": description, **extra}
            if extra and "$ref" in prop:
                prop = {"allOf": [prop]}  # OpenAPI v3: a $ref has no siblings
            prop.update(extra)
            properties[wire] = prop
        schema: dict[str, Any] = {"type": "object", "properties": dict(sorted(properties.items()))}
        description = comments.class_description(model)
        if not description and is_list:
            kind = owner.removesuffix("V1").removesuffix("List")
            description = f"A list of {kind} objects, as a list request returns it."
        if description:
            schema = {"description": description, **schema}
        required = [f for f in facts.REQUIRED.get(owner, []) if f in properties]
        if is_list and "items" not in required:
            required.append("items")
        if required:
            schema["required"] = required
        return schema

    def _markers(self, owner: str, wire: str) -> dict[str, Any]:
        markers: dict[str, Any] = dict(facts.LIST_FACTS.get(owner, {}).get(wire, {}))
        strategy, merge_key = "", ""
        patch_field = patch_schema.TYPES.get(owner, {}).get(wire)
        if patch_field is not None:
            strategy, merge_key = patch_field.strategy, patch_field.merge_key
        elif wire == "conditions" and owner in facts.CONDITION_STATUSES:
            strategy, merge_key = "merge", "type"
        elif wire in facts.EXTRA_PATCH.get(owner, {}):
            strategy, merge_key = facts.EXTRA_PATCH[owner][wire]
        if merge_key:
            markers["x-kubernetes-patch-merge-key"] = merge_key
        if strategy:
            markers["x-kubernetes-patch-strategy"] = strategy
        return markers

    # --- one value -------------------------------------------------------------------------

    def _property(self, model: type, attribute: str, annotation: Any, metadata: list[Any]) -> dict[str, Any]:
        raw = _raw_annotation(model, attribute)
        bare = raw.removesuffix(" | None")
        if bare in ("Time", "MicroTime"):
            return ref(names.MicroTime if bare == "MicroTime" else names.Time)
        schema = self._value(annotation)
        if any(isinstance(m, GoType) and m.name == "int64" for m in metadata) and schema.get("type") == "integer":
            schema["format"] = "int64"
        if _TIME.search(raw) and schema.get("type") == "array":  # list[Time]
            schema["items"] = ref(names.Time)
        return schema

    def _value(self, annotation: Any) -> dict[str, Any]:
        annotation = _strip_optional(annotation)
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            base, *extra = typing.get_args(annotation)
            schema = self._value(base)
            if any(isinstance(m, GoType) and m.name == "int64" for m in extra):
                schema["format"] = "int64"
            return schema
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return ref(self.build(annotation))
        if origin in (Union, types.UnionType):
            members = set(typing.get_args(annotation)) - {type(None)}
            if members == {int, str}:
                return ref(names.IntOrString)
            if str in members and members <= {str, int, float}:
                return ref(names.Quantity)
            return {"x-kubernetes-preserve-unknown-fields": True}
        if origin is list:
            (item,) = typing.get_args(annotation)
            return {"type": "array", "items": self._value(item)}
        if origin is dict:
            _, value = typing.get_args(annotation)
            if value is Any:
                return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            return {"type": "object", "additionalProperties": self._value(value)}
        if annotation is bool:
            return {"type": "boolean"}
        if annotation is int:
            return {"type": "integer", "format": "int32"}
        if annotation is float:
            return {"type": "number", "format": "double"}
        if annotation is str:
            return {"type": "string"}
        return {"x-kubernetes-preserve-unknown-fields": True}
