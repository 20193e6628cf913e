"""`apply --server-side`: send the manifest itself and let the API server merge it.

Client-side apply (cmd_apply.py) works out a three-way patch from the last-applied annotation.
Server-side apply sends the manifest as an `application/apply-patch+yaml` PATCH with a
`fieldManager` (kubectl's default: "kubectl"); the server records which manager owns which field
(`managedFields`) and refuses, with 409, to take a field another manager set to another value
unless `--force-conflicts`. kubectl prints that refusal with the advice below, word for word.
"""

from __future__ import annotations

import json
from typing import Any

from api.errors import ConflictError
from client.rest import resource_path
from kubectl.cli import Session
from kubectl.manifests import Manifest

APPLY_PATCH = "application/apply-patch+yaml"

CONFLICT_ADVICE = """Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `--force-conflicts` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts"""


class ApplyConflict(Exception):
    """The server refused to move fields owned by other managers; str() is kubectl's message."""


async def server_side_apply(
    s: Session, m: Manifest, namespace: str | None, *, field_manager: str, force: bool, dry_run: str
) -> dict[str, Any]:
    """PATCH the manifest as an apply; returns the object as stored (or as it would be)."""
    # Keys in Go's order (sorted, as kubectl encodes a manifest): the server keeps the body's order
    # where it writes it back, e.g. in the last-applied annotation of the client-side upgrade path.
    obj = json.loads(json.dumps(m.obj, sort_keys=True))
    metadata = dict(obj.get("metadata") or {})
    if m.rt.namespaced and namespace:
        metadata["namespace"] = namespace
    obj["metadata"] = metadata
    params: dict[str, Any] = {"fieldManager": field_manager}
    if force:
        params["force"] = "true"
    if dry_run == "server":
        params["dryRun"] = "All"
    ns = namespace if m.rt.namespaced else None
    try:
        result: dict[str, Any] = await s.client.raw(
            "PATCH", resource_path(m.rt, ns, m.name), params=params, body=obj, content_type=APPLY_PATCH
        )
    except ConflictError as exc:
        if exc.message.startswith("Apply failed with"):
            raise ApplyConflict(f"{exc.message}\n{CONFLICT_ADVICE}") from None
        raise
    return result

