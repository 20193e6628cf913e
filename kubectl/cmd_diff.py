"""`diff -f`: what `apply` would change, without changing it.

kubectl's way, kept: for each object, read the live version (none if it does not exist yet) and
ask the server for the merged one with the very request `apply` would send, marked `dryRun=All`
(a dry-run create, the client-side three-way patch, or with `--server-side` the apply patch).
The server runs defaulting, admission and validation and stores nothing, so what is shown is
what would be stored. Both versions are written as YAML into two temporary directories,
`LIVE-*` and `MERGED-*`, one file per object (`apps.v1.Deployment.default.web`), and compared by
`diff -u -N` (or the program in $KUBECTL_EXTERNAL_DIFF). managedFields are left out, and Secret
values are masked, as kubectl does.

Exit code, kubectl's: 0 no differences, 1 differences, 2 (and more) an error.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from api.errors import NotFoundError, StatusError
from api.patch import create_three_way_merge_patch
from api.registry import ResourceType
from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, run, server_error, warn
from kubectl.main import app

_MASK = "***"


def file_name(rt: ResourceType, namespace: str | None, name: str) -> str:
    group = f"{rt.group}." if rt.group else ""
    return f"{group}{rt.version}.{rt.kind}.{namespace or ''}.{name}"


def mask_secrets(live: dict[str, Any] | None, merged: dict[str, Any] | None) -> None:
    """Replace Secret values with *** (marking which changed), in place."""
    for field in ("data", "stringData"):
        before = dict((live or {}).get(field) or {})
        after = dict((merged or {}).get(field) or {})
        for key in before.keys() | after.keys():
            changed = key in before and key in after and before[key] != after[key]
            if live is not None and key in before:
                live[field][key] = f"{_MASK} (before)" if changed else _MASK
            if merged is not None and key in after:
                merged[field][key] = f"{_MASK} (after)" if changed else _MASK


def _without_managed_fields(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    if obj is None:
        return None
    obj = dict(obj)
    obj["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return obj


async def merged_version(
    s: Session, m: Any, ns: str | None, live: dict[str, Any] | None, server_side: bool, force: bool, manager: str
) -> dict[str, Any]:
    """What the server would store if `apply` ran now (sent with dryRun=All)."""
    from client.rest import PATCH_CONTENT_TYPES, resource_path
    from kubectl.dryrun import create_object
    from kubectl.lastapplied import modified_configuration, original_configuration
    from kubectl.serverside import server_side_apply

    if server_side:
        return await server_side_apply(s, m, ns, field_manager=manager, force=force, dry_run="server")
    if live is None:
        return await create_object(s, m.rt, m.obj if not ns else {**m.obj, "metadata": {
            **(m.obj.get("metadata") or {}), "namespace": ns}}, ns, "server")
    modified = modified_configuration(m.obj, ns, annotate=False)
    patch = create_three_way_merge_patch(original_configuration(live), modified, live, m.rt.key)
    if not patch:
        return live
    result: dict[str, Any] = await s.client.raw(
        "PATCH", resource_path(m.rt, ns, m.name), params={"dryRun": "All"}, body=patch,
        content_type=PATCH_CONTENT_TYPES["strategic"],
    )
    return result


def _diff_program() -> list[str]:
    external = os.environ.get("KUBECTL_EXTERNAL_DIFF")
    if external:
        return shlex.split(external)
    if shutil.which("diff") is None:
        raise CmdError('executable file not found in $PATH: "diff"')
    return ["diff", "-u", "-N"]


async def diff(
    s: Session, files: list[str], recursive: bool, server_side: bool, force_conflicts: bool, field_manager: str
) -> int:
    from kubectl.manifests import object_namespace, read_manifests, set_verb
    from kubectl.printing.output import to_yaml

    set_verb("diff")
    manifests = read_manifests(files, recursive)
    live_dir = Path(tempfile.mkdtemp(prefix="LIVE-"))
    merged_dir = Path(tempfile.mkdtemp(prefix="MERGED-"))
    try:
        for m in manifests:
            ns = object_namespace(m, s.namespace, s.explicit_namespace) if m.rt.namespaced else None
            try:
                try:
                    live: dict[str, Any] | None = await s.client.get(m.rt, m.name, ns)
                except NotFoundError:
                    live = None
                merged = await merged_version(s, m, ns, live, server_side, force_conflicts, field_manager)
            except StatusError as exc:
                warn(server_error(exc))
                return 2
            live, merged = _without_managed_fields(live), _without_managed_fields(merged)
            if m.rt.key == "secrets":
                mask_secrets(live, merged)
            name = file_name(m.rt, ns, m.name)
            if live is not None:
                (live_dir / name).write_text(to_yaml(live))
            (merged_dir / name).write_text(to_yaml(merged))
        done = subprocess.run([*_diff_program(), str(live_dir), str(merged_dir)], capture_output=True, text=True)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        return done.returncode
    finally:
        shutil.rmtree(live_dir, ignore_errors=True)
        shutil.rmtree(merged_dir, ignore_errors=True)


@app.command("diff")
def diff_command(
    filename: list[str] = typer.Option(None, "-f", "--filename", help="Files, directories or - for stdin."),
    recursive: bool = typer.Option(False, "-R", "--recursive", help="Read directories recursively."),
    server_side: bool = typer.Option(False, "--server-side", help="Compare with a server-side apply."),
    force_conflicts: bool = typer.Option(False, "--force-conflicts", help="Server-side: as if forcing."),
    field_manager: str = typer.Option("kubectl", "--field-manager", help="Server-side: the manager's name."),
) -> None:
    """Diff the live version against what apply would make of it (0: same, 1: differs, >1: error)."""
    run(lambda s: diff(s, list(filename or []), recursive, server_side, force_conflicts, field_manager))
