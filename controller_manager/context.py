"""ControllerContext: what the manager hands every controller — and nothing else.

One REST client (rate limited by --kube-api-qps/--kube-api-burst), one SharedInformerFactory so
that ten controllers watching pods cost one watch, an event recorder per controller (its name is
the "From" column of `kubectl describe`), the options, the metrics, and the credentials read from
--root-ca-file and --service-account-private-key-file.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from client import EventRecorder, RESTClient, SharedInformerFactory
from controller_manager.credentials import Credentials
from controller_manager.metrics import ControllerMetrics
from controller_manager.options import ManagerOptions


@dataclass
class ControllerContext:
    client: RESTClient
    informers: SharedInformerFactory
    options: ManagerOptions
    metrics: ControllerMetrics
    credentials: Credentials = field(default_factory=Credentials)
    _recorders: dict[str, EventRecorder] = field(default_factory=dict)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)  # run by close()

    @property
    def cluster_name(self) -> str:
        """--cluster-name, the instance prefix of what the cluster creates outside itself: the names
        of the service-lb-controller's balancers (servicelb.load_balancer_name). Kubernetes' route
        controller prefixes cloud routes with it too; there is no route controller here."""
        return self.options.cluster_name

    def recorder(self, component: str) -> EventRecorder:
        """The event recorder for `component` (e.g. "replicaset-controller"), shared per name."""
        if component not in self._recorders:
            self._recorders[component] = EventRecorder(self.client, component)
        return self._recorders[component]

    async def close(self) -> None:
        for r in self._recorders.values():
            await r.aclose()
        for closer in self.closers:
            await closer()
