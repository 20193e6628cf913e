"""Human-readable durations, the way every AGE column in `kubectl get` shows them.

kubectl never prints "3 days, 4:05:06". It prints `3d4h`: about two significant figures, with the
precision shrinking as the duration grows (nobody cares about the seconds of a week-old pod). The
rules below are the ones of k8s.io/apimachinery/pkg/util/duration.HumanDuration, which the API
server's printers use for AGE, the job DURATION and the "(5m ago)" of pod restarts:

    under 2 minutes   -> seconds          "0s" .. "119s"
    under 10 minutes  -> minutes+seconds  "2m3s", "5m"
    under 3 hours     -> minutes          "10m" .. "179m"
    under 8 hours     -> hours+minutes    "3h", "7h59m"
    under 2 days      -> hours            "8h" .. "47h"
    under 8 days      -> days+hours       "2d", "7d23h"
    under 2 years     -> days             "8d" .. "729d"
    under 8 years     -> years+days       "2y", "7y364d"
    otherwise         -> years            "8y"

Clocks of different machines disagree a little, so a timestamp up to 1 s in the future still reads
"0s"; anything further in the future is "<invalid>".
"""

from __future__ import annotations

from datetime import UTC, datetime

UNKNOWN = "<unknown>"
INVALID = "<invalid>"


def human_duration(seconds: float) -> str:
    """Format a duration in seconds like kubectl's AGE column."""
    # Go converts with int(), which truncates toward zero: -1.5 s becomes -1 s, which is "0s".
    whole = int(seconds)
    if whole < -1:
        return INVALID
    if whole < 0:
        return "0s"
    if whole < 60 * 2:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if rest == 0 else f"{years}y{rest}d"
    return f"{hours // 24 // 365}y"


def parse_time(value: object) -> datetime | None:
    """Parse an RFC 3339 timestamp from the wire ("2024-05-01T10:00:00Z", with or without
    fractional seconds as in a MicroTime). Missing or unparsable values are None: Kubernetes
    treats them as the zero time, which every printer shows as <unknown> or leaves out."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def utc_now() -> datetime:
    return datetime.now(UTC)


def since(when: datetime | None, now: datetime | None = None) -> str:
    """How long ago `when` was; `<unknown>` for the zero (missing) time."""
    if when is None:
        return UNKNOWN
    return human_duration(((now or utc_now()) - when).total_seconds())


def translate_timestamp_since(ts: str | None, now: datetime | None = None) -> str:
    """How long ago the wire timestamp `ts` was, as kubectl prints it; `<unknown>` when missing."""
    return since(parse_time(ts), now)
