"""The pure parts: which addresses a pool hands out, and the names `--controllers` takes."""

from __future__ import annotations

import pytest

from controller_manager import registry
from controller_manager.controllers.servicelb import load_balancer_name
from controller_manager.controllers.servicelb_pool import AddressPool, parse_pool


def test_network_and_broadcast_addresses_are_never_handed_out():
    pool = AddressPool("127.1.0.8/30")
    assert pool.size == 2
    assert [pool.allocate(k) for k in "abc"] == ["127.1.0.9", "127.1.0.10", None]
    assert not pool.usable("127.1.0.8") and not pool.usable("127.1.0.11")
    assert pool.take("z", "127.1.0.11") is None


def test_a_slash_32_is_a_pool_of_one_and_a_slash_31_of_two():
    assert AddressPool("127.1.0.9/32").size == 1
    assert AddressPool("127.1.0.9/32").allocate("a") == "127.1.0.9"
    assert AddressPool("127.1.0.8/31").size == 2


def test_the_lowest_free_address_is_handed_out_and_a_released_one_comes_back():
    pool = AddressPool("127.1.0.0/24")
    assert pool.allocate("a") == "127.1.0.1"
    assert pool.allocate("a") == "127.1.0.1"  # one address per key
    assert pool.allocate("b") == "127.1.0.2"
    assert pool.release("a") == "127.1.0.1"
    assert pool.allocate("c") == "127.1.0.1"


def test_take_grants_a_free_address_in_the_pool_and_gives_up_the_old_one():
    pool = AddressPool("127.1.0.0/24")
    assert pool.allocate("a") == "127.1.0.1"
    assert pool.take("a", "127.1.0.7") == "127.1.0.7"
    assert pool.held_by("a") == "127.1.0.7" and "127.1.0.1" not in pool.by_ip
    assert pool.take("b", "127.1.0.7") is None  # someone else's
    assert pool.take("b", "10.0.0.1") is None  # outside
    assert pool.take("b", "not-an-ip") is None
    assert pool.take("a", "127.1.0.7") == "127.1.0.7"  # already its own


def test_ipv6_pools_spell_addresses_compressed():
    pool = AddressPool("fd00::/126")
    assert pool.size == 3  # the network address is not handed out; IPv6 has no broadcast
    assert pool.take("a", "fd00:0:0::3") == "fd00::3"
    assert pool.allocate("b") == "fd00::1"


@pytest.mark.parametrize("bad", ["127.1.0.1/24", "nonsense", "300.0.0.0/8"])
def test_a_bad_pool_is_refused_naming_the_flag(bad: str):
    with pytest.raises(ValueError, match="--load-balancer-ip-pool"):
        parse_pool(bad)


def test_the_controller_is_on_by_default_and_answers_to_its_old_name():
    assert "service-lb-controller" in registry.selected(["*"])
    assert registry.selected(["service"]) == ["service-lb-controller"]
    assert "service-lb-controller" not in registry.selected(["*,-service"])
    assert "service-lb-controller" not in registry.selected(["*,-service-lb-controller"])


def test_a_balancer_name_is_the_cluster_name_and_kubernetes_default_name_cut_at_32():
    svc = {"metadata": {"uid": "0b6f4a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}}
    assert load_balancer_name("kubernetes", svc) == "kubernetes-a0b6f4a2e1c3d4e5f8a9b0c1d2e3f4a5"
    assert len(load_balancer_name("", svc)) == 33  # "-" and the 32 characters Kubernetes keeps
