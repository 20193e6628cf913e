"""Small helpers over an object's `metadata`, shared by the REST handlers and admission.

Objects inside the server are plain dicts in wire form; these functions keep the fiddly parts
(names, timestamps, the spec/status split, generation) in one place.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime
from typing import Any

# The alphabet Kubernetes uses for generateName suffixes: no vowels (no accidental words) and
# no look-alike characters.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def new_uid() -> str:
    return str(uuid.uuid4())


def generate_name(prefix: str) -> str:
    return prefix + "".join(random.choices(_NAME_ALPHABET, k=5))


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    """The object's metadata dict, created if missing (bodies may omit it)."""
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything that is neither metadata nor status nor type info: what `generation` tracks."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
