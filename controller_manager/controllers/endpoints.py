"""EndpointsController: every Service with a selector has an Endpoints object listing its pods.

Desired state: for a Service `ns/web` with a selector, an Endpoints `ns/web` whose subsets hold the
addresses (ip, nodeName, targetRef → the pod) of the matching pods that have an IP: Ready ones under
`addresses`, the others under `notReadyAddresses` (all under `addresses` with
`publishNotReadyAddresses`), and for each the ports the service's `targetPort`s resolve to on that
pod — by number, or by the name of a container port. Pods whose ports resolve alike are grouped into
one subset (Kubernetes' RepackSubsets), so a Deployment of identical pods makes one subset.
Current state: Services, Pods and Endpoints from informers.
What we do about the difference: create, update or delete the Endpoints object. A Service without a
selector is left alone — its Endpoints are the user's (that is how external services are wired) —
and so is `default/kubernetes`, which the API server keeps itself.

Which services does a pod change concern? Those in its namespace whose selector matches its old or
its new labels: both are queued, so a pod that loses a label also leaves the old service.
"""

from __future__ import annotations

import logging
from typing import Any

from api import errors
from api.labels import from_set
from client.informer import meta_namespace_key, split_key
from controller_manager.controller import Controller

log = logging.getLogger("controller_manager")
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
HEADLESS_LABEL = "service.kubernetes.io/headless"
Obj = dict[str, Any]


def pod_is_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def should_be_in_endpoints(pod: Obj, publish_not_ready: bool) -> bool:
    """Kubernetes' ShouldPodBeInEndpoints: it needs an IP; terminal pods and (unless not-ready
    addresses are published) terminating pods are left out."""
    status = pod.get("status") or {}
    if not status.get("podIP"):
        return False
    if status.get("phase") in ("Succeeded", "Failed"):
        return False
    return publish_not_ready or not pod["metadata"].get("deletionTimestamp")


