"""Status errors: exact Kubernetes messages, the wire form, and rebuilding the right class."""

from __future__ import annotations

import pickle

import pytest

from api import errors
from api.errors import FieldError, StatusError

# ---------------------------------------------------------------- constructors: message, code, reason


@pytest.mark.parametrize(
    ("err", "cls", "code", "reason", "message"),
    [
        (errors.not_found("pods", "x"), errors.NotFoundError, 404, "NotFound", 'pods "x" not found'),
        (
            errors.not_found("deployments.apps", "web"),
            errors.NotFoundError,
            404,
            "NotFound",
            'deployments.apps "web" not found',
        ),
        (
            errors.already_exists("pods", "x"),
            errors.AlreadyExistsError,
            409,
            "AlreadyExists",
            'pods "x" already exists',
        ),
        (
            errors.conflict("pods", "x"),
            errors.ConflictError,
            409,
            "Conflict",
            'Operation cannot be fulfilled on pods "x": the object has been modified; '
            "please apply your changes to the latest version and try again",
        ),
        (errors.bad_request("nope"), errors.BadRequestError, 400, "BadRequest", "nope"),
        (
            errors.expired("too old resource version: 5 (10)"),
            errors.GoneError,
            410,
            "Expired",
            "too old resource version: 5 (10)",
        ),
        (errors.gone("gone away"), errors.GoneError, 410, "Gone", "gone away"),
        (
            errors.forbidden("pods", "x", "no way"),
            errors.ForbiddenError,
            403,
            "Forbidden",
            'pods "x" is forbidden: no way',
        ),
        (
            errors.forbidden_error("pods", "", "no way"),
            errors.ForbiddenError,
            403,
            "Forbidden",
            "pods is forbidden: no way",
        ),
        (
            errors.method_not_allowed(),
            errors.MethodNotAllowedError,
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        ),
        (
            errors.method_not_allowed("pods", "watch"),
            errors.MethodNotAllowedError,
            405,
            "MethodNotAllowed",
            'watch is not supported on resources of kind "pods"',
        ),
        (
            errors.too_large(3145728),
            errors.RequestEntityTooLargeError,
            413,
            "RequestEntityTooLarge",
            "Request entity too large: limit is 3145728",
        ),
        (
            errors.unsupported_media_type("application/vnd.kubernetes.protobuf"),
            errors.UnsupportedMediaTypeError,
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml",
        ),
        (
            errors.too_many_requests(3),
            errors.TooManyRequestsError,
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
        ),
        (
            errors.internal("boom"),
            errors.InternalError,
            500,
            "InternalError",
            "Internal error occurred: boom",
        ),
        (
            errors.service_unavailable("storage down"),
            errors.ServiceUnavailableError,
            503,
            "ServiceUnavailable",
            "storage down",
        ),
        (errors.unauthorized(), errors.UnauthorizedError, 401, "Unauthorized", "Unauthorized"),
        (errors.timeout("slow"), errors.TimeoutStatusError, 504, "Timeout", "Timeout: slow"),
        (
            errors.not_found_path(),
            errors.NotFoundError,
            404,
            "NotFound",
            "the server could not find the requested resource",
        ),
    ],
)
def test_constructor_builds_kubernetes_status(
    err: StatusError, cls: type[StatusError], code: int, reason: str, message: str
) -> None:
    assert type(err) is cls
    assert (err.code, err.reason, err.message, str(err)) == (code, reason, message, message)
    status = err.to_status()
    assert status["kind"] == "Status" and status["apiVersion"] == "v1" and status["status"] == "Failure"
    assert (status["code"], status["reason"], status["message"]) == (code, reason, message)
    rebuilt = StatusError.from_status(status)
    assert type(rebuilt) is cls and rebuilt.to_status() == status


