"""A token bucket: how a client holds itself to `--kube-api-qps` and `--kube-api-burst`.

Why a client limits itself: one buggy controller in a hot loop can send thousands of requests a
second and starve everyone else of the API server. client-go therefore puts a limiter in front of
every request a component makes (defaults for the controller-manager: 20 QPS, burst 30).

The mechanism is a bucket that holds at most `burst` tokens and refills at `qps` tokens per
second. A request takes one token; if the bucket is empty it waits until one has dripped in. So a
client that has been quiet may fire `burst` requests at once, and over any long window it never
exceeds `qps` on average.

Waiting is done by *reservation* (like Go's `rate.Limiter`): a caller takes its token at once,
even if that drives the balance negative, and then sleeps until the balance it owes has been
refilled. Callers are served strictly in arrival order and nobody needs to poll.

A watch is one request however long it streams: it takes one token when it is opened.
"""

from __future__ import annotations

import asyncio
import time


class TokenBucket:
    """`qps` tokens per second, at most `burst` saved up. `qps <= 0` means no limit at all."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = float(qps)
        self.burst = max(int(burst), 1)
        self._tokens = float(self.burst)  # a fresh client may burst straight away
        self._last = time.monotonic()
        self.accepted = 0  # requests let through, for tests and metrics

    @property
    def unlimited(self) -> bool:
        return self.qps <= 0

    def _refill(self, now: float) -> None:
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now

    @property
    def tokens(self) -> float:
        """Tokens in the bucket now; negative while reserved tokens are still owed."""
        if self.unlimited:
            return float(self.burst)
        self._refill(time.monotonic())
        return self._tokens

    def try_accept(self) -> bool:
        """Take a token if one is there now; never waits (client-go's `TryAccept`)."""
        if self.unlimited:
            self.accepted += 1
            return True
        self._refill(time.monotonic())
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            self.accepted += 1
            return True
        return False

    def reserve(self) -> float:
        """Take a token now and return how many seconds the caller must wait before using it."""
        self.accepted += 1
        if self.unlimited:
            return 0.0
        self._refill(time.monotonic())
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def wait(self) -> None:
        """Block until this caller may send one request (client-go's `Accept`/`Wait`)."""
        delay = self.reserve()
        if delay > 0:
            try:
                await asyncio.sleep(delay)
            except asyncio.CancelledError:
                self._tokens += 1.0  # a cancelled caller hands its reserved token back
                self.accepted -= 1
                raise
