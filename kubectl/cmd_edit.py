"""`edit TYPE NAME`: change a live object in your editor.

The object is written as YAML (managedFields left out) below kubectl's comment header into a
temporary file `kubectl-edit-*.yaml`, and the editor runs on it: $KUBE_EDITOR, else $EDITOR,
else `vi` (run through the shell, so `KUBE_EDITOR="code --wait"` works). When it exits:

    file unchanged                   Edit cancelled, no changes made.            exit 0
    apiVersion, kind or name changed A copy of your changes has been stored ...  exit 1
    changed                          a strategic merge patch from what was read to what was saved
                                     is sent: deployment.apps/web edited        exit 0
    the server refuses it (invalid)  the file is reopened with the reasons at the top; saved again
                                     unchanged: error: Edit cancelled, no valid changes were saved.

The patch carries only what the user changed, so a controller's concurrent write to another
field survives the edit (a PUT of the whole file would undo it).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from typing import Any

import yaml

from api.errors import StatusError
from api.patch import create_two_way_merge_patch
from api.registry import ResourceType
from client.rest import PATCH_CONTENT_TYPES, resource_path
from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, echo, run, warn
from kubectl.completion import complete_type_and_names
from kubectl.main import app
from kubectl.resources import parse_args, qualified

HEADER = """# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
"""


def _editor_command(path: str) -> str:
    editor = os.environ.get("KUBE_EDITOR") or os.environ.get("EDITOR") or "vi"
    return f"{editor} {shlex.quote(path)}"


def _body(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))


def _not_valid(rt: ResourceType, name: str, exc: StatusError) -> str:
    """The comment block kubectl puts above a file it reopens."""
    resource = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
    causes = (exc.details or {}).get("causes") or []
    lines = [f'# {resource} "{name}" was not valid:']
    lines += [f"# * {c.get('field', '')}: {c.get('message', '')}" for c in causes] or [f"# * {exc.message}"]
    return "\n".join(lines) + "\n#\n"


async def edit_one(s: Session, rt: ResourceType, name: str, ns: str | None, output: str | None) -> int:
    from kubectl.printing.output import hide_managed_fields, render, to_yaml

    live = hide_managed_fields(await s.client.get(rt, name, ns))
    fd, path = tempfile.mkstemp(prefix="kubectl-edit-", suffix=".yaml")
    os.close(fd)
    written = HEADER + to_yaml(live)
    while True:
        with open(path, "w") as f:
            f.write(written)
        if subprocess.run(_editor_command(path), shell=True).returncode != 0:
            raise CmdError("there was a problem with the editor")
        with open(path) as f:
            saved = f.read()
        if _body(saved) == _body(written):
            if written.startswith(HEADER + "# "):  # reopened after a refusal, and left as it was
                resource = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
                warn(f'error: {resource} "{name}" is invalid')
                warn(f'A copy of your changes has been stored to "{path}"')
                warn("error: Edit cancelled, no valid changes were saved.")
                return 1
            os.unlink(path)
            warn("Edit cancelled, no changes made.")
            return 0
        if not _body(saved).strip():
            os.unlink(path)
            warn("Edit cancelled, saved file was empty.")
            return 0
        try:
            edited = yaml.safe_load(_body(saved))
        except yaml.YAMLError as exc:
            written = HEADER + f"# The edited file had a syntax error: {exc}\n#\n" + _body(saved)
            continue
        same_identity = isinstance(edited, dict) and all(
            edited.get(k) == live.get(k) for k in ("apiVersion", "kind")
        ) and (edited.get("metadata") or {}).get("name") == name
        if not same_identity:
            warn(f'A copy of your changes has been stored to "{path}"')
            warn("error: At least one of apiVersion, kind and name was changed")
            return 1
        patch = create_two_way_merge_patch(live, edited, rt.key)
        if not patch:
            os.unlink(path)
            warn("Edit cancelled, no changes made.")
            return 0
        try:
            result: dict[str, Any] = await s.client.raw(
                "PATCH", resource_path(rt, ns, name), body=patch, content_type=PATCH_CONTENT_TYPES["strategic"]
            )
        except StatusError as exc:
            if exc.reason != "Invalid":
                raise
            written = HEADER + _not_valid(rt, name, exc) + _body(saved)
            continue
        os.unlink(path)
        if output:
            sys.stdout.write(render(output, [result], True))
        else:
            echo(f"{qualified(rt, name)} edited")
        return 0


async def edit(s: Session, args: list[str], output: str | None) -> int:
    if output and output not in ("yaml", "json"):
        raise CmdError(
            f'unable to match a printer suitable for the output format "{output}", allowed formats are: json,yaml'
        )
    sel = parse_args(args)
    code = 0
    for rt, names in sel.groups:
        if not names:
            raise CmdError("edit needs the name of the object (kubectl edit TYPE NAME)")
        for name in names:
            code = max(code, await edit_one(s, rt, name, s.namespace if rt.namespaced else None, output))
    return code


@app.command("edit")
def edit_command(
    args: list[str] = typer.Argument(..., help="TYPE NAME | TYPE/NAME", shell_complete=complete_type_and_names),
    output: str = typer.Option(None, "-o", "--output", help="yaml|json: print the edited object."),
) -> None:
    """Edit a resource from the default editor ($KUBE_EDITOR, $EDITOR, else vi)."""
    run(lambda s: edit(s, list(args), output))
