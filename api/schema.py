"""Checking a wire-form object against its kind's model: unknown fields and wrong types.

The API server needs two answers about a request body before it stores anything:
- Which fields does the model not know? (`spec.containers[0].imagee`.) By default Kubernetes
  accepts the object and sends `Warning: unknown field "spec.containers[0].imagee"`; with
  `fieldValidation=Strict` it refuses it. Maps such as `labels` have free keys: never unknown.
- Which values have the wrong JSON type? (`spec.replicas: "abc"`.) Kubernetes' decoder refuses
  those with 400 BadRequest before validation even starts, in Go's words:
  `json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`.

Both walk a *shape* compiled once per model class from its pydantic fields: for each wire name,
is the value a nested model, a list of something, a map of something, or a plain value? Walking
plain dicts against that table is a few microseconds for a small pod - cheap enough to run on
every write.
"""

from __future__ import annotations

import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Union

from pydantic import BaseModel, ValidationError

from api.models.base import GoType
from api.quantity import Quantity, QuantityError
from api.registry import ResourceType


@dataclass(eq=False)
class _Shape:
    """What a value must look like: a model (`fields`), a list or map of `item`, or a leaf."""

    kind: str  # "model", "list", "map" or "leaf"
    annotation: Any = None  # the Python type, for error messages
    model: type[BaseModel] | None = None
    item: _Shape | None = None
    fields: dict[str, _Shape] = field(default_factory=dict)
    checked: bool | None = None  # can it hold an int or quantity whose value must be checked?
    go: str = ""  # a checked leaf's Go type


_LEAF = _Shape("leaf")
_MODEL_SHAPES: dict[type[BaseModel], _Shape] = {}


def _strip_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _shape_of(annotation: Any) -> _Shape:
    annotation = _strip_optional(annotation)
    bare = typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation
    origin = typing.get_origin(bare)
    if isinstance(bare, type) and issubclass(bare, BaseModel):
        return _model_shape(bare)
    if origin is list:
        return _Shape("list", annotation, item=_shape_of(typing.get_args(bare)[0]))
    if origin is dict:
        return _Shape("map", annotation, item=_shape_of(typing.get_args(bare)[1]))
    return _Shape("leaf", annotation)


def _model_shape(model: type[BaseModel]) -> _Shape:
    shape = _MODEL_SHAPES.get(model)
    if shape is None:
        # Register before filling in the fields, so a self-referencing model terminates.
        shape = _MODEL_SHAPES[model] = _Shape("model", model, model=model)
        for name, info in model.model_fields.items():
            shape.fields[info.alias or name] = _shape_of(info.annotation)
    return shape


def model_shape(model: type[BaseModel]) -> _Shape:
    """The compiled shape of a model, for walkers elsewhere (api/fieldpath.py's field sets)."""
    return _model_shape(model)


# --- unknown fields ---------------------------------------------------------------------------


def unknown_fields(rt: ResourceType, obj: dict[str, Any]) -> list[str]:
    """Dotted paths of every field in `obj` that `rt.model` does not define, in document order."""
    found: list[str] = []
    _walk(_model_shape(rt.model), obj, "", found, prune=False)
    return found


def prune_unknown_fields(rt: ResourceType, obj: dict[str, Any]) -> list[str]:
    """Drop every field `rt.model` does not define from `obj` (in place); return their paths.

    This is what Kubernetes' decoder does to a built-in kind: a field the Go struct has no place
    for is simply not decoded, so it is never stored (`replica: 3` is gone, with a warning).
    """
    found: list[str] = []
    _walk(_model_shape(rt.model), obj, "", found, prune=True)
    return found


