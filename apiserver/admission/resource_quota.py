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
  watch cache's events (`_Quotas`), not from a scan of every quota per request.
- Charges are committed per namespace in batches, as Kubernetes' quota admission does: a create
  arriving while a commit is in flight joins the next one. One batch is judged in arrival order
  against all of the namespace's quotas at once — a create refused by one quota charges none of
  the others — and then every quota it changed is written, those writes concurrently (the
  embedded store commits them in one transaction). So a burst costs a few compare-and-swaps per
  quota instead of one per create, all but one of them lost to conflicts and retried.
- The quota state a batch is judged against is the one this server last wrote when the watch
  cache has nothing newer (`_Status`), so the hot path neither reads storage nor parses the
  quota again. That is safe because nothing is decided on it alone: the compare-and-swap fails
  if anybody else wrote since, and a refusal (or a dry run's pass) judged against a quota that
  was not written in the same round is judged again against storage before it is answered.
- On a lost compare-and-swap only the quotas that lost are re-read, and only what they still owe
  is charged again: a create's charges that were committed stay committed (Kubernetes' retry).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from api import errors, quota, registry
from api.quantity import Quantity, parse_resource_list
from apiserver import storage
from apiserver.admission import Attributes
from apiserver.genericstore import ResourceStore, storage_errors
from apiserver.watchcache import Subscriber, WatchCache

if TYPE_CHECKING:
    from apiserver.server import APIServer

CHARGE_ATTEMPTS = 100  # rounds of one batch: lost compare-and-swaps, refusals judged again on storage


@dataclass(slots=True)
class _Quota:
    """What admission needs to know of one quota before charging: what it counts."""

    name: str
    obj: dict[str, Any]  # as the watch cache holds it (shared: never changed)
    spec: dict[str, Any]
    counts: frozenset[str]  # spec.hard's resource names
    scoped: bool
    must_specify: tuple[str, ...]  # compute resources every container must state


def _compile(obj: dict[str, Any]) -> _Quota:
    spec = obj.get("spec") or {}
    counts = frozenset((spec.get("hard") or {}).keys())
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


