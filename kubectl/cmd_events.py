"""`kubectl events`: the events of a namespace (or all, or of one object), oldest first.

    LAST SEEN         TYPE      REASON      OBJECT      MESSAGE
    1s                Normal    Scheduled   Pod/web-1   Successfully assigned default/web-1 to node-1
    5s (x2 over 9s)   Warning   BackOff     Pod/web-2   Back-off restarting failed container

LAST SEEN is the age of the first sighting for a one-off event, and `<last> (xN over <first>)` for
a repeated one (a series, or count > 1). Rows are sorted by when the event was last seen.
`--for TYPE/NAME` asks the server for that object's events only (a field selector); `--types`
keeps only Normal and/or Warning. `-o yaml|json` prints one `EventList`, as kubectl builds it.

`-w` watches instead of listing, as kubectl does: the watch starts without a resourceVersion, so
the server first sends every existing event as ADDED, then each new or changed one; deletions
(events expire after an hour) are not printed. Each event is printed as it arrives — the header
with the first — so a row's columns line up with the rows of its own arrival only.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any

from kubectl import commandline as typer
from kubectl.cli import CmdError, Session, echo, run, warn
from kubectl.main import app

_TYPES = ("Normal", "Warning")
# corev1.Event's fields that Go's JSON writes even when unset (no `omitempty`, or a struct)
_GO_ZERO_FIELDS: tuple[tuple[str, Any], ...] = (
    ("eventTime", None), ("reportingComponent", ""), ("reportingInstance", ""), ("firstTimestamp", None),
    ("lastTimestamp", None), ("source", {}), ("involvedObject", {}),
)


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


# -o json prints what Go's encoder writes for the typed objects: fields in struct order, not sorted
_GO_ORDER: dict[str, tuple[str, ...]] = {
    "list": ("kind", "apiVersion", "metadata", "items"),
    "event": ("kind", "apiVersion", "metadata", "involvedObject", "reason", "message", "source", "firstTimestamp",
              "lastTimestamp", "count", "type", "eventTime", "series", "action", "related", "reportingComponent",
              "reportingInstance"),
    "metadata": ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                 "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
                 "ownerReferences", "finalizers", "managedFields"),
    "reference": ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"),
    "source": ("component", "host"),
    "series": ("count", "lastObservedTime"),
}  # fmt: skip


def _in_order(obj: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    return {**{k: obj[k] for k in order if k in obj}, **{k: obj[k] for k in sorted(obj) if k not in order}}


def go_ordered_event(e: dict[str, Any]) -> dict[str, Any]:
    out = _in_order(e, _GO_ORDER["event"])
    for key, order in (("metadata", "metadata"), ("involvedObject", "reference"), ("related", "reference"),
                       ("source", "source"), ("series", "series")):  # fmt: skip
        if isinstance(out.get(key), dict):
            out[key] = _in_order(out[key], _GO_ORDER[order])
    return out


def go_json(obj: dict[str, Any]) -> str:
    import json

    if obj.get("kind") == "EventList":
        obj = {**_in_order(obj, _GO_ORDER["list"]), "items": [go_ordered_event(e) for e in obj["items"]]}
    else:
        obj = go_ordered_event(obj)
    return json.dumps(obj, indent=4, ensure_ascii=False) + "\n"


def event_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The list kubectl prints for -o: typed `EventList`, list metadata empty."""
    return {"apiVersion": "v1", "items": items, "kind": "EventList", "metadata": {}}


def with_kind(e: dict[str, Any]) -> dict[str, Any]:
    """The event as kubectl prints it after decoding it into Go's corev1.Event: its kind set, the
    fields without `omitempty` present with their zero values (eventTime null, the reporting
    strings empty, firstTimestamp/lastTimestamp null, source and involvedObject objects), and
    managedFields hidden as `get` hides them."""
    from kubectl.printing.output import hide_managed_fields

    e.setdefault("apiVersion", "v1")
    e.setdefault("kind", "Event")
    for key, zero in _GO_ZERO_FIELDS:
        e.setdefault(key, zero)
    e.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    return hide_managed_fields(e)


def table_row(e: dict[str, Any], now: datetime, all_namespaces: bool) -> list[str]:
    obj = e.get("involvedObject") or {}
    row = [
        interval(e, now),
        str(e.get("type", "")),
        str(e.get("reason", "")),
        f"{obj.get('kind', '')}/{obj.get('name', '')}",
        str(e.get("message", "")).strip(),
    ]
    return ([str((e.get("metadata") or {}).get("namespace", ""))] if all_namespaces else []) + row


def header(all_namespaces: bool) -> list[str]:
    return (["NAMESPACE"] if all_namespaces else []) + ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]


async def watch_events(
    s: Session, ns: str | None, field_selector: str | None, wanted: list[str], output: str | None, no_headers: bool,
    all_namespaces: bool,
) -> int:  # fmt: skip
    from kubectl.printing import output as out_fmt
    from kubectl.printing.table import TabWriter

    printed = 0
    async for event in s.client.watch("events", ns, field_selector=field_selector, allow_bookmarks=False):
        e = event.object
        if event.type not in ("ADDED", "MODIFIED") or (wanted and e.get("type") not in wanted):
            continue
        if output:
            fmt = output.partition("=")[0]
            if fmt == "yaml":
                text = ("---\n" if printed else "") + out_fmt.to_yaml(with_kind(e))
            elif fmt == "json":
                text = go_json(with_kind(e))
            else:
                text = out_fmt.render(output, [with_kind(e)], True)
        else:
            rows = [] if (no_headers or printed) else [header(all_namespaces)]
            rows.append(table_row(e, datetime.now(UTC), all_namespaces))
            text = "".join(line + "\n" for line in TabWriter().render(rows))
        sys.stdout.write(text)
        sys.stdout.flush()
        printed += 1
    return 0


async def events(
    s: Session, all_namespaces: bool, for_object: str | None, types: list[str], output: str | None, no_headers: bool,
    watch: bool = False,
) -> int:  # fmt: skip
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
    if output:
        from kubectl.printing import output as out_fmt

        out_fmt.check_format(output)
    if watch:
        return await watch_events(s, ns, field_selector, wanted, output, no_headers, all_namespaces)
    lst = await s.client.list("events", ns, field_selector=field_selector)
    items = [e for e in lst.get("items") or [] if not wanted or e.get("type") in wanted]
    items.sort(key=last_seen)
    if output and items:
        from kubectl.printing import output as out_fmt

        items = [with_kind(e) for e in items]
        fmt = output.partition("=")[0]
        if fmt == "yaml":
            sys.stdout.write(out_fmt.to_yaml(event_list(items)))
        elif fmt == "json":
            sys.stdout.write(go_json(event_list(items)))
        elif fmt == "name":
            pass  # kubectl's name printer finds no object in the EventList it is given: it prints nothing
        elif fmt == "jsonpath":
            sys.stdout.write(out_fmt.render(output, [event_list(items)], True))
        else:
            sys.stdout.write(out_fmt.render(output, items, False))
        return 0
    if not items:
        warn("No events found." if all_namespaces else f"No events found in {s.namespace} namespace.")
        return 0
    from kubectl.printing.table import TabWriter

    now = datetime.now(UTC)
    rows = [] if no_headers else [header(all_namespaces)]
    rows += [table_row(e, now, all_namespaces) for e in items]
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
    watch: bool = typer.Option(False, "-w", "--watch", help="After listing the events, watch for more."),
) -> None:
    """List events."""
    run(lambda s: events(s, all_namespaces, for_object, list(types or []), output, no_headers, watch))
