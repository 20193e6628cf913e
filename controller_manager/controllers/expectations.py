"""ControllerExpectations: "I have asked for N creations; do not count again until I have seen them".

The replica manager reads the pods it owns from an informer cache, and the cache lags the API
server. Without a memory of what it just did, this would happen:

    sync 1: cache shows 0 pods, want 3  → create 3 (the POSTs succeed)
    sync 2: cache still shows 0 pods    → create 3 more   ← over-creation

So before creating N pods the controller records "expect N adds" for its key; every pod ADD the
informer delivers for that owner lowers the count. A sync whose expectations are not yet met only
updates status; it does not create or delete. Deletions are tracked by pod key rather than by a
count (client-go's UIDTrackingControllerExpectations), so a pod whose deletion is observed twice
(the DELETE, then a re-list) is not subtracted twice.

If an expected event never arrives (the create failed in a way we did not see, the watch dropped),
the expectation *expires* after `ttl` seconds (client-go: 5 minutes) and the controller trusts the
cache again: safe, because by then the cache has caught up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

EXPECTATIONS_TTL = 5 * 60.0


@dataclass
class _Expectation:
    adds: int = 0
    deletes: set[str] = field(default_factory=set)  # pod keys whose deletion we wait to see
    stamp: float = field(default_factory=time.monotonic)

    def fulfilled(self) -> bool:
        return self.adds <= 0 and not self.deletes


class ControllerExpectations:
    def __init__(self, ttl: float = EXPECTATIONS_TTL) -> None:
        self.ttl = ttl
        self._by_key: dict[str, _Expectation] = {}

    def satisfied(self, key: str) -> bool:
        """May the controller for `key` act on what its cache shows?"""
        exp = self._by_key.get(key)
        if exp is None:
            return True  # never asked for anything (or a fresh process): the cache is the truth
        return exp.fulfilled() or time.monotonic() - exp.stamp > self.ttl

    def expect_creations(self, key: str, count: int) -> None:
        self._by_key[key] = _Expectation(adds=count)

    def expect_deletions(self, key: str, pod_keys: list[str]) -> None:
        self._by_key[key] = _Expectation(deletes=set(pod_keys))

    def creation_observed(self, key: str) -> None:
        """One expected pod appeared in the cache (or its creation failed: nothing to wait for)."""
        exp = self._by_key.get(key)
        if exp is not None:
            exp.adds -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        exp = self._by_key.get(key)
        if exp is not None:
            exp.deletes.discard(pod_key)

    def delete(self, key: str) -> None:
        """The owner is gone: forget it."""
        self._by_key.pop(key, None)

    def pending(self, key: str) -> tuple[int, int]:
        """(adds, deletes) still awaited, for logs and tests."""
        exp = self._by_key.get(key)
        return (max(exp.adds, 0), len(exp.deletes)) if exp else (0, 0)