def _walk(shape: _Shape, value: Any, path: str, found: list[str], *, prune: bool) -> None:
    # A value of the wrong container type is type_errors' business, not ours: skip it.
    if shape.kind == "model":
        if isinstance(value, dict):
            fields = shape.fields
            drop: list[str] = []
            for key, child in value.items():
                child_shape = fields.get(key)
                if child_shape is None:
                    found.append(f"{path}.{key}" if path else key)
                    drop.append(key)
                elif child_shape.kind != "leaf":  # most fields are leaves: no path is built for them
                    _walk(child_shape, child, f"{path}.{key}" if path else key, found, prune=prune)
            if prune:
                for key in drop:
                    del value[key]
    elif shape.kind == "list":
        if isinstance(value, list) and shape.item is not None and shape.item.kind != "leaf":
            for index, child in enumerate(value):
                _walk(shape.item, child, f"{path}[{index}]", found, prune=prune)
    elif shape.kind == "map":
        if isinstance(value, dict) and shape.item is not None and shape.item.kind != "leaf":
            for key, child in value.items():
                _walk(shape.item, child, f"{path}.{key}", found, prune=prune)


# --- wrong types ------------------------------------------------------------------------------


def type_errors(rt: ResourceType, obj: Any) -> list[tuple[str, str]]:
    """(field path, message) for each value of the wrong JSON type, first error per path.

    The message is the one Kubernetes' JSON decoder gives, e.g.
    `json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`;
    the API server prefixes `<Kind> in version "<v>" cannot be handled as a <Kind>: `.
    """
    model = typing.cast(type[BaseModel], rt.model)
    root = _model_shape(model)
    if not isinstance(obj, dict):
        return [("", f"json: cannot unmarshal {_json_type(obj)} into Go value of type {_go_type(root)}")]
    try:
        model.model_validate(obj)
    except ValidationError as error:
        results: dict[str, str] = {}
        for detail in error.errors():
            path, message = _describe(root, detail["loc"], detail.get("input"))
            results.setdefault(path, message)
        return list(results.items())
    found: dict[str, str] = {}
    _check_values(root, obj, "", root.model.__name__ if root.model else "", [], found)
    return list(found.items())


# Go's integer types and the values they hold; a JSON number outside is a decode error.
_INT_BOUNDS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_PLAIN_QUANTITY = re.compile(r"[0-9]{1,15}(?:[numkMGTPE]|[KMGTPE]i)?")
_CHECKED_TYPES = {*_INT_BOUNDS, "intstr.IntOrString", "resource.Quantity"}


def _check_values(
    shape: _Shape, value: Any, path: str, owner: str, go_path: list[str], found: dict[str, str]
) -> None:
    """Well-typed values that still do not decode: integers too big for their Go type, and
    quantities `resource.Quantity` refuses (`"lots"`, `1ki`). Subtrees that hold no such
    value (labels, annotations, most of a pod) are skipped: this runs on every write."""
    if not _needs_check(shape):
        return
    if shape.kind == "model" and isinstance(value, dict):
        name = shape.model.__name__ if shape.model else owner
        for key, child in value.items():
            child_shape = shape.fields.get(key)
            if child_shape is not None and child is not None and _needs_check(child_shape):
                _check_values(child_shape, child, f"{path}.{key}" if path else key, name, [*go_path, key], found)
    elif shape.kind == "list" and isinstance(value, list) and shape.item is not None:
        for index, child in enumerate(value):
            _check_values(shape.item, child, f"{path}[{index}]", owner, go_path, found)
    elif shape.kind == "map" and isinstance(value, dict) and shape.item is not None:
        for key, child in value.items():
            _check_values(shape.item, child, f"{path}.{key}", owner, go_path, found)
    elif shape.kind == "leaf" and not isinstance(value, bool) and isinstance(value, int | float | str):
        problem = _leaf_problem(shape, value, owner, go_path)
        if problem:
            found.setdefault(path, problem)


