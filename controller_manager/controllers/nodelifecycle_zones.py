"""Zones and disruption modes: when *not* to evict.

If one node stops reporting, the node probably died: move its pods. If every node stops reporting
at once, the likelier story is that the control plane lost the network — evicting everything then
would turn a network blip into a cluster-wide outage. So the node lifecycle controller looks at
nodes by zone (label `topology.kubernetes.io/zone`, "" when absent) and gives each zone a state:

    Normal              few nodes unhealthy           evict at --deleting-pods-qps
    PartialDisruption   more than 2 unhealthy AND     evict at --secondary-node-eviction-rate if the
                        unhealthy/all >= --unhealthy-  zone has more than --large-cluster-size-threshold
                        zone-threshold                nodes, else not at all
    FullDisruption      no node of the zone Ready     evict at --deleting-pods-qps (the zone is down:
                                                      its pods belong elsewhere)

and when *every* zone is in FullDisruption the controller enters "master disruption mode"
(seed 002's log line): it evicts nothing and lifts the NoExecute taints until some node is Ready again.

The rate limit is a token bucket per zone (`client.ratelimit.TokenBucket`, burst
--deleting-pods-burst); changing a zone's state swaps in a bucket with the new rate.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from client import TokenBucket
from controller_manager.options import ManagerOptions

log = logging.getLogger("controller_manager")

ZONE_LABEL = "topology.kubernetes.io/zone"
BETA_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
NORMAL, PARTIAL, FULL = "Normal", "PartialDisruption", "FullDisruption"


def zone_of(node: dict[str, Any] | None) -> str:
    labels = ((node or {}).get("metadata") or {}).get("labels") or {}
    return labels.get(ZONE_LABEL) or labels.get(BETA_ZONE_LABEL) or ""


def zone_state(ready_statuses: list[str | None], threshold: float) -> str:
    """Kubernetes' ComputeZoneState: a node counts as unhealthy unless its Ready condition is True."""
    not_ready = sum(1 for s in ready_statuses if s != "True")
    ready = len(ready_statuses) - not_ready
    if ready == 0 and not_ready > 0:
        return FULL
    if not_ready > 2 and not_ready / len(ready_statuses) >= threshold:
        return PARTIAL
    return NORMAL


@dataclass
class Zones:
    """Zone states, master disruption mode and the per-zone eviction buckets."""

    opts: ManagerOptions
    states: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    buckets: dict[str, TokenBucket] = field(default_factory=dict)
    master_disruption: bool = False

    def rate(self, zone: str) -> float:
        state = self.states.get(zone, NORMAL)
        if state == PARTIAL:
            large = self.sizes.get(zone, 0) > self.opts.large_cluster_size_threshold
            return self.opts.secondary_node_eviction_rate if large else 0.0
        return self.opts.deleting_pods_qps

    def bucket(self, zone: str) -> TokenBucket:
        if zone not in self.buckets:
            self.buckets[zone] = TokenBucket(self.rate(zone), self.opts.deleting_pods_burst)
        return self.buckets[zone]

    def update(self, ready_by_zone: dict[str, list[str | None]]) -> None:
        """Recompute from this pass's Ready statuses; log transitions as Kubernetes does."""
        new = {z: zone_state(s, self.opts.unhealthy_zone_threshold) for z, s in ready_by_zone.items()}
        self.sizes = {z: len(s) for z, s in ready_by_zone.items()}
        all_full = bool(new) and all(s == FULL for s in new.values())
        if all_full and not self.master_disruption:
            log.warning("Controller detected that all Nodes are not-Ready. Entering master disruption mode.")
        elif not all_full and self.master_disruption:
            log.warning("Controller detected that some Nodes are Ready. Exiting master disruption mode.")
        self.master_disruption = all_full
        for zone, state in new.items():
            if self.states.get(zone, NORMAL) != state:
                log.warning("Controller detected that zone %r is now in state %s.", zone, state)
            old_rate = self.rate(zone)
            self.states[zone] = state
            if zone in self.buckets and self.rate(zone) != old_rate:
                self.buckets[zone] = TokenBucket(self.rate(zone), self.opts.deleting_pods_burst)
        for zone in set(self.states) - set(new):
            del self.states[zone]
            self.buckets.pop(zone, None)
