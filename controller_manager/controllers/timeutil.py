"""Kubernetes' wire format for times, in one place for every controller.

`metav1.Time` is RFC 3339 in UTC with whole seconds (`2024-05-01T10:00:00Z`); a `MicroTime` (Lease
renewTime, events) carries a fraction. Controllers write the first and must read both.
"""

from __future__ import annotations

from datetime import datetime

from api.timestamps import now_rfc3339 as now_rfc3339  # written as everything else writes it


def parse_time(value: str | None) -> float | None:
    """Seconds since the epoch from an RFC 3339 Time or MicroTime, None if absent or unreadable."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
