"""ResourceQuota admission's batch judging against the rule it shortcuts: creates judged one by one.

`_judge` takes creates of one cost that come in a row together (how many still fit) and only the
rest one by one. Whatever the order of a batch — runs cut by a dry run or by a create already
charged to some quotas, several quotas, a cost of zero, a quota already over its limit or not
knowing a resource — it must admit, charge and refuse exactly what judging each create alone, in
arrival order, does. The end-to-end bursts (test_resource_quota.py) cannot choose their order;
this test does, from a fixed seed.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from api import errors, registry
from api.quantity import Quantity
from apiserver.admission import Attributes
from apiserver.admission.resource_quota import ResourceQuota, Wanted, _Status, _Tally, _Waiter

PODS = registry.by_key("pods")


def one_by_one(
    plugin: ResourceQuota, batch: list[_Waiter], states: dict[str, _Status], totals: dict[str, _Tally]
) -> tuple[set[str], dict[int, tuple[str, errors.StatusError]]]:
    """The rule: each create, in arrival order, checked against every quota it owes and charged
    to all of them only if none refuses (a dry run is checked and charges nothing)."""
    changed: set[str] = set()
    refusals: dict[int, tuple[str, errors.StatusError]] = {}
    for i, w in enumerate(batch):
        owed = [(n, wanted) for n, wanted in w.wants if n not in w.committed and n in states]
        checks = ((n, plugin._check(w.attrs, n, states[n], totals[n], wanted)) for n, wanted in owed)
        refused = next(((n, r) for n, r in checks if r is not None), None)
        if refused is not None:
            refusals[i] = refused
        elif not w.attrs.dry_run:
            for n, wanted in owed:
                for r, amount, nanos in wanted:
                    totals[n].add(r, amount, nanos)
                changed.add(n)
    return changed, refusals


def wanted(**amounts: str) -> Wanted:
    return tuple((r.replace("_", "."), Quantity(v), Quantity(v).nanos) for r, v in amounts.items())


def status(hard: dict[str, str], used: dict[str, str]) -> _Status:
    parsed = {r: Quantity(v) for r, v in hard.items()}
    return _Status(1, {}, parsed, {r: Quantity(v) for r, v in used.items()}, {r: q.nanos for r, q in parsed.items()})


def judged(plugin: ResourceQuota, judge: Any, batch: list[_Waiter], states: dict[str, _Status]) -> tuple[Any, ...]:
    totals = {n: _Tally(s.used) for n, s in states.items()}
    changed, refusals = judge(batch, states, totals)
    used = {n: {r: str(t.quantity(r)) for r in t.nanos} for n, t in totals.items()}
    return changed, {i: (n, e.to_status()["message"]) for i, (n, e) in refusals.items()}, used


async def test_a_batch_in_any_order_is_judged_as_one_by_one() -> None:
    assert PODS is not None
    plugin = ResourceQuota.__new__(ResourceQuota)  # _judge and _check use nothing of the server
    loop = asyncio.get_running_loop()
    small = [("pods", wanted(pods="1", requests_cpu="100m")), ("cpu", wanted(requests_cpu="100m"))]
    large = [("pods", wanted(pods="1", requests_cpu="300m")), ("cpu", wanted(requests_cpu="300m"))]
    free = [("pods", wanted(pods="1")), ("zero", wanted(requests_cpu="0"))]  # a cost of zero
    unknown = [("pods", wanted(pods="1")), ("blind", wanted(requests_memory="1Gi"))]  # not in the quota's status
    shapes = [small, large, free, unknown]
    rng = random.Random(16)
    for round_ in range(300):
        states = {
            "pods": status({"pods": "12", "requests.cpu": "2"}, {"pods": str(rng.randint(0, 6)), "requests.cpu": "0"}),
            "cpu": status({"requests.cpu": rng.choice(["1", "1500m", "900m"])}, {"requests.cpu": "200m"}),
            "zero": status({"requests.cpu": "1"}, {"requests.cpu": rng.choice(["0", "2"])}),  # "2": already over
            "blind": status({"pods": "5"}, {"pods": "0"}),
        }
        batch = []
        for i in range(rng.randint(1, 24)):
            attrs = Attributes("CREATE", PODS, "ns", f"p{i}", {}, dry_run=rng.random() < 0.1)
            w = _Waiter(attrs, rng.choice(shapes) if rng.random() < 0.3 else shapes[0], loop.create_future())
            if rng.random() < 0.1:
                w.committed.add("pods")  # charged to that quota in an earlier round, still owing the others
            batch.append(w)
        for w in batch:
            w.done.cancel()  # nothing awaits them here
        expected = judged(plugin, lambda b, s, t: one_by_one(plugin, b, s, t), batch, states)
        assert judged(plugin, plugin._judge, batch, states) == expected, f"round {round_}"
