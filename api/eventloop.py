"""The API server's event loop: uvloop's when it is installed, else asyncio's.

uvloop (a dependency) implements the loop, its sockets and its TLS in compiled code; asyncio's own
TLS layer is Python. uvicorn picks uvloop by itself only inside `uvicorn.run`, which no component
calls (the API server drives several uvicorn servers in one loop), so the choice is made here.
Measured on the API server (`bench/security.py`): +17-19 % requests per CPU second on plain HTTP,
+31-33 % with TLS. The other components stay on asyncio's loop: the scheduler's bind throughput
did not move with uvloop (`bench/scheduler.py`), and the kubelet serves HTTPS and plain HTTP on one
port by handing a connection to asyncio's own SSLProtocol (kubelet/server.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def new_event_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the loop above."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)
