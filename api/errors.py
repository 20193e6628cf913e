"""Kubernetes `Status` errors: one exception tree, mapped from `Status.reason`.

Why one tree? Every failure the API server reports travels as a `Status` object
(`kind: Status`, `status: Failure`, `reason`, `code`, `message`, `details`). The server
builds an exception here and answers with `to_status()`; the client receives the body
and rebuilds the *same* exception with `StatusError.from_status()`. So a controller
can write `except ConflictError:` whether the conflict happened in-process or over
HTTP, exactly like client-go's `apierrors.IsConflict(err)`.

The `reason` decides the class (`NotFound` -> NotFoundError); when a server sends a
reason we do not know, the HTTP `code` decides (404 -> NotFoundError). Messages are
Kubernetes' own, word for word, because kubectl prints them (`Error from server
(NotFound): pods "x" not found`) and people search the web for them.

`FieldError` is one entry of a validation failure (`spec.containers[0].image:
Required value`); a list of them becomes a 422 `Invalid` Status with `details.causes`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar, overload

# ---------------------------------------------------------------- the exception tree


class StatusError(Exception):
    """A failed API call, as a `Status` body. Subclasses fix `code` and `reason`."""

    default_code: ClassVar[int] = 500
    default_reason: ClassVar[str] = ""  # "" is StatusReasonUnknown in Kubernetes

    def __init__(
        self,
        message: str = "",
        details: dict[str, Any] | None = None,
        *,
        code: int | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.code = self.default_code if code is None else code
        self.reason = self.default_reason if reason is None else reason

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.reason!r}, {self.message!r})"

    @property
    def retry_after_seconds(self) -> int | None:
        """`details.retryAfterSeconds`, the server's hint for when to try again."""
        return (self.details or {}).get("retryAfterSeconds") or None

    def to_status(self) -> dict[str, Any]:
        """The wire form. Empty detail fields are omitted, as Go's `omitempty` does."""
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:
            status["reason"] = self.reason
        details = {k: v for k, v in (self.details or {}).items() if v not in (None, "", [], {}, 0)}
        if details:
            status["details"] = details
        status["code"] = self.code
        return status

    @classmethod
    def from_status(cls, status: dict[str, Any]) -> StatusError:
        """Rebuild the right subclass from a `Status` body (by reason, else by code)."""
        reason = status.get("reason") or ""
        code = status.get("code")
        klass = _BY_REASON.get(reason) or _BY_CODE.get(code if isinstance(code, int) else -1) or StatusError
        return klass(
            status.get("message") or "",
            status.get("details") or None,
            code=code if isinstance(code, int) else None,
            reason=reason or None,
        )


class BadRequestError(StatusError):
    default_code, default_reason = 400, "BadRequest"


class UnauthorizedError(StatusError):
    default_code, default_reason = 401, "Unauthorized"


class ForbiddenError(StatusError):
    default_code, default_reason = 403, "Forbidden"


class NotFoundError(StatusError):
    default_code, default_reason = 404, "NotFound"


class MethodNotAllowedError(StatusError):
    default_code, default_reason = 405, "MethodNotAllowed"


class NotAcceptableError(StatusError):
    default_code, default_reason = 406, "NotAcceptable"


class AlreadyExistsError(StatusError):
    default_code, default_reason = 409, "AlreadyExists"


class ConflictError(StatusError):
    default_code, default_reason = 409, "Conflict"


class GoneError(StatusError):
    """410. Kubernetes answers a too-old resourceVersion with reason `Expired`;
    the older reason `Gone` means the same to a client: re-list."""

    default_code, default_reason = 410, "Expired"


class RequestEntityTooLargeError(StatusError):
    default_code, default_reason = 413, "RequestEntityTooLarge"


class UnsupportedMediaTypeError(StatusError):
    default_code, default_reason = 415, "UnsupportedMediaType"
    content_type: str = ""  # the rejected Content-Type, for logs; Kubernetes does not send it back


class InvalidError(StatusError):
    default_code, default_reason = 422, "Invalid"

    @property
    def causes(self) -> list[dict[str, Any]]:
        """`details.causes`: one `{reason, message, field}` per field error."""
        return list((self.details or {}).get("causes") or [])


class TooManyRequestsError(StatusError):
    default_code, default_reason = 429, "TooManyRequests"


class InternalError(StatusError):
    default_code, default_reason = 500, "InternalError"


class ServerTimeoutError(StatusError):
    default_code, default_reason = 500, "ServerTimeout"


