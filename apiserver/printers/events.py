"""The event row: what happened (REASON, MESSAGE), to which object, and when.

Events come in two generations and the printer reads both. The classic core/v1 recorder fills
firstTimestamp, lastTimestamp and count, bumping count when the same event repeats. The newer
events.k8s.io recorder sets only eventTime and, for repeats, a `series` with its own count and
lastObservedTime. So LAST SEEN is lastTimestamp, else first seen (firstTimestamp, else
eventTime), and a series overrides both LAST SEEN and COUNT; a singleton without count counts 1.
OBJECT is `kind/name` with the kind in lower case (`pod/web`), the way you would type it back
into `kubectl describe`. SOURCE is `component, host`, e.g. `kubelet, node-1`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers.columns import NAME, Cells, Column, TablePrinter, dig, mapping, number, wide
from apiserver.printers.duration import parse_time, since


def event_source(event: dict[str, Any]) -> str:
    """`component, host`; the newer reportingComponent/reportingInstance fields stand in."""
    component = dig(event, "source", "component") or event.get("reportingComponent") or ""
    host = dig(event, "source", "host") or event.get("reportingInstance") or ""
    return f"{component}, {host}" if host else component


def event_cells(event: dict[str, Any], now: datetime) -> Cells:
    first = parse_time(event.get("firstTimestamp"))
    first_seen = since(first if first is not None else parse_time(event.get("eventTime")), now)
    last = parse_time(event.get("lastTimestamp"))
    last_seen = since(last, now) if last is not None else first_seen
    count = number(event, "count")
    series = event.get("series")
    if isinstance(series, dict):
        last_seen = since(parse_time(series.get("lastObservedTime")), now)
        count = number(series, "count")
    elif count == 0:
        count = 1  # singleton events of the new API carry no count
    involved = mapping(event, "involvedObject")
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    return [
        last_seen,
        event.get("type", ""),
        event.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        event_source(event),
        str(event.get("message", "")).strip(),
        first_seen,
        count,
        dig(event, "metadata", "name", default=""),
    ]


EVENT_COLUMNS = (
    Column(
        "Last Seen", description="The time at which the most recent occurrence of this event was recorded."
    ),
    Column("Type", description="Type of this event (Normal, Warning)."),
    Column(
        "Reason",
        description="This should be a short, machine understandable string that gives the "
        "reason for the transition into the object's current status.",
    ),
    Column("Object", description="The object that this event is about."),
    wide(
        "Subobject",
        "If referring to a piece of an object instead of an entire object, the field "
        "path of that piece, such as spec.containers{nginx}.",
    ),
    wide("Source", "The component reporting this event. Should be a short machine understandable string."),
    Column("Message", description="A human-readable description of the status of this operation."),
    wide(
        "First Seen",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    ),
    wide("Count", "The number of times this event has occurred."),
    Column("Name", priority=1, format="name", description=NAME.description),
)


PRINTERS = {"events": TablePrinter(EVENT_COLUMNS, event_cells)}
