"""API Priority and Fairness, the part a classroom's API server needs.

Why: one event loop serves every request. Forty-eight connections listing 2,000 pods in a loop
used to get all of it, so `/readyz` took 9 s, a kubelet's Lease renewal missed its deadline and
nodes went NotReady — the "noisy neighbour" problem kube-apiserver solves with APF (KEP-1040).
Instead of letting every request run at once, the server holds a fixed number of *seats* and
shares them out:

    request ──▶ classify (flowcontrol_schemas.py: FlowSchema → priority level, flow)
                   │
                   ├─ exempt (health, metrics): runs at once, counts nowhere
                   ├─ long-running (watch, logs -f): runs at once, counts nowhere, as in Kubernetes
                   └─ priority level "global-default", "node-high", ...
                         seats free and nobody waiting? ─▶ run
                         else: into one of the level's queues ─▶ run when fair queuing picks it
                         queue full, or waited too long   ─▶ 429 TooManyRequests + Retry-After

How this maps to Kubernetes:
- The server's concurrency limit is `--max-requests-inflight` + `--max-mutating-requests-inflight`
  (400 + 200), as kube-apiserver computes it when APF is on (the read/mutating split only applies
  to the old max-in-flight filter).
- Each `PriorityLevelConfiguration` gets `ceil(limit * nominalConcurrencyShares / sum of shares)`
  seats. The levels and their shares, queues, hand sizes and queue lengths are Kubernetes' suggested
  ones (`LEVELS` below); they are fixed here, not API objects you can edit.
- Work estimation: a request takes one seat, a LIST one seat per 100 objects of its resource
  (at most 10), so a list of 2,000 pods is worth ten GETs.
- Fair queuing: a flow is dealt a *hand* of `hand_size` queues out of `queues` from a hash of its
  name (shuffle sharding) and each request joins the shortest queue of its hand, so a flow that
  floods one level cannot fill every queue, and two flows rarely share a whole hand. Kubernetes then
  picks the queue whose head has the earliest virtual finish time (fair by seat-seconds). We keep
  the same idea without the fluid clock: each queue is charged seats x seconds for every request
  it ran (an estimate when it starts, corrected when it ends), the next request comes from the
  queue whose charge plus its head's estimate is smallest, and a queue that was idle starts level
  with the busy ones. A LIST of ten seats for two seconds costs a thousand 20 ms GETs. Either way
  48 LISTs of one script wait behind one another, while a `kubectl get cm x` from someone else gets the next free seat.
- Like Kubernetes, dispatch never skips a head that does not fit: while a ten-seat LIST waits
  for ten free seats, a one-seat GET behind it in the order waits too (skipping would starve wide
  requests). That is what still delays single GETs under bench/overload.py.
- A queued request waits at most `QUEUE_WAIT` seconds (Kubernetes: a quarter of the request
  timeout), then gets 429 like one that found its queue full.

Metrics carry Kubernetes' names: apiserver_flowcontrol_current_executing_seats,
apiserver_flowcontrol_current_inqueue_requests, apiserver_flowcontrol_rejected_requests_total,
apiserver_flowcontrol_dispatched_requests_total and apiserver_flowcontrol_request_wait_duration_seconds,
labelled by priority_level (and flow_schema).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from api import errors
from apiserver.flowcontrol_schemas import Classification, RequestAttributes

QUEUE_WAIT = 15.0  # seconds a request may wait in a queue: kube-apiserver's 60 s request timeout / 4
RETRY_AFTER = 1  # seconds, what the Retry-After header of a 429 says
OBJECTS_PER_SEAT = 100  # a LIST costs one seat per this many objects...
MAX_SEATS = 10  # ...and at most this many
ESTIMATED_SECONDS = 0.05  # what a request is charged when it starts; corrected when it ends


@dataclass(frozen=True)
class LevelConfig:
    """A PriorityLevelConfiguration of type Limited (exempt is the one of type Exempt)."""

    name: str
    shares: int  # nominalConcurrencyShares
    queues: int = 64
    hand_size: int = 6
    queue_length_limit: int = 50


# Kubernetes' suggested PriorityLevelConfigurations (v1.32), minus catch-all (nothing here
# reaches it: global-default matches everything the other schemas leave).
LEVELS = (
    LevelConfig("system", 30),
    LevelConfig("node-high", 40),
    LevelConfig("leader-election", 10, queues=16, hand_size=4),
    LevelConfig("workload-high", 40, queues=128),
    LevelConfig("workload-low", 100, queues=128),
    LevelConfig("global-default", 20, queues=128),
)


@dataclass(eq=False)
class _Waiter:
    seats: int
    granted: asyncio.Future[None]


@dataclass(eq=False)
class PriorityLevel:
    config: LevelConfig
    limit: int  # seats
    executing: int = 0  # seats in use
    waiting: int = 0  # requests queued
    queues: list[deque[_Waiter]] = field(default_factory=list)
    served: list[float] = field(default_factory=list)  # seat-seconds each queue has been given so far

    def __post_init__(self) -> None:
        self.queues = [deque() for _ in range(self.config.queues)]
        self.served = [0.0] * self.config.queues

    @functools.lru_cache(maxsize=4096)  # noqa: B019 (a level lives as long as the server)
    def hand(self, flow: str) -> tuple[int, ...]:
        """Shuffle sharding: `hand_size` distinct queues for this flow, from a hash of its name."""
        n, size = self.config.queues, min(self.config.hand_size, self.config.queues)
        value = int.from_bytes(hashlib.sha256(flow.encode()).digest()[:8], "big")
        picked: list[int] = []
        for i in range(size):  # deal cards from a shrinking deck, as Kubernetes' Dealer does
            value, card = divmod(value, n - i)
            for p in sorted(picked):
                if card >= p:
                    card += 1
            picked.append(card)
        return tuple(picked)

    def pick(self, flow: str) -> int:
        """The shortest queue of the flow's hand; an idle queue starts level with the busy ones
        (no credit for idling)."""
        index = min(self.hand(flow), key=lambda i: len(self.queues[i]))
        if not self.queues[index] and self.waiting:
            busy = [self.served[i] for i, q in enumerate(self.queues) if q]
            self.served[index] = max(self.served[index], min(busy))
        return index

    def run_now(self, index: int, seats: int) -> None:
        self.served[index] += seats * ESTIMATED_SECONDS
        self.executing += seats

    def finished(self, index: int, seats: int, seconds: float) -> None:
        """Give the seats back; charge the queue what the request really used."""
        self.served[index] += seats * (seconds - ESTIMATED_SECONDS)
        self.executing -= seats
        self.dispatch()

    def enqueue(self, index: int, waiter: _Waiter) -> bool:
        """Put a waiter in queue `index`; False when that queue is full."""
        queue = self.queues[index]
        if len(queue) >= self.config.queue_length_limit:
            return False
        queue.append(waiter)
        self.waiting += 1
        return True

    def dequeue(self, waiter: _Waiter) -> None:
        for q in self.queues:
            if waiter in q:
                q.remove(waiter)
                self.waiting -= 1
                return

    def dispatch(self) -> None:
        """Start queued requests while seats are free, always the head whose "virtual finish" is
        earliest: the seat-seconds its queue was given so far plus its own estimate (a GET of an
        idle flow goes before the next LIST of a busy one)."""
        while self.waiting:
            busy = (i for i, q in enumerate(self.queues) if q)
            index = min(busy, key=lambda i: self.served[i] + self.queues[i][0].seats * ESTIMATED_SECONDS)
            head = self.queues[index][0]
            if self.executing + head.seats > self.limit:
                return  # wait for seats; skipping a wide request could starve it
            self.queues[index].popleft()
            self.waiting -= 1
            if head.granted.done():  # gave up waiting just now
                continue
            self.run_now(index, head.seats)
            head.granted.set_result(None)


class FlowController:
    """The seats of one API server and the queues in front of them."""

    def __init__(
        self,
        max_requests_inflight: int,
        max_mutating_requests_inflight: int,
        registry: CollectorRegistry,
        count_objects: Callable[[str], int] | None = None,
    ) -> None:
        total = max(1, max_requests_inflight + max_mutating_requests_inflight)
        shares = sum(c.shares for c in LEVELS)
        self.levels = {c.name: PriorityLevel(c, max(1, math.ceil(total * c.shares / shares))) for c in LEVELS}
        self.count_objects = count_objects
        labels = ["priority_level"]
        self.m_executing = Gauge(
            "apiserver_flowcontrol_current_executing_seats", "Seats in use.", labels, registry=registry
        )
        self.m_inqueue = Gauge(
            "apiserver_flowcontrol_current_inqueue_requests", "Requests waiting in queues.", labels, registry=registry
        )
        self.m_limit = Gauge(
            "apiserver_flowcontrol_nominal_limit_seats", "Seats of each priority level.", labels, registry=registry
        )
        self.m_rejected = Counter(
            "apiserver_flowcontrol_rejected_requests",
            "Requests answered 429, by reason (queue-full, time-out).",
            ["priority_level", "flow_schema", "reason"],
            registry=registry,
        )
        self.m_dispatched = Counter(
            "apiserver_flowcontrol_dispatched_requests",
            "Requests started.",
            ["priority_level", "flow_schema"],
            registry=registry,
        )
        self.m_wait = Histogram(
            "apiserver_flowcontrol_request_wait_duration_seconds",
            "Time requests spent in a queue; execute is false for those turned away.",
            ["priority_level", "flow_schema", "execute"],
            buckets=(0.001, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30),
            registry=registry,
        )
        self._gauges: dict[str, tuple[Gauge, Gauge]] = {}  # the labelled children, looked up once
        for name, level in self.levels.items():
            self.m_limit.labels(name).set(level.limit)
            self._gauges[name] = (self.m_executing.labels(name), self.m_inqueue.labels(name))

    def seats(self, a: RequestAttributes) -> int:
        """The work estimate: one seat, or one per OBJECTS_PER_SEAT objects (of the resource, at most
        `limit`) for a LIST."""
        if a.method != "GET" or a.name is not None or a.resource is None or self.count_objects is None:
            return 1
        objects = self.count_objects(a.resource)
        limit = a.param("limit")
        if limit.isdigit() and int(limit) > 0:  # a page of a paginated list
            objects = min(objects, int(limit))
        return max(1, min(MAX_SEATS, math.ceil(objects / OBJECTS_PER_SEAT)))

    async def acquire(self, c: Classification, a: RequestAttributes) -> Callable[[], None] | None:
        """Wait for seats; return the function that gives them back (None: nothing to give back).
        Raises a 429 StatusError when the request's queue is full or it waited too long."""
        level = self.levels.get(c.priority_level)
        if level is None or a.long_running:
            if level is None and not a.long_running:  # exempt: no seat, but counted as kube-apiserver does
                self.m_dispatched.labels(c.priority_level, c.flow_schema).inc()
            return None
        seats = min(self.seats(a), level.limit)
        index = level.pick(c.flow)
        if level.waiting == 0 and level.executing + seats <= level.limit:
            level.run_now(index, seats)
        else:
            await self._wait(level, c, index, seats)
        self.m_dispatched.labels(level.config.name, c.flow_schema).inc()
        self._observe(level)
        loop = asyncio.get_running_loop()
        started = loop.time()
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                level.finished(index, seats, loop.time() - started)
                self._observe(level)

        return release

    async def _wait(self, level: PriorityLevel, c: Classification, index: int, seats: int) -> None:
        waiter = _Waiter(seats, asyncio.get_running_loop().create_future())
        if not level.enqueue(index, waiter):
            self.m_rejected.labels(level.config.name, c.flow_schema, "queue-full").inc()
            raise errors.too_many_requests(RETRY_AFTER)
        self._observe(level)
        started = asyncio.get_running_loop().time()
        try:
            await asyncio.wait_for(asyncio.shield(waiter.granted), QUEUE_WAIT)
            self.m_wait.labels(level.config.name, c.flow_schema, "true").observe(
                asyncio.get_running_loop().time() - started
            )
        except (TimeoutError, asyncio.CancelledError) as exc:
            if waiter.granted.done() and not waiter.granted.cancelled():  # granted as we gave up
                level.finished(index, seats, 0.0)
            else:
                waiter.granted.cancel()  # dispatch() skips and drops it
                level.dequeue(waiter)
            self._observe(level)
            if isinstance(exc, asyncio.CancelledError):
                raise
            self.m_rejected.labels(level.config.name, c.flow_schema, "time-out").inc()
            self.m_wait.labels(level.config.name, c.flow_schema, "false").observe(QUEUE_WAIT)
            raise errors.too_many_requests(RETRY_AFTER) from None

    def _observe(self, level: PriorityLevel) -> None:
        executing, inqueue = self._gauges[level.config.name]
        executing.set(level.executing)
        inqueue.set(level.waiting)
