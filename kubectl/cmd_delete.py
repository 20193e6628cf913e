"""`kubectl delete`: by file, by name, by label selector, or --all.

Every delete carries DeleteOptions: `propagationPolicy` from `--cascade` (background: the object
goes now and the garbage collector removes its dependents; foreground: the dependents go first
and the object waits with a deletionTimestamp; orphan: the dependents stay, ownerless) and
`gracePeriodSeconds` from `--grace-period` / `--now` (1 s) / `--force` (0).

Like kubectl (`--wait=true` by default), the command returns only when the objects are gone -
a pod bound to a node stays until its kubelet has stopped the containers (waiting.py).

    pod "web" deleted
    deployment.apps "web" deleted
    Error from server (NotFound): pods "web" not found
"""

from __future__ import annotations

import asyncio

from api.errors import NotFoundError, StatusError
from api.registry import ResourceType
from kubectl import commandline as typer
from kubectl.cli import CmdError, Reporter, Session, echo, run, warn
from kubectl.completion import complete_type_and_names
from kubectl.main import app
from kubectl.manifests import object_namespace, read_manifests, set_verb
from kubectl.resources import kind_prefix, parse_args
from kubectl.waiting import wait_deleted

_CASCADE = {
    "background": "Background",
    "true": "Background",
    "foreground": "Foreground",
    "orphan": "Orphan",
    "false": "Orphan",
}
FORCE_WARNING = (
    "Warning: Immediate deletion does not wait for confirmation that the running resource has been "
    "terminated. The resource may continue to run on the cluster indefinitely."
)


async def delete(
    s: Session,
    args: list[str],
    *,
    files: list[str],
    recursive: bool,
    selector: str | None,
    all_: bool,
    all_namespaces: bool,
    cascade: str,
    grace_period: int,
    now: bool,
    force: bool,
    wait: bool,
    timeout: float | None,
    ignore_not_found: bool,
    dry_run: str = "none",
) -> int:
    from kubectl.dryrun import check_dry_run, suffix

    check_dry_run(dry_run)
    policy = _CASCADE.get(cascade.lower())
    if policy is None:
        raise CmdError(f'invalid cascade value ({cascade}). Must be "background", "foreground", or "orphan".')
    if now:
        if grace_period >= 0:
            raise CmdError("--now and --grace-period cannot be specified together")
        grace_period = 1
    if force and grace_period < 0:
        grace_period = 0
    grace = grace_period if grace_period >= 0 else None
    if force and grace == 0:
        warn(FORCE_WARNING)
    targets: list[tuple[ResourceType, str | None, str, str]] = []  # (type, namespace, name, source)
    report = Reporter()
    if files:
        set_verb("delete")
        for m in read_manifests(files, recursive):
            targets.append((m.rt, object_namespace(m, s.namespace, s.explicit_namespace), m.name, m.source))
    else:
        if not args:
            raise CmdError(
                "You must provide one or more resources by argument or filename.\nExample resource "
                "specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n"
                "   '<resource> <name>'\n   '<resource>'"
            )
        sel = parse_args(args)
        if sel.by_name and (selector or all_):
            raise CmdError("name cannot be provided when a selector is specified")
        if not sel.by_name and not selector and not all_:
            raise CmdError("resource(s) were provided, but no name was specified")
        for rt, names in sel.groups:
            ns = None if (not rt.namespaced or all_namespaces) else s.namespace
            if names:
                targets += [(rt, ns, n, "") for n in names]
                continue
            lst = await s.client.list(rt, ns, label_selector=selector)
            targets += [
                (rt, i["metadata"].get("namespace") if rt.namespaced else None, i["metadata"]["name"], "")
                for i in lst.get("items") or []
            ]
        if not targets and not sel.by_name:
            echo("No resources found")  # (delete says it on stdout, unlike get)
            return 0
    gone: list[tuple[ResourceType, str | None, str, str | None]] = []
    for rt, ns, name, source in targets:
        try:
            if dry_run == "client":  # nothing is sent, not even a read (kubectl's behaviour too)
                result = None
            elif dry_run == "server":
                result = await _delete_dry_run(s, rt, ns, name, policy, grace)
            else:
                result = await s.client.delete(rt, name, ns, propagation_policy=policy, grace_period_seconds=grace)
        except NotFoundError as exc:
            if not ignore_not_found:
                report.status(exc, f'error when deleting "{source}": ' if source else "")
            continue
        except StatusError as exc:
            report.status(exc, f'error when deleting "{source}": ' if source else "")
            continue
        word = "force deleted" if force and grace == 0 else "deleted"
        echo(f'{kind_prefix(rt)} "{name}" {word}{suffix(dry_run)}')
        if dry_run != "none":
            continue
        uid = ((result or {}).get("metadata") or {}).get("uid") if isinstance(result, dict) else None
        gone.append((rt, ns, name, uid))
    if wait and gone:
        await asyncio.gather(*(wait_deleted(s, rt, ns, name, uid, timeout) for rt, ns, name, uid in gone))
    return 1 if report.failed else 0


async def _delete_dry_run(
    s: Session, rt: ResourceType, ns: str | None, name: str, policy: str | None, grace: int | None
) -> object:
    from client.rest import resource_path

    options: dict[str, object] = {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}
    if policy:
        options["propagationPolicy"] = policy
    if grace is not None:
        options["gracePeriodSeconds"] = grace
    return await s.client.raw("DELETE", resource_path(rt, ns, name), params={"dryRun": "All"}, body=options)


@app.command("delete")
def delete_command(
    args: list[str] = typer.Argument(
        None, help="TYPE [NAME ...] | TYPE/NAME ...", shell_complete=complete_type_and_names
    ),
    filename: list[str] = typer.Option(None, "-f", "--filename"),
    recursive: bool = typer.Option(False, "-R", "--recursive"),
    selector: str = typer.Option(None, "-l", "--selector"),
    all_: bool = typer.Option(False, "--all", help="Delete all resources of the type(s) in the namespace."),
    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces"),
    cascade: str = typer.Option("background", "--cascade", help="background|foreground|orphan"),
    grace_period: int = typer.Option(
        -1, "--grace-period", help="Seconds to let the pod stop (-1: its default)."
    ),
    now: bool = typer.Option(False, "--now", help="Grace period of 1 second."),
    force: bool = typer.Option(False, "--force", help="Immediate deletion (with --grace-period=0)."),
    wait: bool = typer.Option(True, "--wait/--no-wait", help="Wait until the objects are gone."),
    timeout: str = typer.Option("0s", "--timeout", help="How long to wait (0: forever)."),
    ignore_not_found: bool = typer.Option(False, "--ignore-not-found"),
    dry_run: str = typer.Option("none", "--dry-run", help='"none", "server", or "client".'),
) -> None:
    """Delete resources by file names, stdin, resources and names, or by resources and label selector."""
    from kubectl.durations import parse_duration

    limit = parse_duration(timeout) or None
    run(
        lambda s: delete(
            s,
            list(args or []),
            files=list(filename or []),
            recursive=recursive,
            selector=selector,
            all_=all_,
            all_namespaces=all_namespaces,
            cascade=cascade,
            grace_period=grace_period,
            now=now,
            force=force,
            wait=wait,
            timeout=limit,
            ignore_not_found=ignore_not_found,
            dry_run=dry_run,
        )
    )
