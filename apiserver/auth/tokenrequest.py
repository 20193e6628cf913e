"""The TokenRequest API: `POST .../serviceaccounts/NAME/token` — `kubectl create token NAME`.

The API server itself signs a short-lived ServiceAccount token (`--service-account-signing-key-file`,
issuer the first `--service-account-issuer`) — unlike the legacy Secret tokens the
controller-manager writes, it expires (`spec.expirationSeconds`, default 3600, at least 600; never
longer than `--service-account-max-token-expiration`, and the answer's spec says what was issued),
names its audiences (default: the issuer, which is what this server accepts) and can be bound to
a Pod or Secret (`spec.boundObjectRef`): serviceaccount_tokens.py refuses it once that object, or
the account, is gone. Without a signing key the subresource does not exist (404), as in Kubernetes.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from fastapi import Request, Response

from api import errors, registry
from api.timestamps import rfc3339
from apiserver.admission import Attributes
from apiserver.auth.serviceaccount_tokens import key_id
from apiserver.handlers.common import json_response, read_object_body
from apiserver.routing import RequestInfo

if TYPE_CHECKING:
    from apiserver.server import APIServer

DEFAULT_SECONDS, MIN_SECONDS = 3600, 600
_EC = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


class TokenIssuer:
    def __init__(self, key_file: str, issuer: str) -> None:
        key = serialization.load_pem_private_key(open(key_file, "rb").read(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
            raise ValueError(f"{key_file}: only RSA and EC keys sign service account tokens")
        self.key = key
        self.issuer = issuer
        self.algorithm = _EC.get(key.curve.name, "") if isinstance(key, ec.EllipticCurvePrivateKey) else "RS256"
        if not self.algorithm:
            raise ValueError(f"{key_file}: this EC curve cannot sign service account tokens")
        self.kid = key_id(key.public_key())

    def sign(self, claims: dict[str, Any]) -> str:
        return jwt.encode(claims, self.key, algorithm=self.algorithm, headers={"kid": self.kid})


async def handle_token_request(server: APIServer, request: Request, info: RequestInfo) -> Response:
    issuer: TokenIssuer | None = getattr(request.app.state.security, "issuer", None)
    if issuer is None:
        raise errors.not_found_path()
    assert info.name is not None and info.namespace is not None
    body = await read_object_body(request, server.config.max_request_bytes)
    spec = dict(body.get("spec") or {})
    seconds = spec.get("expirationSeconds") or DEFAULT_SECONDS
    if not isinstance(seconds, int) or seconds < MIN_SECONDS:
        raise errors.invalid("TokenRequest", "authentication.k8s.io", info.name, [errors.invalid_value(
            "spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")])  # fmt: skip
    cap = server.config.service_account_max_token_seconds
    if cap and seconds > cap:  # --service-account-max-token-expiration: issued for the cap, which the answer says
        seconds = cap
    # admission sees the TokenRequest as sent (NodeRestriction: a kubelet's token must be bound to its own pod)
    await server.admission.admit(Attributes("CREATE", info.rt, info.namespace, info.name, body, None, "token"))
    sa = await server.store(info.rt).get(info.namespace, info.name)
    audiences = list(spec.get("audiences") or [issuer.issuer])
    now = int(time.time())
    scope: dict[str, Any] = {"namespace": info.namespace,
                             "serviceaccount": {"name": info.name, "uid": sa["metadata"]["uid"]}}  # fmt: skip
    bound = spec.get("boundObjectRef")
    if bound:
        kind = bound.get("kind")
        if kind not in ("Pod", "Secret"):
            raise errors.invalid("TokenRequest", "authentication.k8s.io", info.name, [errors.not_supported(
                "spec.boundObjectRef.kind", kind, ["Pod", "Secret"])])  # fmt: skip
        rt = registry.by_key("pods" if kind == "Pod" else "secrets")
        assert rt is not None
        target = await server.store(rt).get(info.namespace, bound.get("name") or "")
        uid = target["metadata"]["uid"]
        if bound.get("uid") and bound["uid"] != uid:
            detail = (f"the UID in the bound object reference ({bound['uid']}) does not match the UID in record. "
                      "The object might have been deleted and then recreated")  # fmt: skip
            raise errors.conflict(rt.key, bound.get("name") or "", detail)
        scope[kind.lower()] = {"name": bound["name"], "uid": uid}
        spec["boundObjectRef"] = {**bound, "uid": uid, "apiVersion": "v1"}
    claims = {"aud": audiences, "exp": now + seconds, "iat": now, "nbf": now, "iss": issuer.issuer,
              "jti": str(uuid.uuid4()), "kubernetes.io": scope,
              "sub": f"system:serviceaccount:{info.namespace}:{info.name}"}  # fmt: skip
    spec.update(audiences=audiences, expirationSeconds=seconds)
    answer = {
        "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": info.name, "namespace": info.namespace, "creationTimestamp": rfc3339(now)},
        "spec": spec, "status": {"token": issuer.sign(claims), "expirationTimestamp": rfc3339(now + seconds)},
    }  # fmt: skip
    return json_response(answer, 201)
