"""Small helpers over an object's `metadata`, shared by the REST handlers and admission.

Objects inside the server are plain dicts in wire form; these functions keep the fiddly parts
(names, timestamps, the spec/status split, generation) in one place.
"""

from __future__ import annotations

import os
import random
import uuid
from datetime import datetime
from typing import Any

# The alphabet Kubernetes uses for generateName suffixes: no vowels (no accidental words) and
# no look-alike characters.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def parse_rfc3339(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


_random_pool = bytearray()


def new_uid() -> str:
    """A random (version 4) UUID. Random bytes are drawn 4 KiB at a time: one system call per 256 uids."""
    global _random_pool
    if len(_random_pool) < 16:
        _random_pool = bytearray(os.urandom(4096))
    raw = bytes(_random_pool[:16])
    del _random_pool[:16]
    return str(uuid.UUID(bytes=raw, version=4))


MAX_GENERATED_NAME_PREFIX = 58  # 63 - 5: Kubernetes cuts generateName so the result fits a label value


def generate_name(prefix: str) -> str:
    """`generateName` plus five random characters, the prefix cut to 58 as Kubernetes does."""
    return prefix[:MAX_GENERATED_NAME_PREFIX] + "".join(random.choices(_NAME_ALPHABET, k=5))


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
