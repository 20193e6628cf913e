"""NoExecuteTaintManager: delete the pods a NoExecute taint says must go, when they must go.

Desired state: no pod stays on a node with a NoExecute taint it does not tolerate, and none stays
past the `tolerationSeconds` of the toleration it does have.
Current state: the pods and nodes in the informer caches.
What we do about the difference: for one pod (a queue key), work out its deadline — now for an
untolerated taint, `timeAdded + tolerationSeconds` for a tolerated one, never for a toleration
without seconds. Before the deadline, come back at the deadline (`enqueue_after`): that is the
whole timer wheel. At the deadline, take a token from the zone's eviction bucket (none left: come
back when one will have dripped in) and DELETE the pod with its own grace period, leaving a
`TaintManagerEviction` event "Marking for deletion Pod ns/name" on it.

Because the deadline is recomputed from the current taints every time, a node that recovers (its
taints removed) simply makes the next look say "nothing to do" — the pending eviction is cancelled
without any bookkeeping, and we say so with a "Cancelling deletion" event.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from api import errors
from client import NORMAL, EventRecorder, Informer
from client.informer import split_key
from client.rest import RESTClient
from controller_manager.controllers.nodelifecycle_taints import eviction_time, no_execute_taints
from controller_manager.controllers.nodelifecycle_zones import Zones, zone_of

log = logging.getLogger("controller_manager")


class NoExecuteTaintManager:
    def __init__(
        self,
        client: RESTClient,
        pods: Informer,
        nodes: Informer,
        zones: Zones,
        recorder: EventRecorder,
        requeue: Callable[[str, float], None],
        retry_period: float,
    ) -> None:
        self.client = client
        self.pods = pods
        self.nodes = nodes
        self.zones = zones
        self.recorder = recorder
        self.requeue = requeue
        self.retry_period = retry_period
        # (pod key, taint key) -> when we first saw the taint, for taints without timeAdded
        self._first_seen: dict[tuple[str, str], float] = {}
        self._scheduled: set[str] = set()  # pods with a pending eviction, for the cancel event
        self.evicted = 0

    def forget(self, key: str) -> None:
        self._scheduled.discard(key)
        for k in [k for k in self._first_seen if k[0] == key]:
            del self._first_seen[k]

    async def process(self, key: str) -> None:
        pod = self.pods.get(key)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            self.forget(key)
            return
        node = self.nodes.get((pod.get("spec") or {}).get("nodeName") or "")
        taints = [] if self.zones.master_disruption else no_execute_taints(node)
        now = time.time()
        seen = [self._first_seen.setdefault((key, str(t.get("key"))), now) for t in taints]
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        due = eviction_time(taints, tolerations, first_seen=min(seen, default=now)) if taints else None
        if due is None:
            if key in self._scheduled:
                self.recorder.event(pod, NORMAL, "TaintManagerEviction", f"Cancelling deletion of Pod {key}")
            self.forget(key)
            return
        self._scheduled.add(key)
        if due > now:
            self.requeue(key, due - now)
            return
        zone = zone_of(node)
        if self.zones.rate(zone) <= 0:  # partial disruption in a small zone: hold evictions
            self.requeue(key, self.retry_period)
            return
        bucket = self.zones.bucket(zone)
        if not bucket.try_accept():
            self.requeue(key, max((1.0 - bucket.tokens) / bucket.qps, 0.01))
            return
        await self._evict(pod, key)

    async def _evict(self, pod: dict[str, Any], key: str) -> None:
        ns, name = split_key(key)
        log.info("NoExecuteTaintManager is deleting pod %s", key)
        self.recorder.event(pod, NORMAL, "TaintManagerEviction", f"Marking for deletion Pod {key}")
        try:
            await self.client.delete("pods", name, ns, preconditions={"uid": pod["metadata"]["uid"]})
        except errors.NotFoundError:
            pass
        except errors.ConflictError:
            pass  # a new pod of the same name: it gets its own look when the informer sees it
        self.evicted += 1
        self.forget(key)
