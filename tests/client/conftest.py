"""Fixtures for the client tests: real mini-apiserver processes, and clients pointed at them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest

from client.rest import RESTClient
from tests.support.apiserver import APIServerProcess


@pytest.fixture(scope="module")
def apiserver() -> Iterator[APIServerProcess]:
    """One server shared by a module's tests (tests use unique names, so they do not collide)."""
    server = APIServerProcess(args=["--watch-bookmark-interval", "0.5"]).start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
async def client(apiserver: APIServerProcess) -> AsyncIterator[RESTClient]:
    async with RESTClient(apiserver.url, qps=0, burst=1) as c:
        yield c


async def eventually(
    check: Callable[[], bool | Awaitable[bool]], timeout: float = 8.0, what: str = "condition"
) -> None:
    """Poll `check` until it is true, failing after `timeout` seconds (a deadline, not a sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.02)