def test_not_found_details_name_the_group_and_plural_and_omit_empty_fields() -> None:
    assert errors.not_found("deployments.apps", "web").to_status()["details"] == {
        "name": "web",
        "group": "apps",
        "kind": "deployments",
    }
    assert errors.not_found("pods", "x").to_status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "x" not found',
        "reason": "NotFound",
        "details": {"name": "x", "kind": "pods"},
        "code": 404,
    }


def test_empty_details_are_omitted() -> None:
    assert "details" not in errors.bad_request("x").to_status()
    assert "details" not in errors.not_found_path().to_status()


def test_too_many_requests_carries_retry_after() -> None:
    err = errors.too_many_requests(7)
    assert err.to_status()["details"] == {"retryAfterSeconds": 7}
    assert StatusError.from_status(err.to_status()).retry_after_seconds == 7


def test_unsupported_media_type_can_list_other_types_or_say_something_better() -> None:
    err = errors.unsupported_media_type("text/plain", accepted=["application/merge-patch+json"])
    assert err.message.endswith("accepted media types include: application/merge-patch+json")
    assert err.content_type == "text/plain"
    assert errors.unsupported_media_type("x", "use client-side apply").message == "use client-side apply"


# ---------------------------------------------------------------- 422 Invalid


def test_invalid_with_one_cause_prints_it_bare() -> None:
    err = errors.invalid("Pod", "", "x", [errors.required("spec.containers[0].image")])
    assert err.message == 'Pod "x" is invalid: spec.containers[0].image: Required value'
    assert err.to_status()["details"] == {
        "name": "x",
        "kind": "Pod",
        "causes": [{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers[0].image"}],
    }
    assert isinstance(StatusError.from_status(err.to_status()), errors.InvalidError)


def test_invalid_with_several_causes_brackets_them_and_names_the_group() -> None:
    err = errors.invalid(
        "Deployment",
        "apps",
        "web",
        [errors.required("spec.selector"), errors.invalid_value("spec.replicas", -1, "must be >= 0")],
    )
    assert err.message == (
        'Deployment.apps "web" is invalid: [spec.selector: Required value, '
        "spec.replicas: Invalid value: -1: must be >= 0]"
    )
    assert [c["reason"] for c in err.causes] == ["FieldValueRequired", "FieldValueInvalid"]
    assert err.details is not None and err.details["group"] == "apps"


def test_invalid_accepts_cause_dicts_and_prints_repeated_messages_once() -> None:
    cause = {"reason": "FieldValueRequired", "message": "Required value", "field": "a"}
    err = errors.invalid("Pod", "", "x", [cause, cause])
    assert err.message == 'Pod "x" is invalid: a: Required value'
    assert len(err.causes) == 2


def test_invalid_without_causes_says_only_invalid() -> None:
    assert errors.invalid("Pod", "", "x", []).message == 'Pod "x" is invalid'


def test_invalid_patch_is_a_422_with_the_detail_as_a_cause() -> None:
    err = errors.invalid_patch("test operation failed")
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.causes == [{"field": "patch", "message": "test operation failed"}]


# ---------------------------------------------------------------- field errors


@pytest.mark.parametrize(
    ("err", "reason", "text"),
    [
        (errors.required("spec.x"), "FieldValueRequired", "spec.x: Required value"),
        (errors.required("spec.x", "must say"), "FieldValueRequired", "spec.x: Required value: must say"),
        (
            errors.invalid_value("m.name", "Foo", "bad"),
            "FieldValueInvalid",
            'm.name: Invalid value: "Foo": bad',
        ),
        (errors.invalid_value("n", 3, "too big"), "FieldValueInvalid", "n: Invalid value: 3: too big"),
        (errors.invalid_value("b", True, "no"), "FieldValueInvalid", "b: Invalid value: true: no"),
        (
            errors.invalid_value("o", {"b": 1, "a": 2}, "x"),
            "FieldValueInvalid",
            'o: Invalid value: {"a":2,"b":1}: x',
        ),
        (
            errors.immutable("spec.selector", "a"),
            "FieldValueInvalid",
            'spec.selector: Invalid value: "a": field is immutable',
        ),
        (errors.forbidden("spec.x", "not here"), "FieldValueForbidden", "spec.x: Forbidden: not here"),
        (
            errors.not_supported("spec.restartPolicy", "Sometimes", ["Always", "OnFailure", "Never"]),
            "FieldValueNotSupported",
            'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        ),
        (
            errors.duplicate("spec.ports[1].name", "http"),
            "FieldValueDuplicate",
            'spec.ports[1].name: Duplicate value: "http"',
        ),
        (
            errors.too_long("m.name", "x" * 300, 253),
            "FieldValueTooLong",
            "m.name: Too long: may not be more than 253 bytes",
        ),
        (
            errors.too_many("spec.items", 5, 3),
            "FieldValueTooMany",
            "spec.items: Too many: 5: must have at most 3 items",
        ),
        (errors.not_found_value("spec.x", "y"), "FieldValueNotFound", 'spec.x: Not found: "y"'),
    ],
)
def test_field_error_reason_and_text(err: FieldError, reason: str, text: str) -> None:
    assert err.reason == reason and str(err) == text
    assert err.to_cause() == {"reason": reason, "message": text.split(": ", 1)[1], "field": err.field}


def test_field_error_quotes_strings_like_go() -> None:
    assert errors.invalid_value("f", 'a"b\n', "").body() == 'Invalid value: "a\\"b\\n"'
    assert errors.go_quote("\x01é") == '"\\x01é"'


def test_field_error_constructor_is_positional_and_checks_the_type() -> None:
    assert FieldError("Invalid", "f", "v", "d") == errors.invalid_value("f", "v", "d")
    assert FieldError("Required", "a").to_cause() == errors.required("a").to_cause()
    with pytest.raises(ValueError, match="unknown field error type"):
        FieldError("Wrong", "a")


def test_forbidden_two_arguments_is_a_field_error_three_is_a_status_error() -> None:
    assert isinstance(errors.forbidden("spec.x", "no"), FieldError)
    assert isinstance(errors.forbidden("pods", "x", "no"), errors.ForbiddenError)
    with pytest.raises(TypeError):
        errors.forbidden("only-one")  # type: ignore[call-overload]


# ---------------------------------------------------------------- from_status fallbacks


def test_unknown_reason_falls_back_to_the_code() -> None:
    err = StatusError.from_status({"kind": "Status", "code": 404, "reason": "SomethingNew", "message": "m"})
    assert isinstance(err, errors.NotFoundError) and err.reason == "SomethingNew" and err.code == 404


def test_reason_wins_over_code_and_409_without_reason_is_a_conflict() -> None:
    assert type(StatusError.from_status({"code": 409, "reason": "AlreadyExists"})) is errors.AlreadyExistsError
    assert type(StatusError.from_status({"code": 409})) is errors.ConflictError
    assert type(StatusError.from_status({"code": 500, "reason": "ServerTimeout"})) is errors.ServerTimeoutError


def test_unknown_code_and_reason_give_the_base_class() -> None:
    err = StatusError.from_status({"code": 418, "message": "teapot"})
    assert type(err) is StatusError and err.code == 418 and str(err) == "teapot" and err.reason == ""
    assert "reason" not in err.to_status()


def test_gone_and_expired_are_both_gone_errors() -> None:
    for reason in ("Gone", "Expired"):
        err = StatusError.from_status({"reason": reason, "message": "m"})  # the reason alone decides
        assert isinstance(err, errors.GoneError) and err.reason == reason and err.code == 410


def test_status_errors_survive_pickling_with_their_message() -> None:
    err = pickle.loads(pickle.dumps(errors.not_found("pods", "x")))
    assert isinstance(err, errors.NotFoundError) and str(err) == 'pods "x" not found'
