"""Authentication: credentials → a user, or 401.

The authenticators are tried as kube-apiserver tries them: the x509 client certificate (already
verified against `--client-ca-file` by the TLS handshake; CN is the user, each O a group), then a
bearer token — the static token file, then ServiceAccount JWTs. A request that presents a
credential no authenticator accepts is refused with 401, even if anonymous requests are allowed:
a wrong password is not "no password". A request with no credential at all is
`system:anonymous` in `system:unauthenticated` when `--anonymous-auth` is on (the default), else
401. Every authenticated user is also in `system:authenticated`.
"""

from __future__ import annotations

import functools

from cryptography import x509
from cryptography.x509.oid import NameOID

from apiserver.auth import tokenfile
from apiserver.auth.serviceaccount_tokens import ServiceAccountTokens
from apiserver.auth.user import ANONYMOUS_USER, AUTHENTICATED, UserInfo


class Unauthorized(Exception):
    """The request's credentials were not accepted (or it had none and anonymous is off)."""


@functools.lru_cache(maxsize=512)
def certificate_user(der: bytes) -> UserInfo:
    """CN and O of a client certificate the handshake has verified. Cached by the certificate's
    bytes: every request of a kubelet or controller carries the same one, and parsing it is the
    dearest part of authenticating them (a certificate that fails raises, and is not cached)."""
    cert = x509.load_der_x509_certificate(der)
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names:
        raise Unauthorized("client certificate has no common name")
    groups = [str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    return UserInfo(str(names[0].value), groups=(*groups, AUTHENTICATED))


class Authenticator:
    def __init__(
        self,
        *,
        tokens: tokenfile.TokenTable | None = None,
        service_accounts: ServiceAccountTokens | None = None,
        anonymous: bool = True,
    ) -> None:
        self.tokens = tokens or {}
        self.service_accounts = service_accounts
        self.anonymous = anonymous

    async def authenticate(self, authorization: str, peer_certificate: bytes | None) -> UserInfo:
        if peer_certificate:
            return certificate_user(peer_certificate)
        if authorization:
            scheme, _, token = authorization.partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token:
                raise Unauthorized("unsupported authorization scheme")
            user = tokenfile.lookup(self.tokens, token)
            if user is None and self.service_accounts is not None:
                user = await self.service_accounts.authenticate(token)
            if user is None:
                raise Unauthorized("invalid bearer token")
            return user
        if self.anonymous:
            return ANONYMOUS_USER
        raise Unauthorized("no credentials")
