"""The legacy ServiceAccount token: a JWT with the claims Kubernetes has put in token Secrets
since 1.0 (pkg/serviceaccount/legacy.go), signed with PyJWT.

    header  {"alg": "RS256" (RSA) | "ES256"/"ES384"/"ES512" (EC by curve), "kid": <key id>}
    claims  {"iss": "kubernetes/serviceaccount",
             "kubernetes.io/serviceaccount/namespace": "default",
             "kubernetes.io/serviceaccount/secret.name": "build-robot-token",
             "kubernetes.io/serviceaccount/service-account.name": "build-robot",
             "kubernetes.io/serviceaccount/service-account.uid": "5d1c…",
             "sub": "system:serviceaccount:default:build-robot"}

No `exp`: legacy tokens live as long as their Secret. The key id is Kubernetes' too: the
unpadded URL-safe base64 of the SHA-256 of the public key's DER (PKIX) encoding, so a verifier
with several keys can pick the right one.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from controller_manager.credentials import SigningKey

ISSUER = "kubernetes/serviceaccount"
_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


def algorithm(key: SigningKey) -> str:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        if key.curve.name not in _EC_ALGORITHMS:
            raise ValueError(f"EC curve {key.curve.name} cannot sign service account tokens")
        return _EC_ALGORITHMS[key.curve.name]
    return "RS256"


def key_id(key: SigningKey) -> str:
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")


def legacy_claims(sa: dict[str, Any], secret_name: str) -> dict[str, str]:
    meta = sa["metadata"]
    ns, name = meta.get("namespace") or "", meta["name"]
    return {
        "iss": ISSUER,
        "kubernetes.io/serviceaccount/namespace": ns,
        "kubernetes.io/serviceaccount/secret.name": secret_name,
        "kubernetes.io/serviceaccount/service-account.name": name,
        "kubernetes.io/serviceaccount/service-account.uid": meta.get("uid") or "",
        "sub": f"system:serviceaccount:{ns}:{name}",
    }


def legacy_token(key: SigningKey, sa: dict[str, Any], secret_name: str) -> str:
    return jwt.encode(legacy_claims(sa, secret_name), key, algorithm=algorithm(key), headers={"kid": key_id(key)})
