"""`kubectl events`: the events of a namespace (or all, or of one object), oldest first.

    LAST SEEN         TYPE      REASON      OBJECT      MESSAGE
    1s                Normal    Scheduled   Pod/web-1   Successfully assigned default/web-1 to node-1
    5s (x2 over 9s)   Warning   BackOff     Pod/web-2   Back-off restarting failed container

LAST SEEN is the age of the first sighting for a one-off event, and `<last> (xN over <first>)` for
a repeated one (a series, or count > 1). Rows are sorted by when the event was last seen.
`--for TYPE/NAME` asks the server for that object's events only (a field selector); `--types`
keeps only Normal and/or Warning.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any

from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, echo, run, warn
from kubectl.main import app

_TYPES = ("Normal", "Warning")


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _since(value: str | None, now: datetime) -> str:
    from kubectl.describe.common import human_duration

    t = _time(value)
    return "<unknown>" if t is None else human_duration((now - t).total_seconds())


def last_seen(e: dict[str, Any]) -> datetime:
    series = e.get("series") or {}
    t = _time(series.get("lastObservedTime")) or _time(e.get("lastTimestamp")) or _time(e.get("eventTime"))
    return t or datetime.min.replace(tzinfo=UTC)


def interval(e: dict[str, Any], now: datetime) -> str:
    first = _since(e.get("eventTime"), now) if e.get("eventTime") else _since(e.get("firstTimestamp"), now)
    series = e.get("series")
    if series:
        return f"{_since(series.get('lastObservedTime'), now)} (x{series.get('count', 0)} over {first})"
    if (e.get("count") or 0) > 1:
        return f"{_since(e.get('lastTimestamp'), now)} (x{e['count']} over {first})"
    return first


async def events(
    s: Session, all_namespaces: bool, for_object: str | None, types: list[str], output: str | None, no_headers: bool
) -> int:
    wanted = [t for spec in types for t in spec.split(",") if t]
    for t in wanted:
        if t.capitalize() not in _TYPES:
            raise CmdError("valid --types are Normal or Warning")
    wanted = [t.capitalize() for t in wanted]
    field_selector = None
    if for_object:
        from kubectl.resources import resolve_type

        type_text, sep, name = for_object.partition("/")
        if not sep or not name:
            raise CmdError(f"--for must be in resource/name form: {for_object}")
        rt = resolve_type(type_text)
        field_selector = f"involvedObject.kind={rt.kind},involvedObject.name={name}"
    ns = None if all_namespaces else s.namespace
    lst = await s.client.list("events", ns, field_selector=field_selector)
    items = [e for e in lst.get("items") or [] if not wanted or e.get("type") in wanted]
    items.sort(key=last_seen)
    if output:
        from kubectl.printing import output as out_fmt

        out_fmt.check_format(output)
        for e in items:
            e.setdefault("apiVersion", "v1")
            e.setdefault("kind", "Event")
        sys.stdout.write(out_fmt.render(output, items, False))
        return 0
    if not items:
        warn("No events found." if all_namespaces else f"No events found in {s.namespace} namespace.")
        return 0
    from kubectl.printing.table import TabWriter

    now = datetime.now(UTC)
    head = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    rows = [] if no_headers else [(["NAMESPACE"] if all_namespaces else []) + head]
    for e in items:
        obj = e.get("involvedObject") or {}
        row = [
            interval(e, now),
            str(e.get("type", "")),
            str(e.get("reason", "")),
            f"{obj.get('kind', '')}/{obj.get('name', '')}",
            str(e.get("message", "")).strip(),
        ]
        rows.append(([str((e.get("metadata") or {}).get("namespace", ""))] if all_namespaces else []) + row)
    for line in TabWriter().render(rows):
        echo(line)
    return 0


@app.command("events")
def events_command(
    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="Events of every namespace."),
    for_object: str = typer.Option(None, "--for", help="Only the events of this object (TYPE/NAME)."),
    types: list[str] = typer.Option(None, "--types", help="Normal and/or Warning."),
    output: str = typer.Option(None, "-o", "--output", help="json|yaml|name|jsonpath=..."),
    no_headers: bool = typer.Option(False, "--no-headers"),
) -> None:
    """List events."""
    run(lambda s: events(s, all_namespaces, for_object, list(types or []), output, no_headers))
