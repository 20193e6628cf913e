"""ControllerContext: what the manager hands every controller — and nothing else.

One REST client (rate limited by --kube-api-qps/--kube-api-burst), one SharedInformerFactory so
that ten controllers watching pods cost one watch, an event recorder per controller (its name is
the "From" column of `kubectl describe`), the options, and the metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from client import EventRecorder, RESTClient, SharedInformerFactory
from controller_manager.metrics import ControllerMetrics
from controller_manager.options import ManagerOptions


@dataclass
class ControllerContext:
    client: RESTClient
    informers: SharedInformerFactory
    options: ManagerOptions
    metrics: ControllerMetrics
    _recorders: dict[str, EventRecorder] = field(default_factory=dict)

    def recorder(self, component: str) -> EventRecorder:
        """The event recorder for `component` (e.g. "replicaset-controller"), shared per name."""
        if component not in self._recorders:
            self._recorders[component] = EventRecorder(self.client, component)
        return self._recorders[component]

    async def close(self) -> None:
        for r in self._recorders.values():
            await r.aclose()
