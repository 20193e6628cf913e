"""api/gcfreeze.py: what survives a full collection is frozen; frozen objects still die by reference
counting; a frozen cycle is freed after the thaw that doubling the frozen set brings.

Runs in the test process itself (the policy is a gc callback of the process it is installed in);
automatic collections are off meanwhile, so only the test's own `gc.collect()` calls count, and the
fixture removes the policy and unfreezes everything, so other tests see the collector as it was."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from api import gcfreeze


class Node:
    def __init__(self) -> None:
        self.me: Node | None = None


@pytest.fixture
def policy() -> Iterator[gcfreeze.FreezeSurvivors]:
    was_enabled = gc.isenabled()
    gc.disable()
    installed = gcfreeze.install()
    try:
        yield installed
    finally:
        installed.uninstall()
        if was_enabled:
            gc.enable()
    assert installed not in gc.callbacks


def test_install_is_once_per_process(policy: gcfreeze.FreezeSurvivors) -> None:
    assert gcfreeze.install() is policy
    assert sum(isinstance(c, gcfreeze.FreezeSurvivors) for c in gc.callbacks) == 1


def test_young_collections_wait_for_more_objects_and_uninstall_restores_the_thresholds() -> None:
    # A command run in this process may have installed the policy already: set it aside meanwhile.
    earlier = [c for c in gc.callbacks if isinstance(c, gcfreeze.FreezeSurvivors)]
    for c in earlier:
        gc.callbacks.remove(c)
    before = gc.get_threshold()
    try:
        installed = gcfreeze.install()
        try:
            assert gc.get_threshold() == (gcfreeze.YOUNG_THRESHOLD, *before[1:])
        finally:
            installed.uninstall()
        assert gc.get_threshold() == before
    finally:
        gc.callbacks.extend(earlier)


def test_survivors_of_a_full_collection_are_frozen_and_still_freed_by_reference_counting(
    policy: gcfreeze.FreezeSurvivors,
) -> None:
    cache = [{"metadata": {"name": f"p-{i}"}} for i in range(20_000)]  # like a watch cache's objects
    gc.collect()
    assert policy.freezes == 1 and policy.examined >= len(cache)
    assert gc.get_freeze_count() >= len(cache)
    before = gc.get_freeze_count()
    node = Node()  # no cycle: reference counting alone frees it
    gc.collect()
    gone = weakref.ref(node)
    del node
    assert gone() is None
    del cache
    assert gc.get_freeze_count() < before  # the frozen dicts went as the list holding them did


def test_a_frozen_cycle_is_freed_after_the_thaw(
    policy: gcfreeze.FreezeSurvivors, monkeypatch: pytest.MonkeyPatch
) -> None:
    cycle = Node()
    cycle.me = cycle
    gone = weakref.ref(cycle)
    gc.collect()  # the first full collection: everything alive is frozen, the cycle with it
    del cycle
    gc.collect()
    assert gone() is not None, "a frozen cycle is not collected (what the thaw is for)"
    assert policy.thaws == 0

    monkeypatch.setattr(gcfreeze, "MIN_THAW_AT", 0)
    policy.examined = 1  # as if the frozen set had more than doubled since everything was examined
    survivors = [{} for _ in range(10)]  # what this collection freezes: enough to count again
    gc.collect()
    del survivors
    assert policy.thaws == 1 and policy.thawed
    gc.collect()  # this full collection examines everything
    assert gone() is None
    assert not policy.thawed  # and the bound starts again from what that collection froze
