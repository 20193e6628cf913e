"""kube-proxy's periodic full resync (--sync-period) against the kernel's real nftables: it
rewrites every rule and element, and deletes what went, but keeps the ClientIP affinity sets and
the clients in them — else every client with session affinity would move to another endpoint once
per period (a loaded CI run saw exactly that in test_kube_proxy's affinity test)."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator

import pytest

from kube_proxy import nft
from kube_proxy.ruleset import ProxyConfig, build, endpoint_chain, transaction
from kube_proxy.servicemodel import service_ports
from tests.kube_proxy.test_ruleset import READY, slice_of, svc

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or nft.available() is not None,
                                reason="needs root and the nft command")  # fmt: skip


@pytest.fixture
def cfg() -> Iterator[ProxyConfig]:
    table = f"mk-resync-{uuid.uuid4().hex[:6]}"
    yield ProxyConfig(table=table, cluster_cidr="10.244.0.0/14")
    nft.delete_table(table)


def test_a_full_resync_keeps_affinity_clients_and_drops_what_went(cfg: ProxyConfig) -> None:
    spec = {"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 600}}}
    two = service_ports(svc(**spec), [slice_of(("10.244.0.5", READY, "a"), ("10.244.0.6", READY, "a"))])
    one = service_ports(svc(**spec), [slice_of(("10.244.0.5", READY, "a"))])
    before, after = build(two, cfg, lambda n: True), build(one, cfg, lambda n: True)
    nft.apply(transaction(before, None, cfg))
    kept_set = next(s for s in after.affinity_sets)
    nft.apply(f"add element ip {cfg.table} {kept_set} {{ 192.0.2.7 }}\n")  # a client that was sent there

    script = transaction(after, before, cfg, full=True)
    assert "delete table" not in script
    nft.apply(script)
    resynced = nft.list_table(cfg.table)
    assert "192.0.2.7" in resynced  # the client still sticks to its endpoint
    gone_sets = set(before.affinity_sets) - set(after.affinity_sets)
    assert gone_sets and not any(s in resynced for s in gone_sets)
    assert endpoint_chain(two[0], two[0].endpoints[1]) not in resynced
    # apart from that client, the table is exactly what writing it from nothing gives
    nft.apply(transaction(after, None, cfg))
    assert _without_the_client(resynced) == _without_the_client(nft.list_table(cfg.table))


def _without_the_client(table: str) -> str:
    table = re.sub(r"\s*elements = \{ 192\.0\.2\.7[^}]*\}", "", table)
    return re.sub(r" expires \S+", "", table)
