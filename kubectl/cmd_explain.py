"""`explain TYPE[.field...]`: the documentation of a resource or field, read from the server.

As kubectl does since 1.27, the text comes from the server's OpenAPI v3 document of the type's
group/version (`/openapi/v3` lists them; `/openapi/v3/apis/apps/v1` is one), so it always
describes the fields this server really has. explain_render.py holds the rules of the layout.
"""

from __future__ import annotations

import sys

from api import registry
from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, run
from kubectl.explain_render import FieldNotFound, Renderer
from kubectl.main import app

NO_TYPE = (
    'You must specify the type of resource to explain. Use "kubectl api-resources" for a complete list of '
    "supported resources."
)


def _not_found(group: str, version: str, plural: str) -> str:
    return f'couldn\'t find resource for "{group + "/" if group else ""}{version}, Resource={plural}"'


async def explain(s: Session, target: str, recursive: bool, api_version: str, output: str) -> int:
    if not target:
        raise CmdError(NO_TYPE)
    if output not in ("plaintext", "plaintext-openapiv2"):
        raise CmdError(f"unrecognized format: {output}")
    if output == "plaintext-openapiv2":
        raise CmdError("--output=plaintext-openapiv2 (the OpenAPI v2 layout) is not supported by mini-kubectl")
    parts = target.split(".")
    # the type may be qualified by its group (`deployments.apps.spec`): the longest prefix that names one
    split = next((i for i in range(len(parts), 0, -1) if registry.resolve(".".join(parts[:i]))), 0)
    if not split:  # kubectl prints this one without its usual "error: "
        sys.stderr.write(f'the server doesn\'t have a resource type "{parts[0]}"\n')
        return 1
    rt, path = registry.resolve(".".join(parts[:split]))[0], parts[split:]
    group, version = rt.group, rt.version
    if api_version:
        group, _, version = api_version.rpartition("/")
        if registry.lookup(group, version, rt.plural) is None:
            raise CmdError(_not_found(group, version, rt.plural))
    index = await s.client.raw("GET", "/openapi/v3")
    key = f"apis/{group}/{version}" if group else f"api/{version}"
    entry = (index.get("paths") or {}).get(key)
    if entry is None:
        raise CmdError(_not_found(group, version, rt.plural))
    document = await s.client.raw("GET", entry["serverRelativeURL"])
    try:
        text = Renderer(document).explain(group, version, rt.kind, path, recursive)
    except FieldNotFound as exc:
        sys.stdout.write(exc.printed)
        raise CmdError(str(exc)) from None
    sys.stdout.write(text)
    return 0


@app.command("explain")
def explain_command(
    target: str = typer.Argument("", help="TYPE or TYPE.field.path, e.g. pods.spec.containers"),
    recursive: bool = typer.Option(False, "--recursive", help="Print the fields of fields, names and types only."),
    api_version: str = typer.Option("", "--api-version", help="Explain this group/version of the type."),
    output: str = typer.Option("plaintext", "--output", help="plaintext (the OpenAPI v3 layout)."),
) -> None:
    """Get the documentation of a resource and its fields."""
    run(lambda s: explain(s, target, recursive, api_version, output))
