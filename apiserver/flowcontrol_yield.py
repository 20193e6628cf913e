"""Large LISTs in slices, so one request never holds the event loop for long.

Flow control (flowcontrol.py) decides how many requests run at once; this module makes sure the
ones that run take turns. The API server is one event loop: a LIST of 2,000 pods costs ~150 ms of
CPU (profiled with py-spy under bench/overload.py: about half decoding the stored JSON, a third
encoding the answer), and json.loads/json.dumps never give the loop back — nor would they in a
thread, since the C codec keeps the GIL. So a `/readyz` or a kubelet's Lease renewal arriving
behind four such LISTs used to wait for all of them. Done in slices of `SLICE` objects with a yield
to the loop between slices, every other request gets a turn every few milliseconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from apiserver.codec import dumps

SLICE = 32  # objects encoded or decoded between two yields to the event loop (under 1 ms of work)


async def pause(i: int) -> None:
    """Yield to the event loop once every SLICE steps of a loop over objects."""
    if i and i % SLICE == 0:
        await asyncio.sleep(0)


async def encode_list(head: dict[str, Any], items: list[dict[str, Any]]) -> bytes:
    """The bytes of `{**head, "items": items}` as `dumps` writes them, encoded slice by slice."""
    if len(items) <= SLICE or not head:
        return dumps({**head, "items": items})
    slices = []
    for start in range(0, len(items), SLICE):
        if start:
            await asyncio.sleep(0)
        slices.append(dumps(items[start : start + SLICE])[1:-1])
    return _envelope(head, slices)


async def join_list(head: dict[str, Any], encoded: Iterable[bytes]) -> bytes:
    """The same bytes from items already encoded (the watch cache keeps each object's JSON)."""
    parts = []
    for i, item in enumerate(encoded):
        parts.append(item)
        await pause(i)
    return _envelope(head, parts)


def _envelope(head: dict[str, Any], item_parts: list[bytes]) -> bytes:
    return b"".join((dumps(head)[:-1], b',"items":[', b",".join(p for p in item_parts if p), b"]}"))
