"""Helpers for the printer tests: a fixed clock and a way to read a row by column name."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from apiserver.printers import build_table

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


def ago(seconds: float = 0, *, minutes: float = 0, hours: float = 0, days: float = 0) -> str:
    """An RFC 3339 timestamp that lies the given time before NOW."""
    delta = timedelta(seconds=seconds, minutes=minutes, hours=hours, days=days)
    return (NOW - delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def row(resource: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The single row the server prints for `obj`, as {column name: cell}."""
    table = build_table(resource, [obj], now=NOW)
    names = [c["name"] for c in table["columnDefinitions"]]
    cells = table["rows"][0]["cells"]
    assert len(cells) == len(names), "every column needs exactly one cell"
    return dict(zip(names, cells, strict=True))


def meta(name: str, *, age: str | None = None, **extra: Any) -> dict[str, Any]:
    metadata = {
        "name": name,
        "namespace": "default",
        "uid": f"uid-{name}",
        "creationTimestamp": age or ago(days=3),
    }
    metadata.update(extra)
    return metadata
