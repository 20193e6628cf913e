"""`kubectl patch TYPE NAME -p PATCH [--type strategic|merge|json]`.

Like kubectl: the object is read first, the patch sent, and the answer compared with what was
read - `deployment.apps/web patched`, or `... patched (no change)` when nothing moved. The patch
may be written as JSON or YAML (`-p '{spec: {replicas: 2}}'`); a JSON patch must be a list.
`--dry-run=server|client` send `dryRun=All` and print `patched` (kubectl 1.32 adds no suffix).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from api.errors import StatusError
from client.rest import PATCH_CONTENT_TYPES, resource_path
from kubectl import commandline as typer
from kubectl.cli import CmdError, Reporter, Session, echo, run
from kubectl.completion import complete_type_and_names
from kubectl.main import app
from kubectl.resources import parse_args, qualified


def parse_patch(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CmdError(f'unable to parse "{text}": {exc}') from None


def _strip_volatile(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("managedFields",)}
    return {**obj, "metadata": meta}


async def patch(
    s: Session,
    args: list[str],
    text: str | None,
    patch_file: str | None,
    patch_type: str,
    dry_run: str,
    output: str | None,
    subresource: str | None,
) -> int:
    if patch_type not in PATCH_CONTENT_TYPES:
        raise CmdError(f'--type must be one of [json merge strategic], not "{patch_type}"')
    if dry_run not in ("none", "client", "server"):
        raise CmdError(f'Invalid dry-run value ({dry_run}). Must be "none", "server", or "client".')
    if patch_file:
        with open(patch_file) as f:
            text = f.read()
    if not text:
        raise CmdError("must specify --patch or --patch-file containing the contents of the patch")
    body = parse_patch(text)
    sel = parse_args(args)
    report = Reporter()
    for rt, names in sel.groups:
        ns = s.namespace if rt.namespaced else None
        for name in names:
            try:
                before = await s.client.get(rt, name, ns)
                # Client dry run: the server works the patch out (dryRun=All) and stores nothing.
                params = {"dryRun": "All"} if dry_run != "none" else None
                after = await s.client.raw(
                    "PATCH",
                    resource_path(rt, ns, name, subresource),
                    params=params,
                    body=body,
                    content_type=PATCH_CONTENT_TYPES[patch_type],
                )
            except StatusError as exc:
                report.status(exc)
                continue
            if output:
                from kubectl.printing import output as out_fmt

                sys.stdout.write(out_fmt.render(output, [after], True))
                continue
            changed = _strip_volatile(after) != _strip_volatile(before)
            echo(f"{qualified(rt, name)} patched" + ("" if changed or dry_run != "none" else " (no change)"))
    return 1 if report.failed else 0


@app.command("patch")
def patch_command(
    args: list[str] = typer.Argument(..., help="TYPE NAME | TYPE/NAME", shell_complete=complete_type_and_names),
    text: str = typer.Option(None, "-p", "--patch", help="The patch, as JSON or YAML."),
    patch_file: str = typer.Option(None, "--patch-file", help="A file holding the patch."),
    patch_type: str = typer.Option("strategic", "--type", help="json, merge or strategic."),
    dry_run: str = typer.Option("none", "--dry-run", help='"none", "server", or "client".'),
    output: str = typer.Option(None, "-o", "--output", help="json|yaml|name|jsonpath=..."),
    subresource: str = typer.Option(None, "--subresource", help="status or scale."),
) -> None:
    """Update fields of a resource using strategic merge patch, a JSON merge patch, or a JSON patch."""
    run(lambda s: patch(s, list(args), text, patch_file, patch_type, dry_run, output, subresource))