def find_port(pod: Obj, service_port: Obj) -> int | None:
    """The pod's port for a service port: a number as given, a name looked up among the
    containers' ports of the same protocol (Kubernetes' FindPort)."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol") or "TCP"
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port["containerPort"])
    return None


def _address(pod: Obj, service: Obj) -> Obj:
    meta, spec = pod["metadata"], pod.get("spec") or {}
    address: Obj = {
        "ip": (pod.get("status") or {})["podIP"],
        "targetRef": {
            "kind": "Pod",
            "namespace": meta["namespace"],
            "name": meta["name"],
            "uid": meta.get("uid"),
        },
    }
    if spec.get("nodeName"):
        address["nodeName"] = spec["nodeName"]
    if spec.get("hostname") and spec.get("subdomain") == service["metadata"]["name"]:
        address["hostname"] = spec["hostname"]
    return address


def compute_subsets(service: Obj, pods: list[Obj]) -> list[Obj]:
    spec = service.get("spec") or {}
    publish_not_ready = bool(spec.get("publishNotReadyAddresses"))
    service_ports = spec.get("ports") or []
    # ports (as a hashable, sorted tuple) -> (ready addresses, not-ready addresses)
    groups: dict[tuple[tuple[str, int, str, str], ...], tuple[list[Obj], list[Obj]]] = {}
    for pod in pods:
        if not should_be_in_endpoints(pod, publish_not_ready):
            continue
        ports: list[tuple[str, int, str, str]] = []
        for sp in service_ports:
            number = find_port(pod, sp)
            if number is None:
                log.info("endpoints: no port %r on pod %s", sp.get("targetPort"), meta_namespace_key(pod))
                continue
            ports.append(
                (sp.get("name") or "", number, sp.get("protocol") or "TCP", sp.get("appProtocol") or "")
            )
        if not ports and (service_ports or spec.get("clusterIP") != "None"):
            continue  # a pod serving none of the ports is no endpoint (headless port-less services aside)
        ready, not_ready = groups.setdefault(tuple(sorted(set(ports))), ([], []))
        (ready if publish_not_ready or pod_is_ready(pod) else not_ready).append(_address(pod, service))
    subsets: list[Obj] = []
    for ports_key, (ready, not_ready) in sorted(groups.items()):
        subset: Obj = {}
        order = lambda a: (a["ip"], a["targetRef"].get("uid") or "")  # noqa: E731
        if ready:
            subset["addresses"] = sorted(ready, key=order)
        if not_ready:
            subset["notReadyAddresses"] = sorted(not_ready, key=order)
        if ports_key:
            subset["ports"] = [_port(*p) for p in ports_key]
        subsets.append(subset)
    return subsets


def _port(name: str, port: int, protocol: str, app_protocol: str) -> Obj:
    out: Obj = {"port": port, "protocol": protocol}
    if name:
        out["name"] = name
    if app_protocol:
        out["appProtocol"] = app_protocol
    return out


class EndpointsController(Controller):
    name = "endpoints"
    component = "endpoint-controller"

    def setup(self) -> None:
        f = self.ctx.informers
        self.services = f.informer_for("services")
        self.pods = f.informer_for("pods")
        self.endpoints = f.informer_for("endpoints")
        self.services.add_event_handler(self.enqueue, lambda _o, n: self.enqueue(n), self.enqueue)
        self.pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_added)
        # Someone deleted or edited "our" Endpoints: put them back (only where a Service exists).
        self.endpoints.add_event_handler(
            None, lambda _o, n: self._endpoints_changed(n), self._endpoints_changed
        )

    async def run(self) -> None:
        # Endpoints left behind by services deleted while no controller was running.
        for ep in self.endpoints.list():
            key = meta_namespace_key(ep)
            annotations = ep["metadata"].get("annotations") or {}
            if (
                self.services.get(key) is None
                and key != "default/kubernetes"
                and LEADER_ANNOTATION not in annotations
            ):
                self.enqueue(key)
        await super().run()

    # -- handlers ----------------------------------------------------------------------------
    def _services_for(self, pod: Obj) -> list[str]:
        labels = pod["metadata"].get("labels") or {}
        keys = []
        for svc in self.services.by_index("namespace", pod["metadata"].get("namespace") or ""):
            selector = (svc.get("spec") or {}).get("selector")
            if selector and from_set(selector).matches(labels):
                keys.append(meta_namespace_key(svc))
        return keys

    def _pod_added(self, pod: Obj) -> None:
        for key in self._services_for(pod):
            self.enqueue(key)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        for key in set(self._services_for(old)) | set(self._services_for(new)):
            self.enqueue(key)

    def _endpoints_changed(self, ep: Obj) -> None:
        key = meta_namespace_key(ep)
        if self.services.get(key) is not None:
            self.enqueue(key)

    # -- reconcile ---------------------------------------------------------------------------
    async def reconcile(self, key: str) -> None:
        if key == "default/kubernetes":
            return  # the API server's own endpoints
        ns, name = split_key(key)
        service = self.services.get(key)
        if service is None:
            try:
                await self.client.delete("endpoints", name, ns)
                log.info("endpoints: deleted %s (its service is gone)", key)
            except errors.NotFoundError:
                pass
            return
        selector = (service.get("spec") or {}).get("selector")
        if not selector:
            return  # user-managed endpoints
        match = from_set(selector)
        pods = [
            p for p in self.pods.by_index("namespace", ns) if match.matches(p["metadata"].get("labels") or {})
        ]
        subsets = compute_subsets(service, pods)
        labels = dict(service["metadata"].get("labels") or {})
        if (service.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS_LABEL] = ""
        current = self.endpoints.get(key)
        if (
            current is not None
            and (current.get("subsets") or []) == subsets
            and (current["metadata"].get("labels") or {}) == labels
        ):
            return
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "subsets": subsets,
        }
        if current is None:
            try:
                await self.client.create("endpoints", body, ns)
                return
            except errors.AlreadyExistsError:
                current = await self.client.get("endpoints", name, ns)  # our cache lags: update instead
        body["metadata"] = {**current["metadata"], "labels": labels}
        await self.client.update("endpoints", body)