class ServiceUnavailableError(StatusError):
    default_code, default_reason = 503, "ServiceUnavailable"


class TimeoutStatusError(StatusError):
    """504 `Timeout` (named so it does not shadow Python's built-in TimeoutError)."""

    default_code, default_reason = 504, "Timeout"


_BY_REASON: dict[str, type[StatusError]] = {
    c.default_reason: c
    for c in (
        BadRequestError,
        UnauthorizedError,
        ForbiddenError,
        NotFoundError,
        MethodNotAllowedError,
        NotAcceptableError,
        AlreadyExistsError,
        ConflictError,
        GoneError,
        RequestEntityTooLargeError,
        UnsupportedMediaTypeError,
        InvalidError,
        TooManyRequestsError,
        InternalError,
        ServerTimeoutError,
        ServiceUnavailableError,
        TimeoutStatusError,
    )
}
_BY_REASON["Gone"] = GoneError
# The fallback when the reason is unknown. Where two reasons share a code, the generic one wins.
_BY_CODE: dict[int, type[StatusError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    406: NotAcceptableError,
    409: ConflictError,
    410: GoneError,
    413: RequestEntityTooLargeError,
    415: UnsupportedMediaTypeError,
    422: InvalidError,
    429: TooManyRequestsError,
    500: InternalError,
    503: ServiceUnavailableError,
    504: TimeoutStatusError,
}

# ---------------------------------------------------------------- field errors

# FieldError.type -> (the cause's reason, the words Kubernetes prints)
_FIELD_TYPES: dict[str, tuple[str, str]] = {
    "NotFound": ("FieldValueNotFound", "Not found"),
    "Required": ("FieldValueRequired", "Required value"),
    "Duplicate": ("FieldValueDuplicate", "Duplicate value"),
    "Invalid": ("FieldValueInvalid", "Invalid value"),
    "NotSupported": ("FieldValueNotSupported", "Unsupported value"),
    "Forbidden": ("FieldValueForbidden", "Forbidden"),
    "TooLong": ("FieldValueTooLong", "Too long"),
    "TooMany": ("FieldValueTooMany", "Too many"),
    "TypeInvalid": ("FieldValueTypeInvalid", "Invalid value"),
    "Internal": ("InternalError", "Internal error"),
}
# These types print no value, only their words and the detail.
_VALUELESS = {"Required", "Forbidden", "TooLong", "Internal"}
FIELD_IMMUTABLE = "field is immutable"


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(s: str) -> str:
    """A string quoted the way Go's `%q` does it (what Kubernetes puts in messages)."""
    out = []
    for ch in s:
        code = ord(ch)
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _go_float(v: float) -> str:
    """Go's `%v` of a float64: the shortest digits, in e-notation when the exponent is
    below -4 or at least 6 (`1e+06`, `123456`, `1.5e-05`)."""
    if math.isnan(v) or math.isinf(v):
        return "NaN" if math.isnan(v) else ("+Inf" if v > 0 else "-Inf")
    if v == 0:
        return "0"
    d = Decimal(repr(v)).normalize()
    exp = d.adjusted()
    if -4 <= exp < 6:
        return format(d, "f")
    sign, digits, _ = d.as_tuple()
    mantissa = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def go_value(v: Any) -> str:
    """A bad value rendered as Kubernetes renders it in an ErrorBody."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _go_float(v)
    if isinstance(v, str):
        return go_quote(v)
    return json.dumps(v, separators=(",", ":"), sort_keys=True, default=str)


@dataclass(frozen=True)
class FieldError:
    """One validation failure at one field path (Kubernetes' `field.Error`)."""

    type: str
    field: str
    value: Any = None
    detail: str = ""

    def __post_init__(self) -> None:
        if self.type not in _FIELD_TYPES:
            raise ValueError(f"unknown field error type {self.type!r}; one of {sorted(_FIELD_TYPES)}")

    @property
    def reason(self) -> str:
        """The cause type on the wire: `FieldValueRequired`, `FieldValueInvalid`, ..."""
        return _FIELD_TYPES[self.type][0]

    def body(self) -> str:
        """The message without the field path, e.g. `Invalid value: "Foo": <detail>`."""
        words = _FIELD_TYPES[self.type][1]
        s = words if self.type in _VALUELESS else f"{words}: {go_value(self.value)}"
        return f"{s}: {self.detail}" if self.detail else s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def to_cause(self) -> dict[str, str]:
        return {"reason": self.reason, "message": self.body(), "field": self.field}


def required(field: str, detail: str = "") -> FieldError:
    return FieldError("Required", field, "", detail)


def invalid_value(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError("Invalid", field, value, detail)


def immutable(field: str, value: Any) -> FieldError:
    return FieldError("Invalid", field, value, FIELD_IMMUTABLE)


def field_forbidden(field: str, detail: str) -> FieldError:
    return FieldError("Forbidden", field, "", detail)


def not_supported(field: str, value: Any, supported: Iterable[Any]) -> FieldError:
    quoted = [go_quote(str(v)) for v in supported]
    detail = ("supported values: " + ", ".join(quoted)) if quoted else ""
    return FieldError("NotSupported", field, value, detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError("Duplicate", field, value)


def not_found_value(field: str, value: Any) -> FieldError:
    return FieldError("NotFound", field, value)


def too_long(field: str, value: Any, max: int) -> FieldError:
    unit = "byte" if max == 1 else "bytes"
    return FieldError("TooLong", field, "<value omitted>", f"may not be more than {max} {unit}")


def too_many(field: str, actual: int, max: int) -> FieldError:
    unit = "item" if max == 1 else "items"
    return FieldError("TooMany", field, actual, f"must have at most {max} {unit}")


def aggregate(messages: Sequence[str]) -> str:
    """Join error messages as Kubernetes' Aggregate does: one stays bare, more get `[a, b]`,
    repeated messages are printed once."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]" if unique else ""


# ---------------------------------------------------------------- constructors


def _split_resource_key(resource_key: str) -> tuple[str, str]:
    """`deployments.apps` -> ("deployments", "apps"); `pods` -> ("pods", "")."""
    resource, _, group = resource_key.partition(".")
    return resource, group


def _resource_details(resource_key: str, name: str) -> dict[str, Any]:
    resource, group = _split_resource_key(resource_key)
    return {"name": name, "group": group, "kind": resource}


def not_found_path() -> NotFoundError:
    """404 for a URL that names no resource at all (`/api/v1/nosuchthings`)."""
    return NotFoundError("the server could not find the requested resource", {})


def not_found(resource_key: str, name: str) -> NotFoundError:
    return NotFoundError(f"{resource_key} {go_quote(name)} not found", _resource_details(resource_key, name))


def already_exists(resource_key: str, name: str) -> AlreadyExistsError:
    return AlreadyExistsError(f"{resource_key} {go_quote(name)} already exists", _resource_details(resource_key, name))


OBJECT_MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def conflict(resource_key: str, name: str, detail: str = OBJECT_MODIFIED) -> ConflictError:
    return ConflictError(
        f"Operation cannot be fulfilled on {resource_key} {go_quote(name)}: {detail}",
        _resource_details(resource_key, name),
    )


def apply_conflict(conflicts: Sequence[tuple[str, str]]) -> ConflictError:
    """409 for a server-side apply that would change fields other managers own.

    `conflicts` are (manager as printed, e.g. `"kubectl-client-side-apply" using apps/v1`, path)."""
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {who}", "field": path}
              for who, path in conflicts]
    if len(conflicts) == 1:
        who, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {who}: {path}"
    else:
        grouped: dict[str, list[str]] = {}
        for who, path in conflicts:
            grouped.setdefault(who, []).append(path)
        lines = []
        for who in sorted(grouped):
            lines.append(f"conflicts with {who}:")
            lines += [f"- {path}" for path in grouped[who]]
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ConflictError(message, {"causes": causes})


def invalid(kind: str, group: str, name: str, causes: Sequence[FieldError | dict[str, Any]]) -> InvalidError:
    """422 Invalid: `Pod "x" is invalid: spec.containers[0].image: Required value`."""
    wire: list[dict[str, Any]] = []
    messages: list[str] = []
    for c in causes:
        if isinstance(c, FieldError):
            wire.append(c.to_cause())
            messages.append(str(c))
        else:
            wire.append(dict(c))
            text = c.get("message", "")
            messages.append(f"{c['field']}: {text}" if c.get("field") else text)
    qualified_kind = f"{kind}.{group}" if group else kind
    message = f"{qualified_kind} {go_quote(name)} is invalid"
    if messages:
        message += ": " + aggregate(messages)
    return InvalidError(message, {"name": name, "group": group, "kind": kind, "causes": wire})


def invalid_patch(detail: str) -> InvalidError:
    """422 for a well-formed patch that cannot be applied (a failed JSON-patch `test`, a path
    that does not exist). Kubernetes sends only its generic sentence; we add the detail as
    a cause on `patch`, which kubectl prints after it."""
    return InvalidError(
        "the server rejected our request due to an error in our request",
        {"causes": [{"field": "patch", "message": detail}]},
    )


def bad_request(message: str) -> BadRequestError:
    return BadRequestError(message)


def expired(message: str) -> GoneError:
    """410 `Expired`, e.g. `too old resource version: 5 (10)` for a compacted watch."""
    return GoneError(message, reason="Expired")


def gone(message: str) -> GoneError:
    """410 with the older reason `Gone` (Kubernetes' deprecated NewGone)."""
    return GoneError(message, reason="Gone")


def forbidden_error(resource_key: str, name: str, reason: str) -> ForbiddenError:
    """403: `pods "x" is forbidden: <reason>` (Kubernetes' NewForbidden)."""
    if not resource_key:
        message = f"forbidden: {reason}"
    elif not name:
        message = f"{resource_key} is forbidden: {reason}"
    else:
        message = f"{resource_key} {go_quote(name)} is forbidden: {reason}"
    return ForbiddenError(message, _resource_details(resource_key, name))


@overload
def forbidden(field: str, detail: str, /) -> FieldError: ...
@overload
def forbidden(resource_key: str, name: str, reason: str, /) -> ForbiddenError: ...
def forbidden(*args: str) -> FieldError | ForbiddenError:
    """Two things share Kubernetes' word "forbidden", told apart by the argument count:
    `forbidden(field, detail)` is a FieldError (`spec.x: Forbidden: <detail>`),
    `forbidden(resource_key, name, reason)` is a 403 ForbiddenError.
    Prefer the unambiguous `field_forbidden` / `forbidden_error` in new code."""
    if len(args) == 2:
        return field_forbidden(*args)
    if len(args) == 3:
        return forbidden_error(*args)
    raise TypeError("forbidden() takes (field, detail) or (resource_key, name, reason)")


def method_not_allowed(resource_key: str = "", action: str = "") -> MethodNotAllowedError:
    """405. Without arguments: the generic answer for a verb a path does not serve."""
    if resource_key and action:
        resource, group = _split_resource_key(resource_key)
        return MethodNotAllowedError(
            f"{action} is not supported on resources of kind {go_quote(resource_key)}",
            {"group": group, "kind": resource},
        )
    return MethodNotAllowedError("the server does not allow this method on the requested resource")


def not_acceptable(accepted: Sequence[str]) -> NotAcceptableError:
    return NotAcceptableError("only the following media types are accepted: " + ", ".join(accepted))


def too_large(limit: int) -> RequestEntityTooLargeError:
    return RequestEntityTooLargeError(f"Request entity too large: limit is {limit}")


ACCEPTED_MEDIA_TYPES = ("application/json", "application/yaml")


def unsupported_media_type(
    content_type: str = "", message: str = "", *, accepted: Sequence[str] = ACCEPTED_MEDIA_TYPES
) -> UnsupportedMediaTypeError:
    """415. Kubernetes does not echo the rejected Content-Type; it lists what it accepts
    (`accepted`; pass the patch types for a PATCH). `message` replaces the whole text when
    there is something better to say. `content_type` stays on the exception for logs."""
    err = UnsupportedMediaTypeError(
        message
        or "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted)
    )
    err.content_type = content_type
    return err


def too_many_requests(
    retry_after: int, message: str = "Too many requests, please try again later."
) -> TooManyRequestsError:
    return TooManyRequestsError(message, {"retryAfterSeconds": retry_after})


def internal(message: str) -> InternalError:
    return InternalError(f"Internal error occurred: {message}", {"causes": [{"message": message}]})


def service_unavailable(message: str) -> ServiceUnavailableError:
    return ServiceUnavailableError(message)


def unauthorized(message: str = "Unauthorized") -> UnauthorizedError:
    return UnauthorizedError(message or "not authorized")


def timeout(message: str, retry_after: int = 0) -> TimeoutStatusError:
    return TimeoutStatusError(f"Timeout: {message}", {"retryAfterSeconds": retry_after})


def too_large_resource_version(requested: int, current: int) -> TimeoutStatusError:
    """504 for a read at a resourceVersion the store has not reached (Kubernetes' wording)."""
    return TimeoutStatusError(
        f"Timeout: Too large resource version: {requested}, current: {current}",
        {"retryAfterSeconds": 1,
         "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]},
    )
