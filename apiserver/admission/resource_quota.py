"""ResourceQuota admission: a create that would take a namespace over one of its quotas is refused.

Kubernetes' design, kept: the quota object itself is the lock. Before the new object is stored,
each quota that counts it is charged with a compare-and-swap update of its `status.used`, so of
two creates racing for the last unit exactly one wins; the resourcequota controller later
recounts `status.used` from what really exists (a charged create that then failed to be stored is
corrected there). Enforcement uses `status.hard`, which the controller copies from `spec.hard`: a
quota the controller has not seen yet refuses everything it would count ("status unknown"),
rather than letting anything through uncounted.

The refusals are 403 Forbidden in Kubernetes' words:

    pods "x" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2
    pods "x" is forbidden: failed quota: q: must specify limits.cpu for: app
    pods "x" is forbidden: status unknown for quota: q, resources: pods

Only creates are charged (what the cost of an update could change — a Service's type, a claim's
size — is left to the controller's recount). A dry run is checked in its place and charges nothing.

What it costs, and why it is cheap (bench/quota.py):
- A quota that does not count the object costs nothing: no status write, no waiting. Which
  quotas a namespace has, and what they count, comes from an index kept up to date from the
  watch cache's events (`_Quotas`), not from a scan of every quota per request. The index is
  never older than the last quota write this server answered (`cache_has_own_writes`, server.py):
  a quota just created counts the very next create.
- Charges are committed per namespace in batches, as Kubernetes' quota admission does: a create
  arriving while a commit is in flight joins the next one. A batch is taken once a pass of the
  event loop brought it no new create, in a busy namespace not before a few passes (`_gather`,
  which says what that saves), so the creates already on their way join it; a lone create in a
  quiet namespace waits one pass.
  One batch is judged in arrival order against all of the namespace's quotas at once — a create
  refused by one quota charges none of the others — and then every quota it changed is written, in
  one `Storage.update_each` call (the embedded store takes them all before awaiting any: no task
  per quota, usually one commit). So a burst costs one compare-and-swap per quota and batch
  instead of one per create and quota. The watch cache is handed each quota written
  (`WatchCache.expect`), so on the embedded store it need not decode what this server has just
  encoded (etcd's events are new bytes, decoded as always).
- The quota state a batch is judged against is the one this server last wrote when the watch
  cache has nothing newer (`_Status`), so the hot path neither reads storage nor parses the
  quota again. That is safe because nothing is decided on it alone: the compare-and-swap fails
  if anybody else wrote since, and a refusal (or a dry run's pass) judged against a quota that
  was not written in the same round is judged again against storage before it is answered.
- Pods of one shape that arrive in a row are judged together (`_judge`; they share what they are
  charged, remembered by `wants_memo`, so not with scoped quotas nor for other kinds): how many of
  them still fit is one division per quota and resource, not one check per create, quota and
  resource.
- Checking and charging add whole nano-units (`_Tally`), and a pod's cost is parsed once per
  shape of its resources (`_usage`), not once per create and quota; what the namespace's quotas
  charge a pod of that shape is remembered too, until a quota's spec changes (`wants_memo`; not
  with scoped quotas, whose verdict depends on more of the pod).
- On a lost compare-and-swap only the quotas that lost are re-read, and only what is still owed
  is charged again: a create's charges that were committed stay committed, as in Kubernetes'
  retry (should that create then be refused by a quota it had not been charged to yet, the
  controller's recount gives the others back).
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from api import errors, quota, registry
from api.quantity import Quantity, parse_resource_list
from apiserver import storage
from apiserver.admission import Attributes
from apiserver.genericstore import ResourceStore, as_status, storage_errors

if TYPE_CHECKING:
    from apiserver.server import APIServer
    from apiserver.watchcache import Subscriber, WatchCache

CHARGE_ATTEMPTS = 100  # rounds of one batch: lost compare-and-swaps, refusals judged again on storage
COST_MEMO = 1024  # distinct pod shapes whose cost is remembered
GATHER_PASSES = 16  # event-loop passes a batch may wait while it still grows (`_gather`, measured so)
BUSY_PASSES = 4  # passes a batch waits at least where the namespace's last batch held several creates


def _pod_cost_key(pod: dict[str, Any]) -> tuple[Any, ...] | None:
    """Everything api/quota.py's pod_usage reads, hashable; None if some value is not."""
    spec = pod.get("spec") or {}

    def resources(containers: list[dict[str, Any]]) -> tuple[Any, ...]:
        out = []
        for c in containers:
            r = c.get("resources") or {}
            out.append((tuple((r.get("requests") or {}).items()), tuple((r.get("limits") or {}).items())))
        return tuple(out)

    key = (quota.pod_is_terminal(pod), resources(spec.get("containers") or []),
           resources(spec.get("initContainers") or []))  # fmt: skip
    try:
        hash(key)
    except TypeError:
        return None
    return key


