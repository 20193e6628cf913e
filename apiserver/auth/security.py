"""The server's security settings put together: built once from the flags, asked once per request.

`check()` answers, for one request, "as whom does it act?" — or raises the 401/403 Status. It is
called by front.py before anything else reads the request. `--port` (plain HTTP) requests skip
it: they are `system:unsecured`, as on kube-apiserver's old insecure port.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from api import errors, registry
from apiserver.auth.audit import AuditLog
from apiserver.auth.authenticate import Authenticator, Unauthorized
from apiserver.auth.authorize import Authorizer, parse_modes
from apiserver.auth.impersonation import impersonate
from apiserver.auth.requestinfo import RequestAttributes
from apiserver.auth.serviceaccount_tokens import ServiceAccountTokens, load_public_keys
from apiserver.auth.tokenfile import load_token_file
from apiserver.auth.tokenrequest import TokenIssuer
from apiserver.auth.user import UNSECURED, UserInfo

if TYPE_CHECKING:
    from apiserver.config import ServerConfig
    from apiserver.server import APIServer


@dataclass
class Decision:
    user: UserInfo  # who the request acts as (the impersonated user, if any)
    real_user: UserInfo  # who presented the credentials
    attrs: RequestAttributes


class Security:
    def __init__(self, config: ServerConfig, server: APIServer) -> None:
        self.server = server
        self.secure_port = config.secure_port if config.tls_cert_file else 0
        # the TokenRequest signing key verifies too (Kubernetes defaults --service-account-key-file to it)
        key_files = [*config.service_account_key_files, *filter(None, [config.service_account_signing_key_file])]
        keys = load_public_keys(key_files) if key_files else {}
        accounts = ServiceAccountTokens(keys, config.service_account_issuers, self._get,
                                        config.service_account_lookup) if keys else None  # fmt: skip
        tokens = load_token_file(config.token_auth_file) if config.token_auth_file else {}
        self.authenticator = Authenticator(tokens=tokens, service_accounts=accounts, anonymous=config.anonymous_auth)
        self.authorizer = Authorizer(server, parse_modes(config.authorization_mode))
        self.audit = AuditLog(config.audit_log_path) if config.audit_log_path else None
        self.issuer = (TokenIssuer(config.service_account_signing_key_file, config.service_account_issuers[0])
                       if config.service_account_signing_key_file else None)  # fmt: skip

    async def _get(self, key: str, namespace: str, name: str) -> dict[str, Any] | None:
        rt = registry.by_key(key)
        assert rt is not None
        return self.server.cache(rt).peek(self.server.store(rt).key(namespace, name))

    @property
    def checks_anything(self) -> bool:
        """False when every request is system:unsecured and nothing is audited (plain HTTP only)."""
        return bool(self.secure_port) or self.audit is not None

    def is_secure(self, local_port: int) -> bool:
        return bool(self.secure_port) and local_port == self.secure_port

    async def identify(
        self, attrs: RequestAttributes, authorization: str, headers: list[tuple[str, str]], local_port: int,
        peer_certificate: bytes | None,
    ) -> Decision:  # fmt: skip
        """Who sends the request, and who it acts as: 401 for bad credentials, 403 for an
        impersonation the sender may not do. `headers` holds at least the Impersonate-* ones."""
        if not self.is_secure(local_port):
            return Decision(UNSECURED, UNSECURED, attrs)
        try:
            real = await self.authenticator.authenticate(authorization, peer_certificate)
        except Unauthorized:
            raise errors.unauthorized() from None
        if not headers:
            return Decision(real, real, attrs)
        return Decision(impersonate(real, headers, self.authorizer.allowed), real, attrs)

    def authorize(self, decision: Decision) -> None:
        """403 unless the user may do what the request asks."""
        self.authorizer.authorize(decision.user, decision.attrs)
