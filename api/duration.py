"""Go-style durations, as Kubernetes flags and `metav1.Duration` fields write them.

`--node-monitor-grace-period=40s`, `--timeout=5m`, `--pod-eviction-timeout=1h30m`: every component
flag that is a duration accepts these strings — and plain seconds (`40`, `0.5`), so tests can shrink
every timer. One parser for all of them, here, because components may not import each other.
"""

from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str | float | int) -> float:
    """Seconds from `40`, `0.5`, `40s`, `5m`, `100ms` or `1h30m`; ValueError for anything else."""
    if isinstance(text, int | float):
        return float(text)
    s = text.strip()
    try:
        return float(s)
    except ValueError:
        pass
    pos, total = 0, 0.0
    while pos < len(s):
        m = _PART.match(s, pos)
        if not m:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or not s:
        raise ValueError(f'invalid duration "{text}": use seconds or a Go duration like 40s, 5m, 100ms')
    return total