def _needs_check(shape: _Shape) -> bool:
    """Can a value of this shape hold an integer or quantity? (Computed once per shape.)"""
    if shape.checked is None:
        shape.checked = False  # a self-referencing model must not recurse for ever
        if shape.kind == "leaf":
            shape.go = _go_scalar(shape.annotation)
            shape.checked = shape.go in _CHECKED_TYPES
        elif shape.kind in ("list", "map"):
            shape.checked = shape.item is not None and _needs_check(shape.item)
        else:
            shape.checked = any([_needs_check(child) for child in shape.fields.values()])
    return shape.checked


def _leaf_problem(shape: _Shape, value: Any, owner: str, go_path: list[str]) -> str | None:
    go_type = shape.go
    if go_type == "resource.Quantity":
        if isinstance(value, int) or (isinstance(value, str) and _PLAIN_QUANTITY.fullmatch(value)):
            return None  # the everyday forms ("250m", "64Mi", 2): valid, no need to parse
        if isinstance(value, str | float):
            try:
                Quantity(value)
            except QuantityError as exc:
                return str(exc)  # Quantity's own decoder error: no "json:" prefix, no field
        return None
    if go_type == "intstr.IntOrString":
        go_type = "int32"  # an IntOrString holding a number holds an int32
    bounds = _INT_BOUNDS.get(go_type)
    if bounds and isinstance(value, int) and not isinstance(value, bool) and not bounds[0] <= value <= bounds[1]:
        target = f"Go struct field {owner}.{'.'.join(go_path)}" if go_path else "Go value"
        return f"json: cannot unmarshal number {value} into {target} of type {go_type}"
    return None


def _describe(root: _Shape, loc: tuple[int | str, ...], bad_value: Any) -> tuple[str, str]:
    """Follow a pydantic error location through the shapes: K8s path and Go-style message."""
    shape, owner, path, go_path = root, root.model.__name__ if root.model else "", "", []
    for part in loc:
        if shape.kind == "model" and isinstance(part, str) and part in shape.fields:
            owner = shape.model.__name__ if shape.model else owner
            path = f"{path}.{part}" if path else part
            go_path.append(part)
            shape = shape.fields[part]
        elif shape.kind == "list" and isinstance(part, int) and shape.item is not None:
            path, shape = f"{path}[{part}]", shape.item
        elif shape.kind == "map" and shape.item is not None:
            path, shape = f"{path}.{part}", shape.item
        else:
            break  # a union member tag such as "int" or "str": the value itself is wrong
    target = f"Go struct field {owner}.{'.'.join(go_path)}" if go_path else "Go value"
    return path, f"json: cannot unmarshal {_json_type(bad_value)} into {target} of type {_go_type(shape)}"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return f"number {value}" if isinstance(value, float) else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _go_type(shape: _Shape) -> str:
    if shape.kind == "model" and shape.model is not None:
        return f"{_go_package(shape.model)}.{shape.model.__name__.removesuffix('V1')}"
    if shape.kind == "list" and shape.item is not None:
        return "[]" + _go_type(shape.item)
    if shape.kind == "map" and shape.item is not None:
        return "map[string]" + _go_type(shape.item)
    return _go_scalar(shape.annotation)


def _go_package(model: type[BaseModel]) -> str:
    """The Go package name Kubernetes prints: v2 for the autoscaling/v2 HPA types, else v1."""
    name = model.__name__
    if model.__module__.endswith(".autoscaling") and not (name.endswith("V1") or name.startswith("Scale")):
        return "v2"
    return "v1"


def _go_scalar(annotation: Any) -> str:
    annotation = _strip_optional(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        marks = [m for m in typing.get_args(annotation)[1:] if isinstance(m, GoType)]
        if marks:
            return marks[0].name
        annotation = typing.get_args(annotation)[0]
    if annotation is int:
        return "int32"
    if annotation is str:
        return "string"
    if annotation is bool:
        return "bool"
    if annotation is float:
        return "float64"
    args = set(typing.get_args(annotation)) - {type(None)}
    if args == {int, str}:
        return "intstr.IntOrString"
    if {int, str, float} <= args:
        return "resource.Quantity"
    return "interface {}"
