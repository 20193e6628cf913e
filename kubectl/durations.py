"""Durations as kubectl flags take them: Go-style `30s`, `5m`, `1h30m`, `100ms`, or plain seconds."""

from __future__ import annotations

from api import duration
from kubectl.cli import CmdError


def parse_duration(text: str) -> float:
    """Seconds in `text`; CmdError (kubectl's wording) when it is not a duration."""
    try:
        return duration.parse_duration(text)
    except ValueError:
        raise CmdError(f'invalid duration "{text.strip()}"') from None