@dataclass(slots=True)
class _Quota:
    """What admission needs to know of one quota before charging: what it counts."""

    name: str
    obj: dict[str, Any]  # as the watch cache holds it (shared: never changed)
    spec: dict[str, Any]
    counts: tuple[str, ...]  # spec.hard's resource names
    scoped: bool
    must_specify: tuple[str, ...]  # compute resources every container must state


def _compile(obj: dict[str, Any]) -> _Quota:
    spec = obj.get("spec") or {}
    counts = tuple(sorted((spec.get("hard") or {}).keys()))
    scoped = bool(spec.get("scopes") or (spec.get("scopeSelector") or {}).get("matchExpressions"))
    must = tuple(r for r in quota.MUST_SPECIFY if r in counts)
    return _Quota(obj["metadata"]["name"], obj, spec, counts, scoped, must)


@dataclass(slots=True)
class _Status:
    """A quota as stored at `revision`, with its status parsed."""

    revision: int
    obj: dict[str, Any]  # shared: never changed, a write builds a new one
    hard: dict[str, Quantity]
    used: dict[str, Quantity]
    hard_nanos: dict[str, int]


class _Tally:
    """A quota's `status.used` while a round charges it: whole nano-units, so that checking and
    charging are integer additions, each resource keeping the format Quantity addition gives it
    (the left operand's, unless that is zero: api/quantity.py)."""

    __slots__ = ("nanos", "formats")

    def __init__(self, used: dict[str, Quantity]) -> None:
        self.nanos = {r: q.nanos for r, q in used.items()}
        self.formats = {r: q.format for r, q in used.items()}

    def add(self, resource: str, amount: Quantity, nanos: int) -> None:
        if not self.nanos[resource]:
            self.formats[resource] = amount.format
        self.nanos[resource] += nanos

    def quantity(self, resource: str) -> Quantity:
        return Quantity.from_nanos(self.nanos[resource], self.formats[resource])


Wanted = tuple[tuple[str, Quantity, int], ...]  # (resource, amount, amount in nanos) a quota is charged


@dataclass(slots=True)
class _Waiter:
    attrs: Attributes
    wants: list[tuple[str, Wanted]]  # (quota name, what it is charged), by quota name
    done: asyncio.Future[None]
    committed: set[str] = field(default_factory=set)  # quotas its charge is stored in


def _owes_all(w: _Waiter) -> bool:
    """Nothing of its charge is stored yet, and it is to be charged (not a dry run)."""
    return not w.committed and not w.attrs.dry_run


