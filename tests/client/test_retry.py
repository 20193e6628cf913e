"""The REST client waits out a 429 (Retry-After) and tries again, against a real mini-apiserver
whose flow control turns it away (tests/support/flowcontrol.py fills its priority level)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from api.errors import TooManyRequestsError
from client.rest import RESTClient
from tests.support.apiserver import APIServerProcess
from tests.support.flowcontrol import Hog, metric, until

AGENT = "retry-test/1.0"


@pytest.fixture(scope="module")
def tiny() -> Iterator[APIServerProcess]:
    server = APIServerProcess(args=["--max-requests-inflight", "1", "--max-mutating-requests-inflight", "0"]).start()
    try:
        yield server
    finally:
        server.cleanup()


def rejected(server: APIServerProcess) -> float:
    return metric(server, "apiserver_flowcontrol_rejected_requests_total", priority_level="global-default")


async def test_client_retries_after_429(tiny: APIServerProcess) -> None:
    hog = Hog(tiny, AGENT)
    try:
        await hog.hold()
        await hog.fill()
        # Without retries the 429 surfaces, with Kubernetes' Status.
        async with RESTClient(tiny.url, qps=0, user_agent=AGENT, max_retries=0) as impatient:
            with pytest.raises(TooManyRequestsError) as err:
                await impatient.list("configmaps", "default")
        assert err.value.retry_after_seconds == 1
        before = rejected(tiny)
        async with RESTClient(tiny.url, qps=0, user_agent=AGENT) as c:
            task = asyncio.create_task(c.list("configmaps", "default"))
            await until(lambda: rejected(tiny) > before, "the client to be turned away")
            assert not task.done()  # it is waiting out Retry-After, not failing
            assert await hog.release() == 201
            result = await asyncio.wait_for(task, 30)
        assert result["kind"] == "ConfigMapList"
        assert any(i["metadata"]["name"] == "held-retry-te" for i in result["items"])
    finally:
        hog.close()
