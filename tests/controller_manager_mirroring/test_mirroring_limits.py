"""The endpointslicemirroring controller's knobs, on a controller-manager of their own:
`--mirroring-max-endpoints-per-subset` caps what is mirrored of each subset (with a Warning event),
`--mirroring-endpointslice-updates-batch-period` delays the sync that follows a slice change."""

from __future__ import annotations

import time

from tests.controller_manager_infra.helpers import Cluster
from tests.controller_manager_mirroring.conftest import addresses, endpoints, service, slices, subset
from tests.support.component import wait_for

BATCH = 1.0
MANAGER_FLAGS = ("--mirroring-max-endpoints-per-subset", "2", "--mirroring-endpointslice-updates-batch-period",
                 f"{int(BATCH * 1000)}ms")  # fmt: skip


def test_at_most_max_endpoints_per_subset_are_mirrored(c: Cluster, ns: str) -> None:
    service(c, ns, "big")
    metrics = [{"name": "metrics", "port": 9090, "protocol": "TCP"}]
    endpoints(c, ns, "big", [subset("10.4.0.1", "10.4.0.2", "10.4.0.3", not_ready=("10.4.0.4",)),
                             subset("10.4.0.5", ports=metrics)])  # fmt: skip
    wait_for(lambda: addresses(c, ns, "big") == {"10.4.0.1": True, "10.4.0.2": True, "10.4.0.5": True},
             what="two of the first subset, one of the second")  # fmt: skip
    assert sorted(len(s["endpoints"]) for s in slices(c, ns, "big")) == [1, 2]
    (event,) = wait_for(lambda: c.events(ns, "TooManyAddressesToMirror"), what="TooManyAddressesToMirror event")
    assert event["type"] == "Warning" and event["involvedObject"]["name"] == "big"
    assert "A max of 2 addresses" in event["message"] and "2 addresses were skipped" in event["message"]


def test_a_slice_change_is_synced_after_the_batch_period(c: Cluster, ns: str) -> None:
    service(c, ns, "db")
    posted = time.monotonic()
    endpoints(c, ns, "db", [subset("10.4.1.1")])  # mirrored at once: Endpoints changes are not batched
    wait_for(lambda: addresses(c, ns, "db") == {"10.4.1.1": True}, what="db mirrored")
    (old,) = slices(c, ns, "db")
    c.delete(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices/{old['metadata']['name']}")
    wait_for(lambda: addresses(c, ns, "db") == {"10.4.1.1": True}, what="recreated")
    # The sync that recreates it waits for the batch period, counted (the earlier time wins, as with
    # client-go's AddAfter) from the first slice event after the last sync: our own create.
    assert time.monotonic() - posted >= BATCH
