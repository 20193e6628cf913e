"""dryRun=All: a write that runs every stage and persists nothing.

`kubectl apply --dry-run=server` and `kubectl diff` ask the server what a write *would* produce:
the object after defaulting, admission and validation, with every error those stages raise. The
write itself is the only step skipped — no storage revision is used, no watch event is sent, and
no ClusterIP or NodePort stays allocated (genericstore.py and services.py honour a `dry_run`
flag; the handlers pass it down).

The parameter is a list (`?dryRun=All&dryRun=All` is fine). Kubernetes knows one value, `All`;
anything else — including an empty value — fails the whole request before it touches anything,
with 422 Invalid naming the verb's options kind, e.g.
`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"x"}: supported values: "All"`.
DELETE also carries the list in its DeleteOptions body (kubectl sends it there).
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from api import errors

ALL = "All"
CREATE, UPDATE, PATCH, DELETE = "CreateOptions", "UpdateOptions", "PatchOptions", "DeleteOptions"


def _go_strings(values: list[str]) -> str:
    """Go's `%#v` of a []string: `[]string{"a", "b"}`."""
    return "[]string{" + ", ".join(errors.go_quote(v) for v in values) + "}"


def check(values: list[str], options_kind: str) -> bool:
    """True when the request is a dry run; 422 for any value but `All`."""
    if not values:
        return False
    if any(v != ALL for v in values):
        cause = {
            "reason": "FieldValueNotSupported",
            "message": f"Unsupported value: {_go_strings(values)}: supported values: {errors.go_quote(ALL)}",
            "field": "dryRun",
        }
        raise errors.invalid(options_kind, "meta.k8s.io", "", [cause])
    return True


def from_query(request: Request, options_kind: str) -> bool:
    """`?dryRun=` of a create, update or patch (and of the subresource verbs built on them)."""
    return check(request.query_params.getlist("dryRun"), options_kind)


def body_values(options: dict[str, Any], where: str = "dryRun") -> list[str]:
    """The `dryRun` list of a DeleteOptions body, type-checked."""
    values = options.get("dryRun")
    if values is None:
        return []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise errors.bad_request(f"{where} must be a list of strings")
    return list(values)


def for_delete(request: Request, options: dict[str, Any]) -> bool:
    """A DELETE's dry-run list: the query's when it has one, else the DeleteOptions body's."""
    values = request.query_params.getlist("dryRun") or body_values(options)
    if values:
        options["dryRun"] = values
    return check(values, DELETE)


def for_eviction(request: Request, delete_options: dict[str, Any]) -> bool:
    """An Eviction is a create whose body holds DeleteOptions: the two dry-run lists must agree
    (Kubernetes: "Non-matching dry-run options in request and content")."""
    query = request.query_params.getlist("dryRun")
    check(query, CREATE)
    content = body_values(delete_options, "deleteOptions.dryRun")
    if query and content and query != content:
        raise errors.bad_request(
            f"Non-matching dry-run options in request and content: [{' '.join(query)}] and [{' '.join(content)}]"
        )
    values = query or content
    if values:
        delete_options["dryRun"] = values
    return check(values, DELETE)
