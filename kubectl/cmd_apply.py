"""`create -f`, `apply -f`, `replace -f`: sending manifests to the server.

    create   POST each object                           pod/web created
    apply    create it, or three-way strategic merge    pod/web created | configured | unchanged
             patch it (see lastapplied.py)
    replace  PUT each object (the whole object)          pod/web replaced

Failures name the file, as kubectl does:
    Error from server (AlreadyExists): error when creating "web.yaml": pods "web" already exists
and the verb carries on with the next object; the exit code is 1 if any failed.
"""

from __future__ import annotations

from api.errors import NotFoundError, StatusError
from api.patch import create_three_way_merge_patch
from kubectl import commandline as typer
from kubectl.cli import Reporter, Session, echo, fail, run
from kubectl.lastapplied import LAST_APPLIED, go_json, modified_configuration, original_configuration
from kubectl.main import app
from kubectl.manifests import Manifest, object_namespace, read_manifests, set_verb
from kubectl.resources import qualified

FILENAME_HELP = "Files, directories (their .yaml/.yml/.json files) or - for stdin."


def _read(verb: str, files: list[str], recursive: bool) -> list[Manifest]:
    set_verb(verb)
    return read_manifests(files, recursive)


async def create(
    s: Session, files: list[str], recursive: bool, save_config: bool, dry_run: str = "none", output: str | None = None
) -> int:
    from kubectl.dryrun import check_dry_run, create_object, print_result

    check_dry_run(dry_run)
    manifests = _read("create", files, recursive)
    report = Reporter()
    for m in manifests:
        ns = object_namespace(m, s.namespace, s.explicit_namespace)
        obj = modified_configuration(m.obj, ns) if save_config else m.obj
        try:
            created = await create_object(s, m.rt, obj, ns, dry_run)
        except StatusError as exc:
            report.status(exc, f'error when creating "{m.source}": ')
            continue
        print_result(m.rt, created, output, "created", dry_run)
    return 1 if report.failed else 0


async def apply_one(s: Session, m: Manifest, ns: str | None, dry_run: str = "none") -> str:
    """Apply one manifest; returns kubectl's word for what happened. A dry run (client: nothing
    sent but the read; server: the write sent with dryRun=All) says what would happen."""
    from client.rest import PATCH_CONTENT_TYPES, resource_path
    from kubectl.dryrun import create_object

    modified = modified_configuration(m.obj, ns)
    if not m.name:
        raise StatusError("resource name may not be empty", code=400, reason="BadRequest")
    try:
        live = await s.client.get(m.rt, m.name, ns)
    except NotFoundError:
        try:
            await create_object(s, m.rt, modified, ns, dry_run)
        except StatusError as exc:
            exc.kubectl_verb = "creating"  # type: ignore[attr-defined]  # for kubectl's "error when creating"
            raise
        return "created"
    if dry_run == "client":  # kubectl does not work the patch out: it says "configured"
        return "configured"
    patch = create_three_way_merge_patch(original_configuration(live), modified, live, m.rt.key)
    if not patch:
        return "unchanged"
    await s.client.raw(
        "PATCH",
        resource_path(m.rt, ns, m.name),
        params={"dryRun": "All"} if dry_run == "server" else None,
        body=patch,
        content_type=PATCH_CONTENT_TYPES["strategic"],
    )
    return "configured"


async def apply(
    s: Session,
    files: list[str],
    recursive: bool,
    dry_run: str = "none",
    server_side: bool = False,
    force_conflicts: bool = False,
    field_manager: str = "kubectl",
) -> int:
    from kubectl.dryrun import check_dry_run, suffix
    from kubectl.serverside import ApplyConflict, server_side_apply

    check_dry_run(dry_run)
    if server_side and dry_run == "client":
        fail("--dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)")
    if force_conflicts and not server_side:
        fail("--force-conflicts only works with --server-side")
    manifests = _read("apply", files, recursive)
    report = Reporter()
    for m in manifests:
        ns = object_namespace(m, s.namespace, s.explicit_namespace)
        try:
            if server_side:
                await server_side_apply(
                    s, m, ns, field_manager=field_manager, force=force_conflicts, dry_run=dry_run
                )
                word = "serverside-applied"
            else:
                word = await apply_one(s, m, ns, dry_run)
        except ApplyConflict as exc:
            report.error(f"error: {exc}")
            continue
        except StatusError as exc:
            verb = getattr(exc, "kubectl_verb", "patching" if exc.code != 404 else "creating")
            report.status(exc, f'error when {verb} "{m.source}": ')
            continue
        echo(f"{qualified(m.rt, m.name)} {word}{suffix(dry_run)}")
    return 1 if report.failed else 0


async def replace(s: Session, files: list[str], recursive: bool, force: bool, save_config: bool) -> int:
    manifests = _read("replace", files, recursive)
    report = Reporter()
    for m in manifests:
        ns = object_namespace(m, s.namespace, s.explicit_namespace)
        obj = dict(m.obj)
        obj["metadata"] = {**(m.obj.get("metadata") or {})}
        if ns:
            obj["metadata"]["namespace"] = ns
        if save_config or LAST_APPLIED in (obj["metadata"].get("annotations") or {}):
            obj = modified_configuration(m.obj, ns)
        try:
            if force:
                try:
                    await s.client.delete(
                        m.rt, m.name, ns, grace_period_seconds=0 if m.rt.key == "pods" else None
                    )
                    echo(f"{qualified(m.rt, m.name)} deleted")
                except NotFoundError:
                    pass
                from kubectl.waiting import wait_deleted

                await wait_deleted(s, m.rt, ns, m.name, timeout=60.0)
                await s.client.create(m.rt, obj, ns)
            else:
                await s.client.update(m.rt, obj)
        except StatusError as exc:
            report.status(exc, f'error when replacing "{m.source}": ')
            continue
        echo(f"{qualified(m.rt, m.name)} replaced")
    return 1 if report.failed else 0


_F = typer.Option(None, "-f", "--filename", help=FILENAME_HELP)
_R = typer.Option(False, "-R", "--recursive", help="Read directories recursively.")


@app.command("apply")
def apply_command(
    filename: list[str] = _F,
    recursive: bool = _R,
    dry_run: str = typer.Option("none", "--dry-run", help='"none", "server", or "client".'),
    server_side: bool = typer.Option(False, "--server-side", help="Let the server merge and track field owners."),
    force_conflicts: bool = typer.Option(
        False, "--force-conflicts", help="Server-side: take fields other managers own."
    ),
    field_manager: str = typer.Option("kubectl", "--field-manager", help="Server-side: the manager's name."),
) -> None:
    """Apply a configuration to resources: client-side (last-applied-configuration) or --server-side."""
    run(lambda s: apply(s, list(filename or []), recursive, dry_run, server_side, force_conflicts, field_manager))


@app.command("replace")
def replace_command(
    filename: list[str] = _F,
    recursive: bool = _R,
    force: bool = typer.Option(False, "--force", help="Delete and re-create."),
    save_config: bool = typer.Option(False, "--save-config"),
) -> None:
    """Replace resources by file name or stdin (PUT the whole object)."""
    run(lambda s: replace(s, list(filename or []), recursive, force, save_config))


__all__ = ["apply_one", "go_json"]
