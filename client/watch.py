"""One watch event, and how a watch stream is read off the wire.

A watch is an ordinary GET with `?watch=1` whose response never ends on its own: the API server
writes one JSON object per line (newline-delimited JSON over chunked HTTP) as changes happen:

    {"type":"ADDED","object":{...the whole object...}}
    {"type":"MODIFIED","object":{...}}
    {"type":"DELETED","object":{...its last state...}}
    {"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"42"}}}
    {"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired",...}}

Every object carries the `resourceVersion` of the change, so a client that remembers the last one
it saw can reconnect with `resourceVersion=<that>` and miss nothing. A BOOKMARK carries only a
resourceVersion: "nothing you watch changed up to here" - it lets a quiet watcher keep a fresh
resume point, so it is not sent back to 410 after a reconnect.

An ERROR event ends the stream. We raise it as the `StatusError` it carries (a `GoneError` for 410
Expired), so callers handle it with `except` like any other failed request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api import wirejson
from api.errors import StatusError

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED | MODIFIED | DELETED | BOOKMARK
    object: dict[str, Any]

    @property
    def resource_version(self) -> str:
        return str((self.object.get("metadata") or {}).get("resourceVersion") or "")


def decode_event(line: str | bytes) -> WatchEvent | None:
    """One NDJSON line -> a WatchEvent; None for a blank line; raises the Status of an ERROR."""
    if not line.strip():
        return None
    raw = wirejson.loads(line)
    type_ = raw.get("type", "")
    obj = raw.get("object") or {}
    if type_ == ERROR:
        raise StatusError.from_status(obj if isinstance(obj, dict) else {"message": str(obj)})
    return WatchEvent(type_, obj)
