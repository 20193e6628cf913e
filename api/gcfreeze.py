"""Full garbage collections that do not stop a component for long as its cache grows.

Why this exists: the API server's watch cache and every component's informers keep each stored
object as a tree of dicts and lists for as long as the object exists. CPython's cyclic garbage
collector visits every such container in a full (generation 2) collection, and it runs one
whenever a quarter more objects have survived than the last one found. Nothing else runs
meanwhile: with 16,000 pods cached a full collection held the API server's event loop for 0.3 s
(bench/gcpause.py), and every request, watch event and node Lease renewal waited; at 100,000
objects it is seconds. Kubernetes, written in Go, has a collector that runs beside the program.

What we do about it: after each full collection, everything that survived it is moved out of the
collector's sight (`gc.freeze()`): the next full collection looks only at what has survived since,
so its pause stays short however large the cache is. Frozen objects are still freed the moment
nothing refers to them (reference counting does that, and the cached objects are plain trees); what
the collector can no longer free is a frozen object that later becomes part of an unreachable
*cycle*. So when the frozen set has doubled since everything was last examined, it is thawed and
the next full collection examines everything once more. That bounds what such cycles can hold to
about the size of the live heap, and costs one long pause per doubling instead of one per quarter.

Counting the frozen set walks all of it (`gc.get_freeze_count()`), as long as a full collection
used to take; and with only new survivors left in its view, CPython runs full collections often
(each one short). So the walk is done only after as many objects have been frozen as were last
counted: what each freeze adds is the size of the oldest generation just before it, which that
collection has just walked anyway.

The youngest generation is collected after 10,000 more container objects were made than freed,
not CPython's 700. A request in flight holds a few hundred (its decoded body, the object being
built); at 700, nearly every young collection found some of the in-flight requests' objects, kept
them alive into the older generations and so brought on the next full collection sooner. At
10,000 the API server spends half as long in the collector per create (74 → 36 µs, measured with
16 clients) and each young collection still takes about 2 ms.
"""

from __future__ import annotations

import gc
from typing import Any

# Below this many frozen objects a thaw is never worth it: a started component's own modules,
# classes and schemas are already a few hundred thousand objects that live as long as it does.
MIN_THAW_AT = 500_000
YOUNG_THRESHOLD = 10_000


class FreezeSurvivors:
    """Installed once per process (`install()`), as a gc callback."""

    def __init__(self) -> None:
        self.examined = 0  # frozen after the last full collection that examined everything
        self.added = 0  # objects frozen since the frozen set was last counted (an upper bound)
        self.thawed = False  # the next full collection examines everything
        self.freezes = 0
        self.thaws = 0
        self.thresholds_before = gc.get_threshold()

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop" or info["generation"] != 2:
            return
        self.added += len(gc.get_objects(generation=2))
        gc.freeze()
        self.freezes += 1
        if self.thawed or not self.examined:
            self.examined, self.added, self.thawed = gc.get_freeze_count(), 0, False
        elif self.added > max(self.examined, MIN_THAW_AT):
            self.added = 0
            if gc.get_freeze_count() > max(2 * self.examined, MIN_THAW_AT):
                gc.unfreeze()  # back into the oldest generation: the next full collection sees it all
                self.thawed = True
                self.thaws += 1

    def uninstall(self) -> None:
        if self in gc.callbacks:
            gc.callbacks.remove(self)
        gc.set_threshold(*self.thresholds_before)
        gc.unfreeze()


def install() -> FreezeSurvivors:
    """Keep full collections short in this process from now on (idempotent)."""
    for callback in gc.callbacks:
        if isinstance(callback, FreezeSurvivors):
            return callback
    policy = FreezeSurvivors()
    gc.callbacks.append(policy)
    _, middle, oldest = policy.thresholds_before
    gc.set_threshold(YOUNG_THRESHOLD, middle, oldest)
    return policy
