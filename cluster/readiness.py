"""Is the cluster up yet? Three questions, each asked over HTTP like any client would ask them.

- the API server: `GET /readyz` is 200 (storage reachable, watch cache primed);
- controller-manager, scheduler, kubelets: `GET /healthz` on their own port is 200;
- every node: the Node object's `Ready` condition is `True` - which proves the whole chain:
  the kubelet registered through the API server, the store kept it, and heartbeats flow.

`wait_for` is the one loop `up` needs: poll a condition until it holds, but give up at a deadline,
when a watched process exits (no point waiting for a dead kubelet), or when the user hits Ctrl-C.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from api.errors import StatusError
from client import ConnectionFailed, RESTClient
from client.credentials import Credentials
from cluster.plan import Component
from cluster.processes import Handle


class StartupError(Exception):
    """The cluster did not come up; `component` is the one to blame (its log tail is shown)."""

    def __init__(self, message: str, component: str = "") -> None:
        super().__init__(message)
        self.component = component


class Interrupted(Exception):
    """Ctrl-C or SIGTERM arrived while waiting."""


def admin_credentials(server: str, pki_dir: Path) -> Credentials | None:
    """How `up` and `status` reach an HTTPS-only API server (`--secure` without a plain `--port`): as
    the administrator, with the CA and the certificate `up` made (cluster/pki.py)."""
    if not server.startswith("https://"):
        return None
    return Credentials(ca_file=str(pki_dir / "ca.crt"), cert_file=str(pki_dir / "admin.crt"),
                       key_file=str(pki_dir / "admin.key"))  # fmt: skip


class Prober:
    """One RESTClient per endpoint, reused across polls."""

    def __init__(self, server: str, credentials: Credentials | None = None) -> None:
        self.api = RESTClient(
            server, qps=100, burst=100, timeout=2.0, user_agent="mini-k8s-up", credentials=credentials
        )
        self._health: dict[int, RESTClient] = {}

    async def healthy(self, component: Component) -> bool:
        if component.kind == "apiserver":
            client = self.api
        else:
            client = self._health.setdefault(
                component.port,
                RESTClient(f"http://127.0.0.1:{component.port}", timeout=2.0, user_agent="mini-k8s-up"),
            )
        try:
            await client.raw("GET", component.health_path)
        except (ConnectionFailed, StatusError):
            return False
        return True

    async def nodes(self) -> list[dict[str, Any]]:
        try:
            return list((await self.api.list("nodes")).get("items") or [])
        except (ConnectionFailed, StatusError):
            return []

    async def aclose(self) -> None:
        for c in (self.api, *self._health.values()):
            await c.aclose()


def node_ready(node: dict[str, Any], *, since: float | None = None) -> bool:
    """Is the Node's Ready condition True - and, with `since` (a Unix time), was it posted after
    that moment? A second `up` finds the Node objects of the first one, still saying Ready until
    the node lifecycle controller notices; only a heartbeat from the new kubelet counts."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            if cond.get("status") != "True":
                return False
            if since is None:
                return True
            try:
                beat = datetime.fromisoformat(str(cond.get("lastHeartbeatTime"))).timestamp()
            except ValueError:
                return False
            return beat >= int(since)  # RFC 3339 times here have whole seconds
    return False


async def wait_for(
    condition: Callable[[], Awaitable[bool]],
    *,
    what: str,
    deadline: float,
    watch: Sequence[Handle],
    stop: asyncio.Event,
    blame: Callable[[], str] | str = "",
    interval: float = 0.2,
) -> None:
    """Poll `condition()` until True. Raises StartupError (deadline passed, or a watched process
    exited) or Interrupted (the `stop` event was set)."""
    while True:
        if stop.is_set():
            raise Interrupted()
        for h in watch:
            if not h.alive():
                code = h.proc.returncode if h.proc is not None else None
                raise StartupError(f"{h.name} exited with code {code} while waiting for {what}", h.name)
        if await condition():
            return
        if time.monotonic() > deadline:
            raise StartupError(f"timed out waiting for {what}", blame() if callable(blame) else blame)
        try:
            await asyncio.wait_for(stop.wait(), timeout=interval)
        except TimeoutError:
            pass
