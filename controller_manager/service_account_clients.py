"""`--use-service-account-credentials`: each controller talks to the API server as its own
ServiceAccount, as kube-controller-manager does when kubeadm starts it (seed 002's command line).

Why: the manager's own identity (`system:kube-controller-manager`) may only read (its informers
list and watch everything) and mint tokens; every write a controller makes is authorized against
that controller's role, `system:controller:<account>` (apiserver/auth/bootstrap_controllers.py).
A bug in the CronJob controller cannot then delete Secrets, and the audit log names which
controller did what (`system:serviceaccount:kube-system:replicaset-controller`).

How, as Kubernetes' SAControllerClientBuilder does it: for each controller, make sure the
ServiceAccount `kube-system/<account>` exists (create it if not), ask the TokenRequest API for a
token (an hour's life), and give the controller a client that carries only that token — same
server, same CA, no client certificate. The token is renewed at 80% of its life.
The shared informers keep the manager's own client: one watch per kind, whoever reads it. So
does the token controller (api/controller_accounts.py OWN_CREDENTIALS), as in Kubernetes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from api.errors import AlreadyExistsError, NotFoundError
from client import ClientConfig, RESTClient

log = logging.getLogger("controller_manager")
NAMESPACE = "kube-system"
TOKEN_SECONDS = 3600
RETRY_MAX = 30.0


class ServiceAccountClients:
    """Clients as controllers' ServiceAccounts, made with the manager's own `client`."""

    def __init__(self, client: RESTClient, config: ClientConfig, *, qps: float, burst: int) -> None:
        self.client = client
        self.config = config
        self.qps = qps
        self.burst = burst
        self._clients: list[RESTClient] = []
        self._renewals: list[asyncio.Task[None]] = []

    async def client_for(self, account: str) -> RESTClient:
        """A client authenticated as ServiceAccount kube-system/<account>; waits (retrying with
        back-off) until the API server issues a token, as kube-controller-manager waits."""
        token, expires = await self._token_with_retries(account)
        # the kubeconfig's CA stays; its client certificate must not: the token is the identity
        creds = self.config.credentials.with_token(token)
        sa_client = RESTClient(self.config.server, qps=self.qps, burst=self.burst, namespace=self.config.namespace,
                               user_agent=f"mini-controller-manager/{account}", credentials=creds)  # fmt: skip
        self._clients.append(sa_client)
        self._renewals.append(asyncio.create_task(self._renew(account, sa_client, expires), name=f"token-{account}"))
        return sa_client

    async def _token_with_retries(self, account: str) -> tuple[str, float]:
        delay = 0.5
        while True:
            try:
                await self._ensure_account(account)
                return await self._request_token(account)
            except Exception as exc:  # noqa: BLE001 - the API server may be starting or lack a signing key
                log.warning("no token for ServiceAccount %s/%s yet (retrying in %.1fs): %s", NAMESPACE, account,
                            delay, exc)  # fmt: skip
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)

    async def _ensure_account(self, account: str) -> None:
        try:
            await self.client.get("serviceaccounts", account, NAMESPACE)
        except NotFoundError:
            try:
                await self.client.create("serviceaccounts", {"metadata": {"name": account}}, NAMESPACE)
            except AlreadyExistsError:
                pass

    async def _request_token(self, account: str) -> tuple[str, float]:
        """(token, when to renew it, on the monotonic clock)."""
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": TOKEN_SECONDS}}  # fmt: skip
        answer: dict[str, Any] = await self.client.create("serviceaccounts", body, NAMESPACE, name=account,
                                                          subresource="token")  # fmt: skip
        token = str(answer["status"]["token"])
        life = float((answer.get("spec") or {}).get("expirationSeconds") or TOKEN_SECONDS)
        return token, time.monotonic() + 0.8 * life

    async def _renew(self, account: str, sa_client: RESTClient, renew_at: float) -> None:
        while True:
            await asyncio.sleep(max(0.0, renew_at - time.monotonic()))
            token, renew_at = await self._token_with_retries(account)
            sa_client.set_bearer_token(token)
            log.info("renewed the token of ServiceAccount %s/%s", NAMESPACE, account)

    async def aclose(self) -> None:
        for task in self._renewals:
            task.cancel()
        for c in self._clients:
            await c.aclose()