@dataclass(slots=True)
class _Waiter:
    attrs: Attributes
    wants: list[tuple[str, dict[str, Quantity]]]  # (quota name, what it is charged), by quota name
    done: asyncio.Future[None]
    committed: set[str] = field(default_factory=set)  # quotas its charge is stored in


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

    async def in_namespace(self, namespace: str) -> list[_Quota]:
        while self.sub is None or self.sub.closed_reason:
            old = self.sub
            sub = await self.cache.subscribe(None, None, None)
            if self.sub is not old:  # another request renewed it meanwhile
                self.cache.unsubscribe(sub)
                continue
            if old is not None:
                self.cache.unsubscribe(old)
            self.sub = sub
            self.by_namespace.clear()
            self.ordered.clear()
            self.status.clear()
        queue = self.sub.queue
        while not queue.empty():
            ev = queue.get_nowait()
            if ev is None:  # closed by the cache: rebuilt at the next request
                break
            self._apply(ev.type, ev.object)
        mine = self.ordered.get(namespace)
        if mine is None:
            found = self.by_namespace.get(namespace) or {}
            mine = self.ordered[namespace] = [found[n] for n in sorted(found)]
        return mine

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

    @property
    def store(self) -> ResourceStore:
        return self.server.store(self.rt)

    async def validate(self, attrs: Attributes) -> None:
        if attrs.operation != "CREATE" or attrs.subresource or not attrs.rt.namespaced or attrs.obj is None:
            return
        if self._quotas is None:
            self._quotas = _Quotas(self.server.cache(self.rt))
        mine = await self._quotas.in_namespace(attrs.namespace or "")
        if not mine:
            return
        key, obj = attrs.rt.key, attrs.obj
        cost: dict[str, Quantity] | None = None
        missing: dict[tuple[str, ...], str | None] = {}  # one check per distinct set of required resources
        wants: list[tuple[str, dict[str, Quantity]]] = []
        for q in mine:
            if q.scoped and not quota.quota_covers(q.obj, key, obj):
                continue
            if q.must_specify and key == "pods" and not quota.pod_is_terminal(obj):
                if q.must_specify not in missing:
                    missing[q.must_specify] = quota.missing_requests_or_limits(obj, q.must_specify)
                if missing[q.must_specify]:
                    raise self._forbidden(attrs, f"failed quota: {q.name}: {missing[q.must_specify]}")
            if cost is None:
                cost = quota.usage(key, obj)
            wanted = {r: v for r, v in cost.items() if r in q.counts}
            if wanted:
                wants.append((q.name, wanted))
        if not wants:
            return  # no quota counts it: no write, no waiting
        namespace = attrs.namespace or ""
        waiter = _Waiter(attrs, wants, asyncio.get_running_loop().create_future())
        self._pending.setdefault(namespace, []).append(waiter)
        if namespace not in self._committing:
            self._committing.add(namespace)
            asyncio.create_task(self._commit_all(namespace))
        await waiter.done

    async def _commit_all(self, namespace: str) -> None:
        try:
            while self._pending.get(namespace):
                batch = self._pending.pop(namespace)
                try:
                    await self._commit(namespace, batch)
                except Exception as exc:  # a bug must not leave creates waiting forever
                    for w in batch:
                        if not w.done.done():
                            w.done.set_exception(exc)
        finally:
            self._committing.discard(namespace)  # no await since the loop's last check: nobody is left behind

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
            names = sorted({n for w in undecided for n, _ in w.wants if n not in w.committed})
            states = await self._states(namespace, names, from_storage)
            totals = {n: dict(s.used) for n, s in states.items()}
            changed: set[str] = set()
            refusals: dict[int, tuple[str, errors.StatusError]] = {}
            for i, w in enumerate(undecided):
                owed = [(n, wanted) for n, wanted in w.wants if n not in w.committed and n in states]
                for n, wanted in owed:
                    refusal = self._check(w.attrs, n, states[n], totals[n], wanted)
                    if refusal is not None:
                        refusals[i] = (n, refusal)
                        break
                else:
                    if not w.attrs.dry_run:  # a dry run is checked in its place, and charges nothing
                        for n, wanted in owed:
                            total = totals[n]
                            for r, amount in wanted.items():
                                total[r] = total[r] + amount
                            changed.add(n)
            written, failed = await self._write(namespace, [n for n in names if n in changed], states, totals)
            confirmed = written | (set(states) if from_storage else set())
            later: list[_Waiter] = []
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
                owes = [n for n, _ in w.wants if n not in w.committed and n in states]
                broken = next((failed[n] for n in owes if n in failed), None)
                if broken is not None:
                    w.done.set_exception(broken)
                    continue
                if w.attrs.dry_run:
                    settled = all(n in confirmed for n in owes)
                else:
                    w.committed.update(n for n in owes if n in written)
                    settled = all(n in w.committed or n not in states for n, _ in w.wants)
                if settled:
                    w.done.set_result(None)
                else:
                    later.append(w)
            if not later:
                return
            undecided, from_storage = later, True
        for w in undecided:
            if not w.done.done():
                w.done.set_exception(errors.conflict(self.rt.key, w.wants[0][0], "too many concurrent writers; please retry"))

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
        return _Status(revision, obj, parse_resource_list(status.get("hard")), parse_resource_list(status.get("used")))

    async def _write(
        self, namespace: str, names: list[str], states: dict[str, _Status], totals: dict[str, dict[str, Quantity]]
    ) -> tuple[set[str], dict[str, errors.StatusError]]:
        """Compare-and-swap the new `status.used` of each quota in `names`, all at once.

        Returns the quotas written and those that failed for good (storage down, …); a quota
        that lost the race or is gone is in neither: it is read from storage next round."""
        assert self._quotas is not None
        known = self._quotas.status

        async def one(name: str) -> None:
            state, total = states[name], totals[name]
            status = dict(state.obj.get("status") or {})
            status["used"] = {**(status.get("used") or {}), **{r: str(total[r]) for r in total}}
            new = {**state.obj, "status": status}
            with storage_errors(self.rt, name):
                revision = await self.store.storage.update(
                    self.store.key(namespace, name), ResourceStore.encode(new), state.revision)  # fmt: skip
            new["metadata"] = {**new["metadata"], "resourceVersion": str(revision)}
            known[f"{namespace}/{name}"] = _Status(revision, new, state.hard, total)

        written: set[str] = set()
        failed: dict[str, errors.StatusError] = {}
        outcomes = await asyncio.gather(*(one(n) for n in names), return_exceptions=True)
        for name, outcome in zip(names, outcomes, strict=True):
            if outcome is None:
                written.add(name)
            elif isinstance(outcome, errors.StatusError) and outcome.reason in ("Conflict", "NotFound"):
                known.pop(f"{namespace}/{name}", None)
            elif isinstance(outcome, errors.StatusError):
                failed[name] = outcome
            elif isinstance(outcome, storage.StorageError | Exception):
                failed[name] = errors.internal(str(outcome))
            else:
                raise outcome
        return written, failed

    def _check(
        self, attrs: Attributes, name: str, state: _Status, total: dict[str, Quantity], wanted: dict[str, Quantity]
    ) -> errors.StatusError | None:
        hard = state.hard
        unknown = sorted(r for r in wanted if r not in hard or r not in total)
        if unknown:
            return self._forbidden(attrs, f"status unknown for quota: {name}, resources: {','.join(unknown)}")
        exceeded = sorted(r for r, amount in wanted.items() if total[r] + amount > hard[r])
        if exceeded:
            return self._forbidden(attrs, (
                f"exceeded quota: {name}, requested: {quota.pretty({r: wanted[r] for r in exceeded})}, "
                f"used: {quota.pretty({r: total[r] for r in exceeded})}, "
                f"limited: {quota.pretty({r: hard[r] for r in exceeded})}"
            ))  # fmt: skip
        return None

    @staticmethod
    def _forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
        return errors.forbidden_error(attrs.rt.key, attrs.name, reason)
