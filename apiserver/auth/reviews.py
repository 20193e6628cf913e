"""The review APIs: a user asks the server about themselves, or an administrator about anyone.

    POST /apis/authentication.k8s.io/v1/selfsubjectreviews        kubectl auth whoami
    POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews   kubectl auth can-i VERB RESOURCE
    POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews    kubectl auth can-i --list
    POST /apis/authorization.k8s.io/v1/subjectaccessreviews       can user X ...? (needs the right to ask)
    POST /apis/authorization.k8s.io/v1/namespaces/NS/localsubjectaccessreviews

Nothing is stored: each answers a question with the very authorizer that guards every request,
so `can-i` says exactly what a real request would meet. The answer is the request object with
its `status` filled in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import Request, Response

from api import errors
from apiserver import codec
from apiserver.auth import rbac
from apiserver.auth.context import current_user
from apiserver.auth.requestinfo import RequestAttributes
from apiserver.auth.user import MASTERS, UserInfo
from apiserver.handlers.common import json_response, read_body

if TYPE_CHECKING:
    from apiserver.auth.authorize import Authorizer
    from apiserver.server import APIServer

Obj = dict[str, Any]
AUTHN, AUTHZ = "authentication.k8s.io", "authorization.k8s.io"
KINDS = {
    (AUTHN, "selfsubjectreviews"): "SelfSubjectReview",
    (AUTHZ, "selfsubjectaccessreviews"): "SelfSubjectAccessReview",
    (AUTHZ, "selfsubjectrulesreviews"): "SelfSubjectRulesReview",
    (AUTHZ, "subjectaccessreviews"): "SubjectAccessReview",
    (AUTHZ, "localsubjectaccessreviews"): "LocalSubjectAccessReview",
}


def serves(group: str, version: str) -> bool:
    return group in (AUTHN, AUTHZ) and version == "v1"


def attributes_of(spec: Obj) -> RequestAttributes:
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if bool(res) == bool(non):
        raise errors.invalid("SelfSubjectAccessReview", "", "", [errors.required(
            "spec.resourceAttributes", "exactly one of nonResourceAttributes or resourceAttributes must be specified")])
    if non:
        return RequestAttributes(non.get("verb") or "", non.get("path") or "")
    return RequestAttributes(res.get("verb") or "", "", True, res.get("group") or "", res.get("version") or "",
                             res.get("resource") or "", res.get("subresource") or "", res.get("namespace") or "",
                             res.get("name") or "")  # fmt: skip


def rules_for(authorizer: Authorizer, user: UserInfo, namespace: str) -> Obj:
    """SelfSubjectRulesReview status: what the user may do in `namespace`, as RBAC rules."""
    if "AlwaysAllow" in authorizer.modes or MASTERS in user.groups:
        return {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}  # fmt: skip
    resource_rules, non_resource_rules = [], []
    for rule in rbac.rules_in(authorizer.index(), user, namespace):
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": rule.get("verbs") or [], "nonResourceURLs": rule["nonResourceURLs"]})
        else:
            resource_rules.append({k: rule[k] for k in ("verbs", "apiGroups", "resources", "resourceNames")
                                   if rule.get(k)})  # fmt: skip
    return {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}


async def handle(server: APIServer, request: Request, group: str, segments: list[str]) -> Response:
    namespace = ""
    if len(segments) == 3 and segments[0] == "namespaces":
        namespace, segments = segments[1], segments[2:]
    kind = KINDS.get((group, segments[0])) if len(segments) == 1 else None
    if kind is None or (kind == "LocalSubjectAccessReview") != bool(namespace):
        raise errors.not_found_path()
    if request.method != "POST":
        raise errors.method_not_allowed()
    body = codec.decode_body(await read_body(request, server.config.max_request_bytes),
                             request.headers.get("content-type"))  # fmt: skip
    if not isinstance(body, dict):
        raise errors.bad_request("the body must be a JSON object")
    authorizer: Authorizer = request.app.state.security.authorizer
    user, spec = current_user(), dict(body.get("spec") or {})
    if kind == "SelfSubjectReview":
        status: Obj = {"userInfo": user.as_status()}
        spec = {}
    elif kind == "SelfSubjectRulesReview":
        status = rules_for(authorizer, user, spec.get("namespace") or "")
    else:
        if kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
            if not spec.get("user") and not spec.get("groups"):
                missing = errors.required("spec.user", "at least one of user or group must be specified")
                raise errors.invalid(kind, "", "", [missing])
            user = UserInfo(spec.get("user") or "", spec.get("uid") or "", tuple(spec.get("groups") or ()))
            if namespace and (spec.get("resourceAttributes") or {}).get("namespace", namespace) != namespace:
                raise errors.invalid(kind, "", "", [errors.invalid_value(
                    "spec.resourceAttributes.namespace", (spec.get("resourceAttributes") or {}).get("namespace"),
                    "must match metadata.namespace")])  # fmt: skip
        allowed = authorizer.allowed(user, attributes_of(spec))
        status = {"allowed": allowed}
    metadata: Obj = {"creationTimestamp": None, **({"namespace": namespace} if namespace else {})}
    answer: Obj = {"kind": kind, "apiVersion": f"{group}/v1", "metadata": metadata}
    if kind != "SelfSubjectReview":  # the one review without a spec
        answer["spec"] = spec
    answer["status"] = status
    return json_response(answer, 201)
