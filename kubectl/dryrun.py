"""`--dry-run=none|client|server`, shared by the verbs that write.

    client   nothing is sent; the object is printed as kubectl built it     ... created (dry run)
    server   sent with `?dryRun=All`: validated, defaulted, admitted, not stored
                                                                              ... created (server dry run)
"""

from __future__ import annotations

import sys
from typing import Any

from api.registry import ResourceType
from client.rest import resource_path
from kubectl.cli import CmdError, Session, echo
from kubectl.printing import output as out_fmt
from kubectl.resources import qualified

DRY_RUN_VALUES = ("none", "client", "server")


def check_dry_run(value: str) -> None:
    if value not in DRY_RUN_VALUES:
        raise CmdError(f'Invalid dry-run value ({value}). Must be "none", "server", or "client".')


def suffix(dry_run: str) -> str:
    return {"client": " (dry run)", "server": " (server dry run)"}.get(dry_run, "")


async def create_object(
    s: Session, rt: ResourceType, obj: dict[str, Any], namespace: str | None, dry_run: str
) -> dict[str, Any]:
    """POST `obj` (or, for client dry run, return it as it is)."""
    if dry_run == "client":
        return obj
    ns = namespace if rt.namespaced else None
    params = {"dryRun": "All"} if dry_run == "server" else None
    path = resource_path(rt, ns or (obj.get("metadata") or {}).get("namespace") or s.namespace)
    result: dict[str, Any] = await s.client.raw("POST", path, params=params, body=obj)
    return result


async def patch_object(
    s: Session,
    rt: ResourceType,
    name: str,
    namespace: str | None,
    patch: dict[str, Any],
    dry_run: str,
    subresource: str | None = None,
) -> dict[str, Any] | None:
    """A merge patch, sent with dryRun=All for server dry run; not sent at all for client dry run."""
    if dry_run == "client":
        return None
    params = {"dryRun": "All"} if dry_run == "server" else None
    result: dict[str, Any] = await s.client.raw(
        "PATCH",
        resource_path(rt, namespace if rt.namespaced else None, name, subresource),
        params=params,
        body=patch,
        content_type="application/merge-patch+json",
    )
    return result


def print_result(rt: ResourceType, obj: dict[str, Any], output: str | None, word: str, dry_run: str) -> None:
    """`-o yaml|json|name|...` prints the object; otherwise `kind/name created (dry run)`."""
    if output:
        obj.setdefault("apiVersion", rt.api_version)
        obj.setdefault("kind", rt.kind)
        sys.stdout.write(out_fmt.render(output, [obj], True))
    else:
        echo(f"{qualified(rt, obj['metadata']['name'])} {word}{suffix(dry_run)}")
