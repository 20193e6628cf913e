"""Keep each APIService's `Available` condition true to what its backend answers.

kube-aggregator's availability controller, small: a Local APIService is always available; a
remote one is available when its Service and Endpoints resolve (endpoints.py) and its discovery
document (`GET /apis/<group>/<version>`) answers 2xx within 5 s. The check runs when an
APIService, Service or Endpoints object changes (watched through the caches' revisions, no
storage reads while nothing changes) and every `RECHECK` seconds, since a backend can die without
any object changing. The condition is written only when it changes, so `lastTransitionTime`
means what it says.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import httpx

from api import errors, registry
from api.timestamps import now_rfc3339
from apiserver.aggregator.endpoints import Unreachable, resolve
from apiserver.aggregator.proxy import tls_context
from apiserver.aggregator.table import API_SERVICES

if TYPE_CHECKING:
    from apiserver.server import APIServer

log = logging.getLogger("apiserver.aggregator")

RECHECK = 10.0  # seconds between checks when nothing changes
POLL = 0.2  # how often the caches' revisions are compared (in memory)
DISCOVERY_TIMEOUT = 5.0


async def check(server: APIServer, api_service: dict[str, Any]) -> tuple[str, str, str]:
    """(status, reason, message) of the Available condition."""
    spec = api_service.get("spec") or {}
    if not isinstance(spec.get("service"), dict):
        return "True", "Local", "Local APIServices are always available"
    try:
        backend = await resolve(server, api_service)
    except Unreachable as exc:
        return "False", exc.reason, exc.message
    url = f"{backend.url}/apis/{spec.get('group')}/{spec.get('version')}"
    verify: Any = tls_context(backend.ca_bundle, backend.insecure) if url.startswith("https:") else True
    try:
        async with httpx.AsyncClient(verify=verify, timeout=DISCOVERY_TIMEOUT) as client:
            response = await client.get(url, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        return "False", "FailedDiscoveryCheck", f"failing or missing response from {url}: {exc or type(exc).__name__}"
    if not 200 <= response.status_code < 300:
        detail = f"bad status from {url}: {response.status_code}"
        return "False", "FailedDiscoveryCheck", f"failing or missing response from {url}: {detail}"
    return "True", "Passed", "all checks passed"


async def _record(server: APIServer, api_service: dict[str, Any], verdict: tuple[str, str, str]) -> None:
    from apiserver.handlers.update import update_object

    status, reason, message = verdict
    conds = ((api_service.get("status") or {}).get("conditions")) or []
    old = next((c for c in conds if c.get("type") == "Available"), None)
    if old is not None and (old.get("status"), old.get("reason"), old.get("message")) == verdict:
        return

    def make_new(obj: dict[str, Any]) -> dict[str, Any]:
        st = obj.setdefault("status", {})
        others = [c for c in st.get("conditions") or [] if c.get("type") != "Available"]
        prev = next((c for c in st.get("conditions") or [] if c.get("type") == "Available"), {})
        since = prev.get("lastTransitionTime") if prev.get("status") == status else now_rfc3339()
        cond = {"type": "Available", "status": status, "lastTransitionTime": since or now_rfc3339(),
                "reason": reason, "message": message}  # fmt: skip
        st["conditions"] = [*others, cond]
        return obj

    name = api_service["metadata"]["name"]
    try:
        await update_object(server, API_SERVICES, None, name, make_new, subresource="status")
    except errors.StatusError as exc:  # deleted or changed meanwhile: the next round sees it
        log.debug("APIService %s: status not written: %s", name, exc.message)


def _fingerprint(server: APIServer) -> tuple[int, ...]:
    keys = ("apiservices.apiregistration.k8s.io", "services", "endpoints")
    return tuple(server.cache(rt).generation for rt in (registry.by_key(k) for k in keys) if rt is not None)


async def run(server: APIServer) -> None:
    """The availability loop; runs for the API server's life."""
    seen: tuple[int, ...] = ()
    since = RECHECK
    while True:
        fingerprint = _fingerprint(server)
        if fingerprint != seen or since >= RECHECK:
            seen, since = fingerprint, 0.0
            for obj in list(server.cache(API_SERVICES).objects.values()):
                try:
                    await _record(server, obj, await check(server, obj))
                except Exception:  # one bad object must not stop the others' checks
                    log.exception("APIService %s: availability check failed", obj["metadata"].get("name"))
            seen = _fingerprint(server)  # our own status writes are not changes to react to
        await asyncio.sleep(POLL)
        since += POLL
