"""`kubectl describe TYPE [NAME_PREFIX]`, `describe TYPE/NAME`, `describe -f FILE`, `-l SELECTOR`.

As in kubectl, a name that matches no object exactly is taken as a prefix (`describe pods web`
describes web-1 and web-2), and several descriptions are separated by a blank line.
"""

from __future__ import annotations

import sys
from typing import Any

from api.errors import NotFoundError
from api.registry import ResourceType
from kubectl import commandline as typer
from kubectl.cli import Reporter, Session, run, warn
from kubectl.cmd_get import no_resources_message
from kubectl.completion import complete_type_and_names
from kubectl.describe import describe
from kubectl.main import app
from kubectl.manifests import object_namespace, read_manifests
from kubectl.resources import parse_args


async def describe_cmd(
    s: Session,
    args: list[str],
    files: list[str],
    selector: str | None,
    all_namespaces: bool,
    show_events: bool,
) -> int:
    report = Reporter()
    found: list[tuple[ResourceType, dict[str, Any]]] = []
    prefixed: list[tuple[ResourceType, dict[str, Any]]] = []  # matched by name prefix
    types: list[ResourceType] = []
    if files:
        for m in read_manifests(files):
            try:
                found.append(
                    (
                        m.rt,
                        await s.client.get(
                            m.rt, m.name, object_namespace(m, s.namespace, s.explicit_namespace)
                        ),
                    )
                )
            except NotFoundError as exc:
                report.status(exc)
    else:
        sel = parse_args(args)
        types = sel.types
        for rt, names in sel.groups:
            ns = None if (not rt.namespaced or all_namespaces) else s.namespace
            if not names:
                items = (await s.client.list(rt, ns, label_selector=selector)).get("items") or []
                found += [(rt, i) for i in items]
                continue
            for name in names:
                try:
                    found.append((rt, await s.client.get(rt, name, ns)))
                except NotFoundError as exc:
                    items = (await s.client.list(rt, ns)).get("items") or []
                    matches = [i for i in items if i["metadata"]["name"].startswith(name)]
                    if not matches:
                        report.status(exc)
                    prefixed += [(rt, i) for i in matches]
    first = True
    for rt, obj in found:
        text = await describe(s, rt, obj, show_events)
        sys.stdout.write(text if first else "\n\n" + text)
        first = False
    for rt, obj in prefixed:  # kubectl's DescribeMatchingResources: each followed by a newline
        sys.stdout.write(await describe(s, rt, obj, show_events) + "\n")
    sys.stdout.flush()
    if not found and not prefixed and not report.failed and types:
        warn(no_resources_message(types, s.namespace, all_namespaces))
    return 1 if report.failed else 0


@app.command("describe")
def describe_command(
    args: list[str] = typer.Argument(
        None, help="TYPE [NAME_PREFIX] | TYPE/NAME", shell_complete=complete_type_and_names
    ),
    filename: list[str] = typer.Option(None, "-f", "--filename"),
    selector: str = typer.Option(None, "-l", "--selector"),
    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces"),
    show_events: bool = typer.Option(True, "--show-events/--no-show-events"),
) -> None:
    """Show details of a specific resource or group of resources."""
    run(
        lambda s: describe_cmd(
            s, list(args or []), list(filename or []), selector, all_namespaces, show_events
        )
    )
