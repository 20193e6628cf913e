"""An idle keep-alive connection stays open as long as kube-apiserver keeps one (90 s), not 5 s."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.apiserver import APIServerProcess
from tests.support.fixtures import apiserver  # noqa: F401  (one server, not one per backend: no storage here)
from tests.support.flowcontrol import Raw


async def test_a_connection_idle_longer_than_uvicorns_default_still_serves(
    apiserver: APIServerProcess,  # noqa: F811
) -> None:
    conn = await Raw.open(apiserver)
    try:
        conn.send("GET", "/version", "idle-test")
        assert (await asyncio.wait_for(conn.response(), 10))[0] == 200
        # Idle past uvicorn's default keep-alive (5 s), which would close the connection here. This
        # sleep is the test: what is measured is that nothing happens for longer than that.
        await asyncio.sleep(6)
        conn.send("GET", "/version", "idle-test")
        try:
            status = (await asyncio.wait_for(conn.response(), 10))[0]
        except (IndexError, asyncio.IncompleteReadError, ConnectionError):
            pytest.fail("the server closed the connection while it was idle")
        assert status == 200
    finally:
        conn.close()
