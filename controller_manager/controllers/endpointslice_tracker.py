"""SliceTracker: our own EndpointSlice writes vs. a lagging informer (Kubernetes' endpointSliceTracker, small).

The endpointslice and endpointslicemirroring controllers read the slices they manage from an
informer, and the informer lags the API server. Without a memory of what a sync just did, the next
sync of the same key could act on the old picture:

    sync 1: cache shows no slice      → create `web-abcde`
    sync 2: cache still shows no slice → create another one   ← a duplicate

So after creating a slice a controller records "`web-abcde` should exist" for its key, and after
deleting one "`web-xyz` should be gone"; a sync whose cache does not show that yet waits (the caller
requeues the key). A slice we expected to appear but whose deletion the informer has since delivered
(someone deleted it by hand right away) counts as seen: the cache is past our write.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


class SliceTracker:
    def __init__(self) -> None:
        self._expected: dict[str, dict[str, bool]] = {}  # key -> slice name -> should exist

    def expect(self, key: str, name: str, present: bool) -> None:
        """We just created (`present`) or deleted the slice `name` for `key`."""
        self._expected.setdefault(key, {})[name] = present

    def observed_deletion(self, key: str, name: str) -> None:
        """The informer delivered the deletion of `name`: nothing about it is left to wait for."""
        expected = self._expected.get(key)
        if expected is not None:
            expected.pop(name, None)

    def caught_up(self, key: str, existing: list[Obj]) -> bool:
        """Does the cache (`existing`: the key's slices in it) show every write we made for `key`?"""
        expected = self._expected.get(key)
        if not expected:
            self._expected.pop(key, None)
            return True
        names = {s["metadata"]["name"] for s in existing}
        for name, present in list(expected.items()):
            if (name in names) == present:
                del expected[name]
        return not expected
