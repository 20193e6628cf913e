"""`kubectl wait --for=condition=Ready|delete|jsonpath='{...}'=VALUE TYPE/NAME ... [--timeout=30s]`.

Each object is read, and if it does not yet satisfy the condition, watched (from the
resourceVersion it was read at, narrowed to its name) until it does, or until the timeout:

    deployment.apps/web condition met                             exit 0
    error: timed out waiting for the condition on deployments/web exit 1

`--for=condition=Available` matches a `status.conditions[]` entry by type and status (default
"True"; both compared without case, as kubectl does). `--for=delete` is met once the object is
gone (already gone counts). `--for=jsonpath='{.status.phase}'=Running` compares the JSONPath's
value as text; without `=VALUE` it is met when the path exists.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from api.errors import NotFoundError
from api.registry import ResourceType
from kubectl import commandline as typer
from kubectl.cli import CmdError, Reporter, Session, echo, run
from kubectl.completion import complete_type_and_names
from kubectl.main import app
from kubectl.resources import parse_args, qualified

Check = Callable[[dict[str, Any]], bool]


def condition_check(spec: str) -> Check:
    """`condition=Ready` / `condition=Ready=false` -> a test on status.conditions."""
    body = spec[len("condition=") :]
    cond_type, _, want = body.partition("=")
    want = want or "True"

    def met(obj: dict[str, Any]) -> bool:
        for c in (obj.get("status") or {}).get("conditions") or []:
            if str(c.get("type", "")).lower() == cond_type.lower():
                return str(c.get("status", "")).lower() == want.lower()
        return False

    return met


def jsonpath_check(spec: str) -> Check:
    from kubectl.printing import jsonpath

    body = spec[len("jsonpath=") :]
    if len(body) >= 2 and body[0] in "'\"" and body[0] in body[1:]:
        q = body[0]
        body = body[1:].replace(q, "", 1)
    if body.startswith("{"):
        end = body.find("}")
        if end < 0:
            raise CmdError(f"jsonpath wait format must be --for=jsonpath='{{.status.readyReplicas}}'=3: {spec}")
        path, rest = body[1:end], body[end + 1 :]
    else:
        path, _, value = body.partition("=")
        rest = ("=" + value) if _ else ""
    has_value = rest.startswith("=")
    want = rest[1:] if has_value else None
    if not path:
        raise CmdError("jsonpath expression cannot be empty")

    def met(obj: dict[str, Any]) -> bool:
        found = jsonpath.evaluate(path, [obj])
        if not found:
            return False
        if want is None:
            return True
        return len(found) == 1 and jsonpath._text(found[0]) == want

    return met


async def _wait_one(
    s: Session, rt: ResourceType, ns: str | None, name: str, check: Check | None, timeout: float
) -> bool:
    """True once `check` holds (or, for check=None, the object is gone); False on timeout.
    NotFoundError when waiting for a condition of an object that does not exist."""

    async def until() -> None:
        while True:
            lst = await s.client.list(rt, ns, field_selector=f"metadata.name={name}")
            items = lst.get("items") or []
            if check is None and not items:
                return
            if check is not None:
                if not items:
                    await s.client.get(rt, name, ns)  # raises NotFoundError in the server's words
                elif check(items[0]):
                    return
            rv = (lst.get("metadata") or {}).get("resourceVersion")
            stream = s.client.watch(
                rt, ns, resource_version=rv, field_selector=f"metadata.name={name}", timeout_seconds=60
            )
            async with contextlib.aclosing(stream) as events:
                async for ev in events:
                    if ev.type == "DELETED":
                        if check is None:
                            return
                        raise NotFoundError(f'{rt.key} "{name}" not found')
                    if check is not None and ev.type in ("ADDED", "MODIFIED") and check(ev.object):
                        return

    try:
        await asyncio.wait_for(until(), timeout if timeout >= 0 else None)
    except TimeoutError:
        return False
    return True


async def wait(
    s: Session, args: list[str], for_: str, timeout: float, selector: str | None, all_: bool
) -> int:
    if not for_:
        raise CmdError("--for must be specified")
    check: Check | None
    if for_ == "delete":
        check = None
    elif for_.startswith("condition="):
        check = condition_check(for_)
    elif for_.startswith("jsonpath="):
        check = jsonpath_check(for_)
    else:
        raise CmdError(f'unrecognized condition: "{for_}"')
    if (selector or all_) and len(args) == 1 and "/" not in args[0]:
        from kubectl.resources import resolve_type

        rt = resolve_type(args[0])
        ns = s.namespace if rt.namespaced else None
        lst = await s.client.list(rt, ns, label_selector=selector)
        targets = [(rt, [o["metadata"]["name"] for o in lst.get("items") or []])]
        if not targets[0][1]:
            raise CmdError("no matching resources found")
    else:
        targets = parse_args(args).groups
    report = Reporter()
    for rt, names in targets:
        ns = s.namespace if rt.namespaced else None
        for name in names:
            try:
                ok = await _wait_one(s, rt, ns, name, check, timeout)
            except NotFoundError as exc:
                report.status(exc)
                continue
            if not ok:
                report.error(f"error: timed out waiting for the condition on {rt.plural}/{name}")
                continue
            if check is not None:
                echo(f"{qualified(rt, name)} condition met")
    return 1 if report.failed else 0


@app.command("wait")
def wait_command(
    args: list[str] = typer.Argument(
        None, help="TYPE NAME ... | TYPE/NAME ...", shell_complete=complete_type_and_names
    ),
    for_: str = typer.Option(None, "--for", help="delete | condition=NAME[=VALUE] | jsonpath='{PATH}'[=VALUE]"),
    timeout: str = typer.Option("30s", "--timeout", help="How long to wait (e.g. 30s, 5m); negative: a week."),
    selector: str = typer.Option(None, "-l", "--selector", help="Label selector."),
    all_: bool = typer.Option(False, "--all", help="Every object of the type."),
) -> None:
    """Wait for a specific condition on one or many resources."""
    from kubectl.durations import parse_duration

    seconds = parse_duration(timeout) if not timeout.startswith("-") else 7 * 24 * 3600.0
    run(lambda s: wait(s, list(args or []), for_ or "", seconds, selector, all_))
