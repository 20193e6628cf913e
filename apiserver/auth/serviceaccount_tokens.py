"""ServiceAccount tokens: JWTs signed by the controller-manager, checked here with PyJWT.

Two kinds exist, as in Kubernetes:

- legacy tokens, in `kubernetes.io/service-account-token` Secrets (the controller-manager's
  serviceaccount-token controller writes them): issuer `kubernetes/serviceaccount`, no expiry.
  They are valid only while their Secret exists, still names the account, and the account is
  the one (same uid) the token was made for (`--service-account-lookup`, on by default).
- bound tokens from the TokenRequest API (`kubectl create token`): issuer
  `--service-account-issuer`, an audience, an expiry, and the `kubernetes.io` claim naming the
  account and maybe the pod they are bound to; gone with their account or pod.

The keys that verify are `--service-account-key-file` (PEM, public or private, several allowed);
the token's `kid` picks one, as the controller-manager sets it (the SHA-256 of the public key).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from apiserver.auth.user import UserInfo, service_account_user

LEGACY_ISSUER = "kubernetes/serviceaccount"
_NS, _SECRET = "kubernetes.io/serviceaccount/namespace", "kubernetes.io/serviceaccount/secret.name"
_SA_NAME = "kubernetes.io/serviceaccount/service-account.name"
_SA_UID = "kubernetes.io/serviceaccount/service-account.uid"
_ALGORITHMS = ["RS256", "ES256", "ES384", "ES512"]

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
# (resource key, namespace, name) → the object, or None when it does not exist
Getter = Callable[[str, str, str], Awaitable[dict[str, Any] | None]]


def key_id(key: PublicKey) -> str:
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")


def load_public_keys(paths: list[str]) -> dict[str, PublicKey]:
    """Every key in the files, by key id; private keys count with their public half."""
    keys: dict[str, PublicKey] = {}
    for path in paths:
        data = open(path, "rb").read()
        blocks = [b"-----BEGIN" + chunk for chunk in data.split(b"-----BEGIN")[1:]]
        for block in blocks:
            key: Any
            if b"PRIVATE KEY" in block.split(b"\n", 1)[0]:
                key = serialization.load_pem_private_key(block, password=None).public_key()
            elif b"CERTIFICATE" in block.split(b"\n", 1)[0]:
                from cryptography import x509

                key = x509.load_pem_x509_certificate(block).public_key()
            else:
                key = serialization.load_pem_public_key(block)
            if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
                raise ValueError(f"{path}: only RSA and EC keys verify service account tokens")
            keys[key_id(key)] = key
    return keys


class ServiceAccountTokens:
    def __init__(self, keys: dict[str, PublicKey], issuers: list[str], get: Getter, lookup: bool = True) -> None:
        self.keys = keys
        self.issuers = issuers
        self.get = get
        self.lookup = lookup

    def _claims(self, token: str) -> dict[str, Any] | None:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        candidates = [self.keys[header["kid"]]] if header.get("kid") in self.keys else list(self.keys.values())
        for key in candidates:
            try:
                return jwt.decode(token, key, algorithms=_ALGORITHMS,
                                  options={"verify_aud": False, "verify_iss": False})  # fmt: skip
            except jwt.ExpiredSignatureError:
                return None
            except jwt.PyJWTError:
                continue
        return None

    async def authenticate(self, token: str) -> UserInfo | None:
        """The account's user, or None when the token is not valid (forged, expired, revoked)."""
        claims = self._claims(token)
        if claims is None:
            return None
        if claims.get("iss") == LEGACY_ISSUER:
            return await self._legacy(claims)
        if claims.get("iss") in self.issuers:
            return await self._bound(claims)
        return None

    async def _legacy(self, claims: dict[str, Any]) -> UserInfo | None:
        ns, name, uid = claims.get(_NS) or "", claims.get(_SA_NAME) or "", claims.get(_SA_UID) or ""
        if not (ns and name) or claims.get("sub") != f"system:serviceaccount:{ns}:{name}":
            return None
        if self.lookup:
            secret = await self.get("secrets", ns, claims.get(_SECRET) or "")
            annotations = ((secret or {}).get("metadata") or {}).get("annotations") or {}
            if secret is None or annotations.get("kubernetes.io/service-account.name") != name:
                return None
            sa = await self.get("serviceaccounts", ns, name)
            if sa is None or (uid and sa["metadata"].get("uid") != uid):
                return None
        return service_account_user(ns, name, uid)

    async def _bound(self, claims: dict[str, Any]) -> UserInfo | None:
        audiences = claims.get("aud") or []
        if not set([audiences] if isinstance(audiences, str) else audiences) & set(self.issuers):
            return None  # the API server's audience is its issuer (--api-audiences' default)
        k8s = claims.get("kubernetes.io") or {}
        ns = k8s.get("namespace") or ""
        account = k8s.get("serviceaccount") or {}
        name, uid = account.get("name") or "", account.get("uid") or ""
        if not (ns and name) or claims.get("sub") != f"system:serviceaccount:{ns}:{name}":
            return None
        sa = await self.get("serviceaccounts", ns, name)
        if sa is None or sa["metadata"].get("uid") != uid:
            return None
        secret = k8s.get("secret")
        if secret:
            live = await self.get("secrets", ns, secret.get("name") or "")
            if live is None or live["metadata"].get("uid") != secret.get("uid"):
                return None
        pod = k8s.get("pod")
        user = service_account_user(ns, name, uid)
        if pod:
            live = await self.get("pods", ns, pod.get("name") or "")
            if live is None or live["metadata"].get("uid") != pod.get("uid"):
                return None
            extra = {"authentication.kubernetes.io/pod-name": (pod["name"],),
                     "authentication.kubernetes.io/pod-uid": (pod["uid"],)}  # fmt: skip
            user = UserInfo(user.name, user.uid, user.groups, extra)
        return user
