"""Timestamps as Kubernetes writes and reads them: RFC 3339 in UTC.

`metav1.Time` is written to the second (`2026-11-27T18:14:58Z`); a `MicroTime` (a Lease's
renewTime, events) carries a fraction. Everyone writes the first and must read both.

Each second's text is made once: the API server stamps every write (creationTimestamp, each
managedFields entry) and a kubelet rebuilds every pod's status, start times included, on each pass
of its worker — the same few seconds, formatted over and over.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from functools import lru_cache


def rfc3339(ts: float) -> str:
    """The second `ts` (seconds since the epoch) falls in."""
    return _second(int(ts))


def now_rfc3339() -> str:
    return _second(int(time.time()))


@lru_cache(maxsize=1024)
def _second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str | None) -> float | None:
    """Seconds since the epoch from an RFC 3339 Time or MicroTime, None if absent or unreadable."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
