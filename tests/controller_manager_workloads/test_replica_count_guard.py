"""The replica manager never acts on a count Kubernetes could not hold (defence in depth).

The API server refuses `spec.replicas` past int32 (tests/apiserver/test_exact_validation.py); an
object written before it did must still not make the controller create pods without end.
"""

from __future__ import annotations

import pytest

from controller_manager.controllers.replica_manager import MAX_INT32, desired_replicas


@pytest.mark.parametrize(("spec", "want"), [
    ({}, 1),  # Kubernetes' default
    ({"replicas": None}, 0),
    ({"replicas": 0}, 0),
    ({"replicas": 3}, 3),
    ({"replicas": MAX_INT32}, MAX_INT32),
])  # fmt: skip
def test_counts_an_int32_can_hold_are_acted_on(spec: dict, want: int) -> None:
    assert desired_replicas({"spec": spec}) == want


@pytest.mark.parametrize("bad", [2**31, 2**63, -1, 2.5, "3", True])
def test_anything_else_is_not_acted_on(bad: object) -> None:
    assert desired_replicas({"spec": {"replicas": bad}}) is None
