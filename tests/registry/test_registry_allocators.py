"""ClusterIP and NodePort allocation: unique, in range, reusable, with Kubernetes' errors."""

from __future__ import annotations

import random

import pytest

from apiserver.registry import AllocationError, IPAllocator, PortAllocator, RangeFullError


def test_tiny_ip_range_is_exhausted_after_its_six_hosts():
    alloc = IPAllocator("10.0.0.0/29", rng=random.Random(1))
    ips = {alloc.allocate() for _ in range(6)}
    # A /29 has 8 addresses: network .0 and broadcast .7 are never handed out.
    assert ips == {f"10.0.0.{i}" for i in range(1, 7)}
    with pytest.raises(RangeFullError) as exc:
        alloc.allocate()
    assert str(exc.value) == "spec.clusterIPs: Invalid value: []: range is full"


def test_first_host_is_handed_out_last_and_can_be_requested():
    alloc = IPAllocator("10.96.0.0/12", rng=random.Random(7))
    assert alloc.allocate("10.96.0.1") == "10.96.0.1"
    small = IPAllocator("10.0.0.0/29", rng=random.Random(3))
    first_five = [small.allocate() for _ in range(5)]
    assert "10.0.0.1" not in first_five
    assert small.allocate() == "10.0.0.1"


def test_released_ip_can_be_allocated_again():
    alloc = IPAllocator("10.0.0.0/30")  # hosts .1 and .2
    a, b = alloc.allocate(), alloc.allocate()
    with pytest.raises(RangeFullError):
        alloc.allocate()
    alloc.release(a)
    assert alloc.allocate() == a
    assert {a, b} == {"10.0.0.1", "10.0.0.2"}


def test_requesting_a_taken_ip_fails_with_kubernetes_message():
    alloc = IPAllocator("10.96.0.0/12")
    alloc.allocate("10.96.0.1")
    with pytest.raises(AllocationError) as exc:
        alloc.allocate("10.96.0.1")
    assert str(exc.value) == (
        'spec.clusterIPs: Invalid value: ["10.96.0.1"]: failed to allocate IP 10.96.0.1: '
        "provided IP is already allocated"
    )
    assert exc.value.field_error.reason == "FieldValueInvalid"


def test_requesting_an_ip_outside_the_range_fails():
    alloc = IPAllocator("10.96.0.0/12")
    for bad in ("192.168.1.1", "10.96.0.0", "not-an-ip"):
        with pytest.raises(AllocationError) as exc:
            alloc.allocate(bad)
        assert str(exc.value) == (
            f'spec.clusterIPs: Invalid value: ["{bad}"]: failed to allocate IP {bad}: '
            "provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12"
        )


def test_mark_allocated_rebuilds_state_from_stored_services():
    alloc = IPAllocator("10.0.0.0/29")
    assert alloc.mark_allocated("10.0.0.3") is True
    assert alloc.mark_allocated("None") is False  # headless services hold no IP
    assert alloc.is_allocated("10.0.0.3")
    assert "10.0.0.3" not in {alloc.allocate() for _ in range(5)}
    assert alloc.free() == 0


def test_node_port_range_exhaustion_release_and_reuse():
    alloc = PortAllocator("30000-30002", rng=random.Random(5))
    ports = {alloc.allocate() for _ in range(3)}
    assert ports == {30000, 30001, 30002}
    with pytest.raises(RangeFullError):
        alloc.allocate()
    alloc.release(30001)
    assert alloc.allocate() == 30001


def test_requesting_a_taken_node_port_fails_with_kubernetes_message():
    alloc = PortAllocator()
    assert alloc.allocate(30001) == 30001
    with pytest.raises(AllocationError) as exc:
        alloc.allocate(30001)
    assert (
        str(exc.value) == "spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated"
    )


def test_node_port_outside_range_names_the_right_port():
    alloc = PortAllocator("30000-32767")
    with pytest.raises(AllocationError) as exc:
        alloc.allocate(40000, field="spec.ports[1].nodePort")
    assert str(exc.value) == (
        "spec.ports[1].nodePort: Invalid value: 40000: provided port is not in the valid "
        "range. The range of valid ports is 30000-32767"
    )


def test_many_allocations_are_unique_and_fast():
    alloc = PortAllocator("30000-32767")
    ports = [alloc.allocate() for _ in range(2768)]
    assert len(set(ports)) == 2768 and alloc.free() == 0
