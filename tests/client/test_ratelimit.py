"""The token bucket holds a client to --kube-api-qps / --kube-api-burst."""

from __future__ import annotations

import time

from client.ratelimit import TokenBucket
from client.rest import RESTClient
from tests.support.apiserver import APIServerProcess


def test_a_fresh_bucket_allows_exactly_burst_requests_at_once() -> None:
    bucket = TokenBucket(qps=0.001, burst=5)  # refills so slowly that nothing drips in during the test
    assert [bucket.try_accept() for _ in range(6)] == [True] * 5 + [False]
    assert bucket.accepted == 5


def test_reservations_queue_up_in_arrival_order() -> None:
    bucket = TokenBucket(qps=10, burst=1)
    delays = [bucket.reserve() for _ in range(4)]
    # the first uses the saved token; each later one waits one more tenth of a second
    assert delays[0] == 0.0
    assert all(b > a for a, b in zip(delays, delays[1:], strict=False))
    assert 0.25 < delays[-1] <= 0.3 + 1e-6
    assert bucket.tokens < 0  # three tokens are owed


def test_zero_qps_means_no_limit() -> None:
    bucket = TokenBucket(qps=0, burst=1)
    assert all(bucket.try_accept() for _ in range(100))


async def test_client_requests_are_held_to_qps(apiserver: APIServerProcess) -> None:
    async with RESTClient(apiserver.url, qps=10, burst=1) as c:
        start = time.monotonic()
        for _ in range(20):
            await c.list("configmaps", "default")
        elapsed = time.monotonic() - start
    assert c.limiter.accepted == 20
    # 1 token saved + 19 refilled at 10/s: at least 1.9 s, whatever the machine's speed
    assert elapsed >= 1.85
