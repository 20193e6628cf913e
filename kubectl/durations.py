"""Durations as kubectl flags take them: Go-style `30s`, `5m`, `1h30m`, `100ms`, or plain seconds."""

from __future__ import annotations

import re

from kubectl.cli import CmdError

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in `text`; CmdError when it is not a duration."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    pos, total = 0, 0.0
    while pos < len(text):
        m = _PART.match(text, pos)
        if not m:
            raise CmdError(f'invalid duration "{text}"')
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not text:
        raise CmdError('invalid duration ""')
    return total
