"""Watch for the embedded store: replay from the log, then follow a live in-process broadcast.

Why two sources: the log table has every change still retained, but polling it would either
burn CPU or add latency (kine polls once a second). The writer already knows each change the
moment it commits, so it broadcasts the events to in-process subscribers: a watch gets them in
well under a millisecond. A watch starting in the past reads the table first.

The handover, without a gap and without a duplicate (the whole point of resourceVersion):
  1. read pages of the table from `next_rev` until a page comes back short (caught up);
  2. subscribe to the broadcast — from now on every commit lands in our queue;
  3. read the table once more from `next_rev`: this catches what committed between 1 and 2;
  4. follow the queue, skipping anything below `next_rev` (already yielded from the table).
`next_rev` is always "the revision after the last one yielded", so order and uniqueness hold by
construction.

A slow consumer: each subscriber's queue is bounded. When the writer outruns a watcher by more
than `queue_size` events, the queue is dropped and the watcher goes back to step 1 — it catches
up from the table, which costs disk reads instead of memory. Only if compaction has meanwhile
removed the revisions it still needs does its stream end, with `Compacted` (the client re-lists),
exactly what etcd does to a watcher that fell behind a compaction.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable

from apiserver.storage.interface import ProgressRequests, Unavailable, WatchEvent

# read_page(prefix, start) -> (events from `start` on, oldest first; True if the page was cut short)
ReadPage = Callable[[str, int], Awaitable[tuple[list[WatchEvent], bool]]]


PROGRESS_DUE = object()  # Subscriber.next(): the inbox is empty and progress was asked for


class Subscriber:
    """One watcher's bounded inbox for live events."""

    def __init__(self, prefix: str, queue_size: int, progress: ProgressRequests | None = None) -> None:
        self.prefix = prefix
        self._events: deque[WatchEvent] = deque()
        self._queue_size = queue_size
        self._wakeup = asyncio.Event()
        self._state: str = "live"  # "live" | "overflowed" | "closed"
        self.progress = progress
        if progress is not None:
            progress.listen(self._wakeup.set)

    def detach(self) -> None:
        if self.progress is not None:
            self.progress.unlisten(self._wakeup.set)

    def offer(self, events: list[WatchEvent]) -> None:
        """Called by the broadcast (on the event loop); never blocks the writer."""
        if self._state != "live":
            return
        woke = False
        for event in events:
            if event.key.startswith(self.prefix):
                woke = True
                if len(self._events) >= self._queue_size:
                    self._events.clear()  # give the memory back; the table still has it all
                    self._state = "overflowed"
                    break
                self._events.append(event)
        if woke:  # a watcher of another prefix is not woken for nothing
            self._wakeup.set()

    def close(self) -> None:
        self._state = "closed"
        self._events.clear()
        self._wakeup.set()

    def _progress_asked(self) -> bool:
        return self.progress is not None and self.progress.wanted.is_set()

    async def next(self) -> WatchEvent | object | None:
        """The next live event; PROGRESS_DUE when none is queued and progress was asked for; None
        if this inbox overflowed; Unavailable if the store closed."""
        while not self._events and self._state == "live" and not self._progress_asked():
            self._wakeup.clear()
            await self._wakeup.wait()
        if self._state == "closed":
            raise Unavailable("the storage was closed")
        if self._events:
            return self._events.popleft()
        if self._state == "live" and self.progress is not None and self.progress.take():
            return PROGRESS_DUE
        return None


def _root(key: str) -> str:
    """The key up to its resource: "/registry/pods/default/x" -> "/registry/pods/"."""
    cut = key.find("/", key.find("/", 1) + 1)
    return key if cut < 0 else key[: cut + 1]


class Broadcast:
    """Fan-out of committed events to the live subscribers (all on the event loop thread).

    There is a subscriber per resource the API server serves (its watch cache), so a commit is
    not offered to each of them in turn: each event goes only to the subscribers whose prefix can
    hold its key. Which those are is looked up by the key's resource root ("/registry/pods/"),
    worked out once per root and forgotten when a subscriber comes or goes."""

    def __init__(self, queue_size: int) -> None:
        self.queue_size = queue_size
        self._subscribers: set[Subscriber] = set()
        self._by_root: dict[str, tuple[Subscriber, ...]] = {}
        self.closed = False

    def __len__(self) -> int:
        return len(self._subscribers)

    def subscribe(self, prefix: str, progress: ProgressRequests | None = None) -> Subscriber:
        sub = Subscriber(prefix, self.queue_size, progress)
        if self.closed:
            sub.close()
        self._subscribers.add(sub)
        self._by_root.clear()
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        sub.detach()
        self._subscribers.discard(sub)
        self._by_root.clear()

    def _for_root(self, root: str) -> tuple[Subscriber, ...]:
        # A key under both the root and a prefix has them both as prefixes: one holds the other.
        subs = tuple(s for s in self._subscribers if s.prefix.startswith(root) or root.startswith(s.prefix))
        self._by_root[root] = subs
        return subs

    def publish(self, events: list[WatchEvent]) -> None:
        batches: dict[Subscriber, list[WatchEvent]] = {}
        for event in events:
            root = _root(event.key)
            subs = self._by_root.get(root)
            for sub in self._for_root(root) if subs is None else subs:
                batches.setdefault(sub, []).append(event)
        for sub, batch in batches.items():
            sub.offer(batch)

    def close(self) -> None:
        self.closed = True
        for sub in self._subscribers:
            sub.close()


async def watch_stream(
    broadcast: Broadcast, read_page: ReadPage, prefix: str, next_rev: int,
    progress: ProgressRequests | None = None, current: Callable[[], int] = lambda: 0,
) -> AsyncIterator[WatchEvent]:  # fmt: skip
    """Every change under `prefix` from `next_rev` on, in order, once (see the module docstring).

    Progress (ProgressRequests) is answered while following the broadcast, when the inbox is
    empty: the broadcast hands each commit to every inbox before its writer hears back, so an
    empty inbox means every change up to the store's newest revision (`current()`) was yielded."""
    sub: Subscriber | None = None
    try:
        while True:
            # Steps 1 and 3: the table, page by page, until caught up.
            while True:
                events, cut_short = await read_page(prefix, next_rev)
                for event in events:
                    yield event
                    next_rev = event.revision + 1
                if not cut_short:
                    break
            if sub is None:
                sub = broadcast.subscribe(prefix, progress)  # step 2, then read the table once more
                continue
            # Step 4: live events until the store closes (raises) or our inbox overflows (None).
            while (item := await sub.next()) is not None:
                if item is PROGRESS_DUE:
                    reached = max(current(), next_rev - 1)
                    yield WatchEvent("PROGRESS", "", None, reached)
                    next_rev = reached + 1
                    continue
                assert isinstance(item, WatchEvent)
                if item.revision >= next_rev:
                    yield item
                    next_rev = item.revision + 1
            broadcast.unsubscribe(sub)
            sub = None
    finally:
        if sub is not None:
            broadcast.unsubscribe(sub)