def _room(owed: list[tuple[str, Wanted]], states: dict[str, _Status], totals: dict[str, _Tally]) -> int:
    """How many more creates costing `owed` the quotas admit, as `_check` would admit them one by
    one (each while used + its cost <= hard); 0 when a quota's status does not know a resource."""
    fit = sys.maxsize
    for n, wanted in owed:
        hard, used = states[n].hard_nanos, totals[n].nanos
        for r, _, nanos in wanted:
            if r not in hard or r not in used:
                return 0
            room = hard[r] - used[r]
            if room < 0:
                return 0
            if nanos > 0:
                fit = min(fit, room // nanos)
    return fit


def _charge(owed: list[tuple[str, Wanted]], totals: dict[str, _Tally], changed: set[str], creates: int) -> None:
    """Add to each quota's tally what `creates` creates costing `owed` are charged."""
    for n, wanted in owed:
        tally = totals[n]
        for r, amount, nanos in wanted:
            tally.add(r, amount, nanos * creates)
        changed.add(n)


class _Quotas:
    """Every namespace's quotas, kept from a subscription to the resourcequotas watch cache.

    The subscription's queue is drained when admission asks, on the event loop and without
    awaiting, so the index is exactly as current as the watch cache itself. A watcher that lags
    is dropped by the cache (quota churn while no create asks); the index is then rebuilt from a
    new subscription, which starts with every current quota."""

    def __init__(self, cache: WatchCache) -> None:
        self.cache = cache
        self.sub: Subscriber | None = None
        self.by_namespace: dict[str, dict[str, _Quota]] = {}
        self.ordered: dict[str, list[_Quota]] = {}  # namespace → its quotas by name (built on demand)
        self.status: dict[str, _Status] = {}  # storage key → as this server last wrote it
        # namespace → (its quotas as `in_namespace` gave them, what they charge a pod of each cost key)
        self._wants: dict[str, tuple[list[_Quota], dict[tuple[Any, ...], list[tuple[str, Wanted]]]]] = {}

    def in_namespace(self, namespace: str) -> list[_Quota] | None:
        """The namespace's quotas by name; None when the subscription must be renewed first."""
        if self.sub is None:
            return None
        queue = self.sub.queue
        while not queue.empty():
            ev = queue.get_nowait()
            if ev is None:  # closed by the cache: whatever came after is missing, start over
                return None
            self._apply(ev.type, ev.object)
        if self.sub.closed_reason:
            return None
        found = self.by_namespace.get(namespace)
        if not found:
            return []
        mine = self.ordered.get(namespace)
        if mine is None:
            mine = self.ordered[namespace] = [found[n] for n in sorted(found)]
        return mine

    def wants_memo(self, namespace: str, mine: list[_Quota]) -> dict[tuple[Any, ...], list[tuple[str, Wanted]]]:
        """Where to remember what `mine` charges a pod, by `_pod_cost_key`. Forgotten as soon as
        the namespace's quotas change: `in_namespace` then gives a new list."""
        held = self._wants.get(namespace)
        if held is None or held[0] is not mine:
            if len(self._wants) >= COST_MEMO:
                self._wants.clear()
            held = self._wants[namespace] = (mine, {})
        elif len(held[1]) >= COST_MEMO:
            held[1].clear()
        return held[1]

    async def subscribe(self) -> None:
        old = self.sub
        sub = await self.cache.subscribe(None, None, None)  # starts with every current quota
        if self.sub is not old:  # another request renewed it meanwhile
            self.cache.unsubscribe(sub)
            return
        if old is not None:
            self.cache.unsubscribe(old)
        self.sub = sub
        self.by_namespace.clear()
        self.ordered.clear()
        self.status.clear()
        self._wants.clear()

    def _apply(self, kind: str, obj: dict[str, Any]) -> None:
        md = obj.get("metadata") or {}
        namespace, name = md.get("namespace") or "", md.get("name") or ""
        quotas = self.by_namespace.setdefault(namespace, {})
        if kind == "DELETED":
            quotas.pop(name, None)
            self.ordered.pop(namespace, None)
            self.status.pop(f"{namespace}/{name}", None)
            if not quotas:
                del self.by_namespace[namespace]
            return
        known = quotas.get(name)
        if known is not None and known.spec == (obj.get("spec") or {}):
            return  # a status write (a charge, a recount): what it counts is unchanged
        quotas[name] = _compile(obj)
        self.ordered.pop(namespace, None)


class ResourceQuota:
    name = "ResourceQuota"

    def __init__(self, server: APIServer) -> None:
        self.server = server
        rt = registry.by_key("resourcequotas")
        assert rt is not None
        self.rt = rt
        self._quotas: _Quotas | None = None  # made on first use: the watch cache starts with the server
        self._pending: dict[str, list[_Waiter]] = {}  # namespace → creates waiting for the next commit
        self._committing: set[str] = set()  # namespaces with a commit loop running
        self._last_batch: dict[str, int] = {}  # namespace → how many creates its last batch held
        self._tasks: set[asyncio.Task[None]] = set()
        self._costs: dict[tuple[Any, ...], dict[str, tuple[str, Quantity, int]]] = {}  # see _usage

    @property
    def store(self) -> ResourceStore:
        return self.server.store(self.rt)

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation != "CREATE" or attrs.subresource or not attrs.rt.namespaced or attrs.obj is None:
            return
        if self._quotas is None:
            self._quotas = _Quotas(self.server.cache(self.rt))
        if not await self.server.cache_has_own_writes(self.rt):
            raise errors.internal("resource quota evaluation timed out")
        while (mine := self._quotas.in_namespace(attrs.namespace or "")) is None:
            await self._quotas.subscribe()
        if not mine:
            return
        key, obj = attrs.rt.key, attrs.obj
        cost_key = _pod_cost_key(obj) if key == "pods" else None
        memo = self._quotas.wants_memo(attrs.namespace or "", mine) if cost_key is not None else None
        wants = memo.get(cost_key) if memo is not None else None
        if wants is None:
            wants = self._wants(attrs, mine, cost_key)
            if memo is not None and not any(q.scoped for q in mine):
                memo[cost_key] = wants
        if not wants:
            return  # no quota counts it: no write, no waiting
        namespace = attrs.namespace or ""
        waiter = _Waiter(attrs, wants, asyncio.get_running_loop().create_future())
        self._pending.setdefault(namespace, []).append(waiter)
        if namespace not in self._committing:
            self._committing.add(namespace)
            task = asyncio.create_task(self._commit_all(namespace))
            self._tasks.add(task)  # the loop keeps only a weak reference to a task
            task.add_done_callback(self._tasks.discard)
        await waiter.done

    def _wants(
        self, attrs: Attributes, mine: list[_Quota], cost_key: tuple[Any, ...] | None
    ) -> list[tuple[str, Wanted]]:
        """What each of the namespace's quotas charges this create (a refusal if it states too little)."""
        key, obj = attrs.rt.key, attrs.obj
        assert obj is not None
        cost: dict[str, tuple[str, Quantity, int]] | None = None
        missing: dict[tuple[str, ...], str | None] = {}  # one check per distinct set of required resources
        wants: list[tuple[str, Wanted]] = []
        running_pod = key == "pods" and not quota.pod_is_terminal(obj)
        for q in mine:
            if q.scoped and not quota.quota_covers(q.obj, key, obj):
                continue
            if q.must_specify and running_pod:
                if q.must_specify not in missing:
                    missing[q.must_specify] = quota.missing_requests_or_limits(obj, q.must_specify)
                if missing[q.must_specify]:
                    raise self._forbidden(attrs, f"failed quota: {q.name}: {missing[q.must_specify]}")
            if cost is None:
                cost = self._usage(key, obj, cost_key)
            wanted = tuple(cost[r] for r in q.counts if r in cost)
            if wanted:
                wants.append((q.name, wanted))
        return wants

    def _usage(
        self, key: str, obj: dict[str, Any], memo_key: tuple[Any, ...] | None
    ) -> dict[str, tuple[str, Quantity, int]]:
        """What `obj` costs (api/quota.py), as (resource, amount, nanos) by resource.

        A pod's cost is remembered by what it is computed from — whether the pod is finished, its
        containers' and init containers' requests and limits — since the pods of one template all
        cost the same and parsing their quantities is most of the work."""
        cost = self._costs.get(memo_key) if memo_key is not None else None
        if cost is None:
            cost = {r: (r, v, v.nanos) for r, v in quota.usage(key, obj).items()}
            if memo_key is not None:
                if len(self._costs) >= COST_MEMO:
                    self._costs.clear()
                self._costs[memo_key] = cost
        return cost

    async def _commit_all(self, namespace: str) -> None:
        try:
            while self._pending.get(namespace):
                await self._gather(namespace)
                batch = self._pending.pop(namespace)
                try:
                    await self._commit(namespace, batch)
                except Exception as exc:  # storage down, a bug: no create may be left waiting forever
                    for w in batch:
                        if not w.done.done():
                            w.done.set_exception(exc)
        finally:
            self._committing.discard(namespace)  # no await since the loop's last check: nobody is left behind

    async def _gather(self, namespace: str) -> None:
        """Let the event loop run while the namespace's batch may still grow, then take it.

        Creates that the loop already holds reach this admission over a few passes, not in one
        (each awaits on its way here: the body, flow control, the other admission plugins), and
        not in every pass. So the batch waits while a pass brings it a new create (GATHER_PASSES
        at most), and where the namespace is busy — its last batch held more than one create — for
        at least BUSY_PASSES passes even when one brings nothing. A pass does not leave the server
        idle: the loop serves the other requests in it, and when there are none it takes
        microseconds. A lone create in a quiet namespace waits one pass, the one that brings
        nothing more.

        What it saves, with 10 quotas counting pods and 16 clients creating in a row (quota writes
        per create, counted in the store, bench/quota.py's load): taking the batch after one pass
        split each round of clients into three batches (1.88); waiting while it grows, into two
        (1.1-1.3: the pass in which none arrived closed it); with BUSY_PASSES 4, into about one
        (0.65-0.70, where 0.625 is one batch of 16). BUSY_PASSES 2 left 0.81."""
        least = BUSY_PASSES if self._last_batch.get(namespace, 0) > 1 else 0
        seen = 0
        for passed in range(GATHER_PASSES):
            waiting = len(self._pending.get(namespace) or ())
            if waiting == seen and passed >= least:
                break
            seen = waiting
            await asyncio.sleep(0)
        if len(self._last_batch) >= COST_MEMO:
            self._last_batch.clear()
        self._last_batch[namespace] = len(self._pending.get(namespace) or ())

    async def _commit(self, namespace: str, batch: list[_Waiter]) -> None:
        """Judge one batch in arrival order against the namespace's quotas and store the charges.

        A round judges every undecided create against the quotas it still owes, then writes each
        quota that changed. What a round decides: a create whose every charge is stored is
        admitted; a refusal stands if the quota that refused was written in that round (the
        compare-and-swap proves the state it was judged on) or read from storage for it. Anything
        else — a lost compare-and-swap, a refusal judged on a cached state — goes to the next
        round, which reads those quotas from storage."""
        undecided = batch
        from_storage = False
        for _ in range(CHARGE_ATTEMPTS):
            undecided = [w for w in undecided if not w.done.done()]  # a request gone meanwhile is not charged
            if not undecided:
                return
            names = sorted({n for w in undecided for n, _ in w.wants if n not in w.committed})
            states = await self._states(namespace, names, from_storage)
            totals = {n: _Tally(s.used) for n, s in states.items()}
            changed, refusals = self._judge(undecided, states, totals)
            written, failed = await self._write(namespace, [n for n in names if n in changed], states, totals)
            confirmed = written | (set(states) if from_storage else set())
            later: list[_Waiter] = []
            owing: dict[int, tuple[list[str], bool]] = {}  # id(wants) → what is owed, and whether all of it is written
            for i, w in enumerate(undecided):
                if w.done.done():  # cancelled meanwhile (client gone, ?timeout=): it waits no more
                    continue
                if i in refusals:
                    n, refusal = refusals[i]
                    if n in confirmed:
                        w.done.set_exception(refusal)
                    else:
                        later.append(w)
                    continue
                if w.committed:
                    owes = [n for n, _ in w.wants if n not in w.committed and n in states]
                    all_written = False
                else:  # the usual case: the creates of one shape share `wants`, work it out once
                    known = owing.get(id(w.wants))
                    if known is None:
                        owes = [n for n, _ in w.wants if n in states]
                        known = owing[id(w.wants)] = (owes, all(n in written for n in owes))
                    owes, all_written = known
                broken = next((failed[n] for n in owes if n in failed), None) if failed else None
                if broken is not None:
                    w.done.set_exception(broken)
                    continue
                if w.attrs.dry_run:
                    settled = all(n in confirmed for n in owes)
                elif all_written:
                    settled = True
                else:
                    w.committed.update(n for n in owes if n in written)
                    settled = all(n in w.committed or n not in states for n, _ in w.wants)
                if settled:
                    w.done.set_result(None)
                else:
                    later.append(w)
            undecided, from_storage = later, True
        for w in undecided:
            if not w.done.done():
                busy = errors.conflict(self.rt.key, w.wants[0][0], "too many concurrent writers; please retry")
                w.done.set_exception(busy)

    def _judge(
        self, undecided: list[_Waiter], states: dict[str, _Status], totals: dict[str, _Tally]
    ) -> tuple[set[str], dict[int, tuple[str, errors.StatusError]]]:
        """Judge `undecided` in arrival order against `totals`, charging the creates admitted.

        Returns the quotas charged and, by position, each refusal with the quota that gave it.
        Creates that come in a row with the same cost (one `wants` list, shared through the memo)
        and owe everything are judged together, as one would judge them one after the other:
        how many of them still fit is one division per quota and resource (`_room`), those are
        charged at once, and only the ones left over are judged one by one, for their refusals.
        With every quota counting pods that is what keeps a batch's judging from costing
        creates × quotas × resources."""
        changed: set[str] = set()
        refusals: dict[int, tuple[str, errors.StatusError]] = {}
        i, count = 0, len(undecided)
        while i < count:
            w = undecided[i]
            end = i + 1
            if _owes_all(w):
                while end < count and undecided[end].wants is w.wants and _owes_all(undecided[end]):
                    end += 1
            first = i
            if end - i > 1:
                owed = [(n, wanted) for n, wanted in w.wants if n in states]
                fit = min(end - i, _room(owed, states, totals))
                if fit:
                    _charge(owed, totals, changed, fit)
                first = i + fit
            for j in range(first, end):  # one by one: a create of its own shape, or one that did not fit
                o = undecided[j]
                owed = [(n, wanted) for n, wanted in o.wants if n not in o.committed and n in states]
                for n, wanted in owed:
                    refusal = self._check(o.attrs, n, states[n], totals[n], wanted)
                    if refusal is not None:
                        refusals[j] = (n, refusal)
                        break
                else:
                    if not o.attrs.dry_run:  # a dry run is checked in its place, and charges nothing
                        _charge(owed, totals, changed, 1)
            i = end
        return changed, refusals

    async def _states(self, namespace: str, names: list[str], from_storage: bool) -> dict[str, _Status]:
        """The quotas `names` as stored (a quota that is gone is left out: it limits nothing).

        Without `from_storage`: what this server last wrote, unless the watch cache holds a newer
        revision (the controller's recount, another API server's charge), which is then parsed."""
        assert self._quotas is not None
        known, cache = self._quotas.status, self._quotas.cache
        states: dict[str, _Status] = {}
        for name in names:
            key = f"{namespace}/{name}"
            state = None if from_storage else known.get(key)
            if not from_storage:
                cached = cache.peek(self.store.key(namespace, name))
                if cached is not None:
                    revision = int(cached["metadata"]["resourceVersion"])
                    if state is None or state.revision < revision:
                        state = self._parse(cached, revision)
            if state is None:
                try:
                    with storage_errors(self.rt, name):
                        kv = await self.store.storage.get(self.store.key(namespace, name))
                except errors.StatusError as exc:
                    if exc.code == 404:
                        continue
                    raise
                state = self._parse(ResourceStore.decode(kv.value, kv.revision), kv.revision)
            known[key] = states[name] = state
        return states

    @staticmethod
    def _parse(obj: dict[str, Any], revision: int) -> _Status:
        status = obj.get("status") or {}
        hard = parse_resource_list(status.get("hard"))
        used = parse_resource_list(status.get("used"))
        return _Status(revision, obj, hard, used, {r: q.nanos for r, q in hard.items()})

    async def _write(
        self, namespace: str, names: list[str], states: dict[str, _Status], totals: dict[str, _Tally]
    ) -> tuple[set[str], dict[str, Exception]]:
        """Compare-and-swap the new `status.used` of each quota in `names`, all at once.

        Returns the quotas written and those that failed for good (storage down, …); a quota
        that lost the race or is gone is in neither: it is read from storage next round."""
        assert self._quotas is not None
        known = self._quotas.status
        updates: list[storage.Update] = []
        news: dict[str, dict[str, Any]] = {}  # shared with `known` once written: never changed
        used: dict[str, dict[str, Quantity]] = {}
        for name in names:
            state, tally = states[name], totals[name]
            used[name] = {r: tally.quantity(r) for r in tally.nanos}
            status = dict(state.obj.get("status") or {})
            status["used"] = {**(status.get("used") or {}), **{r: str(q) for r, q in used[name].items()}}
            news[name] = new = {**state.obj, "status": status}
            key, value = self.store.key(namespace, name), ResourceStore.encode(new)
            self._quotas.cache.expect(key, value, new)  # its event need not be decoded (watchcache.py)
            updates.append(storage.Update(key, value, state.revision))
        # One call for every quota: the embedded store takes them all before the first is awaited
        # (no task each, and usually one commit); each is still its own compare-and-swap.
        outcomes = await self.store.storage.update_each(updates)
        written: set[str] = set()
        failed: dict[str, Exception] = {}
        for name, result in zip(names, outcomes, strict=True):
            if isinstance(result, int):
                written.add(name)
                state = states[name]
                known[f"{namespace}/{name}"] = _Status(result, news[name], state.hard, used[name], state.hard_nanos)
            elif isinstance(result, storage.Conflict | storage.NotFound):
                known.pop(f"{namespace}/{name}", None)
            else:  # storage down, …: the creates that owe it hear it
                failed[name] = as_status(self.rt, name, result) if isinstance(result, storage.StorageError) else result
        return written, failed

    def _check(
        self, attrs: Attributes, name: str, state: _Status, tally: _Tally, wanted: Wanted
    ) -> errors.StatusError | None:
        hard, used = state.hard_nanos, tally.nanos
        for r, _, nanos in wanted:
            if r not in hard or r not in used or used[r] + nanos > hard[r]:
                break
        else:
            return None  # the usual case, in integers
        unknown = sorted(r for r, _, _ in wanted if r not in hard or r not in used)
        if unknown:
            return self._forbidden(attrs, f"status unknown for quota: {name}, resources: {','.join(unknown)}")
        exceeded = sorted(r for r, _, nanos in wanted if used[r] + nanos > hard[r])
        amounts = {r: amount for r, amount, _ in wanted}
        return self._forbidden(attrs, (
            f"exceeded quota: {name}, requested: {quota.pretty({r: amounts[r] for r in exceeded})}, "
            f"used: {quota.pretty({r: tally.quantity(r) for r in exceeded})}, "
            f"limited: {quota.pretty({r: state.hard[r] for r in exceeded})}"
        ))  # fmt: skip

    @staticmethod
    def _forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
        return errors.forbidden_error(attrs.rt.key, attrs.name, reason)
