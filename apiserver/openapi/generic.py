"""Descriptions for the fields every kind has, and the definitions of apimachinery's value types.

`apiVersion`, `kind`, `metadata`, `spec`, `status` and a list's `items` mean the same thing on
every kind, so they are described once here (in our words) instead of on every model. The value
types (IntOrString, Quantity, Time, MicroTime) are plain `int | str`, `str` ... in our models;
in the published schema they are named definitions, encoded as Kubernetes encodes them — the
OpenAPI v2 and v3 encodings differ, because v2 cannot say "integer or string".
"""

from __future__ import annotations

from typing import Any

from apiserver.openapi import names


def role_description(field: str, owner: str, top_level: bool, is_list: bool) -> str:
    """A description for a field by its role, or "" if the field has no role-wide meaning."""
    if field == "apiVersion":
        return "The group and version of this object's schema, e.g. `v1` or `apps/v1`. The server rejects an object whose apiVersion does not match the URL."  # noqa: E501
    if field == "kind":
        return "The kind of this object in CamelCase, e.g. `Pod`. Must match the resource in the URL."
    if not (top_level or is_list):
        return ""
    kind = owner.removesuffix("List") if is_list else owner
    if field == "metadata":
        if is_list:
            return "List metadata: the resourceVersion the list was read at (watch from there) and the `continue` token of the next page."  # noqa: E501
        return "Standard object metadata: name, namespace, labels and annotations, and the fields the server maintains (uid, resourceVersion, generation, creationTimestamp)."  # noqa: E501
    if field == "spec":
        return f"The desired state of this {kind}, written by its user; controllers work to make the world match it."
    if field == "status":
        return f"The observed state of this {kind}, written by the system. Read-only for users; may lag the spec."
    if field == "items" and is_list:
        return f"The {kind} objects in this list."
    return ""


def value_definitions(openapi_v3: bool) -> dict[str, dict[str, Any]]:
    """IntOrString, Quantity, Time and MicroTime as definitions in the given OpenAPI flavour."""
    int_or_string: dict[str, Any] = {
        "description": "A value that is either a 32-bit integer or a string, e.g. a port (8080 or \"http\") or an amount (1 or \"25%\").",  # noqa: E501
        "format": "int-or-string",
    }
    quantity: dict[str, Any] = {
        "description": "An amount of a resource as a decimal number with an optional suffix: \"250m\" (0.25), \"64Mi\" (64 * 2^20), \"1G\" (10^9), or a plain number.",  # noqa: E501
    }
    if openapi_v3:
        int_or_string["oneOf"] = [{"type": "integer"}, {"type": "string"}]
        quantity["oneOf"] = [{"type": "string"}, {"type": "number"}]
    else:
        int_or_string["type"] = "string"
        quantity["type"] = "string"
    return {
        names.IntOrString: int_or_string,
        names.Quantity: quantity,
        names.Time: {
            "description": "A point in time in RFC 3339 form with second precision, e.g. \"2024-01-02T03:04:05Z\".",
            "type": "string",
            "format": "date-time",
        },
        names.MicroTime: {
            "description": "A point in time in RFC 3339 form with microsecond precision.",
            "type": "string",
            "format": "date-time",
        },
        names.Patch: {
            "description": "The body of a PATCH request: a JSON patch, a merge patch or a strategic merge patch, by Content-Type.",  # noqa: E501
            "type": "object",
        },
    }
