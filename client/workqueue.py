"""WorkQueue: the queue between informer handlers and a controller's workers (client-go's contract).

Handlers put *keys* ("default/web") on the queue; workers take a key, read the current state from
the informer cache, reconcile, and say `done(key)`. Three small collections make the guarantees:

    queue       keys waiting, in order             ["a", "c"]
    dirty       keys that need processing          {"a", "c", "b"}
    processing  keys a worker holds right now      {"b"}

- `add(key)`: if the key is already dirty, nothing happens - duplicates collapse, so a burst of
  ten updates to one object costs one reconcile. Otherwise it becomes dirty, and it is queued
  unless a worker is processing it right now.
- `get()`: the next key moves from queue/dirty to processing.
- `done(key)`: the key leaves processing; if it was added again meanwhile (it is dirty), it is
  queued now. So one key is never handed to two workers at once, and a change that arrived during
  processing is not lost: the key simply comes round again.

Failures are retried with per-item exponential backoff: `add_rate_limited(key)` waits
5 ms x 2^(failures so far), capped at 1000 s (client-go's default item limiter), then adds the key.
`forget(key)` after a success resets the count; `num_requeues(key)` tells how often it failed.
`add_after(key, delay)` is the delaying queue under it (also used for "check again in 30 s").

`shutdown()`: new adds are ignored; workers still get what is queued, then `get()` raises
`ShutDown`. The queue is asyncio-only: use it from the event loop's thread.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Hashable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class ShutDown(Exception):
    """get() on a queue that was shut down and has nothing left."""


class ItemExponentialFailureRateLimiter(Generic[T]):
    """base x 2^failures per item, capped at `max_delay` (client-go: 5 ms base, 1000 s cap)."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        """The delay before this retry; each call counts one more failure."""
        n = self._failures.get(item, 0)
        self._failures[item] = n + 1
        if n > 64:  # 2**n would overflow a float long after reaching the cap
            return self.max_delay
        return min(self.base_delay * 2**n, self.max_delay)

    def num_requeues(self, item: T) -> int:
        return self._failures.get(item, 0)

    def forget(self, item: T) -> None:
        self._failures.pop(item, None)


class WorkQueue(Generic[T]):
    def __init__(
        self, name: str = "", rate_limiter: ItemExponentialFailureRateLimiter[T] | None = None
    ) -> None:
        self.name = name
        self.rate_limiter: ItemExponentialFailureRateLimiter[T] = (
            rate_limiter or ItemExponentialFailureRateLimiter()
        )
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._waiting: dict[T, tuple[float, asyncio.TimerHandle]] = {}  # add_after: item -> (when, timer)
        self._getters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        self.adds = 0  # total add() calls that queued something, for metrics

    # ------------------------------------------------------------------ the basic queue

    def add(self, item: T) -> None:
        if self._shutting_down or item in self._dirty:
            return  # shut down, or already waiting to be processed: collapse
        self._dirty.add(item)
        self.adds += 1
        if item in self._processing:
            return  # done() will queue it again
        self._queue.append(item)
        self._wake_one()

    async def get(self) -> T:
        """The next key, waiting for one if need be. Raises ShutDown once shut down and empty."""
        while not self._queue:
            if self._shutting_down:
                raise ShutDown(self.name)
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._wake_one()  # we were woken but will not take the item: pass it on
                else:
                    self._remove_getter(fut)
                raise
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        return item

    def done(self, item: T) -> None:
        """The worker has finished with `item` (successfully or not)."""
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._wake_one()

    def __len__(self) -> int:
        """Depth: keys waiting to be handed out (the `workqueue_depth` metric)."""
        return len(self._queue)

    def len(self) -> int:
        return len(self._queue)

    @property
    def processing(self) -> frozenset[T]:
        return frozenset(self._processing)

    def shutdown(self) -> None:
        self._shutting_down = True
        for _, timer in self._waiting.values():
            timer.cancel()
        self._waiting.clear()
        while self._getters:
            fut = self._getters.popleft()
            if not fut.done():
                fut.set_result(None)

    def shutting_down(self) -> bool:
        return self._shutting_down

    async def __aiter__(self) -> AsyncIterator[T]:
        """`async for key in queue:` until shutdown. Still call `done(key)` for each."""
        while True:
            try:
                yield await self.get()
            except ShutDown:
                return

    # ------------------------------------------------------------------ delaying

    def add_after(self, item: T, delay: float) -> None:
        """Add `item` after `delay` seconds. If it is already waiting, the earlier time wins."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(item)
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        current = self._waiting.get(item)
        if current is not None:
            if current[0] <= when:
                return
            current[1].cancel()
        self._waiting[item] = (when, loop.call_at(when, self._fire, item))

    def _fire(self, item: T) -> None:
        self._waiting.pop(item, None)
        self.add(item)

    # ------------------------------------------------------------------ rate limiting

    def add_rate_limited(self, item: T) -> None:
        """Retry `item` after its backoff: 5 ms, 10 ms, 20 ms, ... up to 1000 s."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Stop tracking failures of `item` (call after it was processed successfully)."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)

    # ------------------------------------------------------------------ internals

    def _wake_one(self) -> None:
        while self._getters:
            fut = self._getters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    def _remove_getter(self, fut: asyncio.Future[None]) -> None:
        try:
            self._getters.remove(fut)
        except ValueError:
            pass
