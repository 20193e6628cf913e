"""EndpointSliceController: every Service with a selector has EndpointSlices listing its pods.

Desired state: for a Service `ns/web` with a selector, one or more EndpointSlices labelled
`kubernetes.io/service-name: web` and `endpointslice.kubernetes.io/managed-by:
endpointslice-controller.k8s.io`, owned by the Service, that together hold one endpoint per
matching pod with an IP (terminating pods included): its address, nodeName, targetRef and the
conditions ready (ready and not terminating), serving (ready, even while terminating) and
terminating. Pods whose ports resolve alike share slices with that port list; a slice holds at
most `--max-endpoints-per-slice` endpoints (100). A Service with no endpoints keeps one empty
placeholder slice, as in Kubernetes.
Current state: Services, Pods and EndpointSlices from informers.
What we do about the difference: update a slice whose endpoints changed (keeping each pod in the
slice it is already in, so one pod's change rewrites one small slice), fill free room in existing
slices before creating new ones (generateName `web-`), and delete slices left empty or orphaned.
Slices not managed by this controller (the API server's `default/kubernetes`, hand-made ones) are
never touched; Services without a selector are left alone (the endpointslicemirroring controller
copies their Endpoints into slices of its own).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from api import errors
from api.labels import from_set
from client.informer import meta_namespace_key, split_key
from controller_manager.controller import Controller
from controller_manager.controllers.endpoints import find_port, pod_is_ready
from controller_manager.controllers.endpointslice_tracker import SliceTracker

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
HEADLESS_LABEL = "service.kubernetes.io/headless"
RESOURCE = "endpointslices.discovery.k8s.io"
PortsKey = tuple[tuple[str, int, str, str], ...]


def pod_endpoint(pod: Obj, service: Obj) -> Obj:
    """The endpoint of one pod: conditions as Kubernetes computes them for slices."""
    meta, spec = pod["metadata"], pod.get("spec") or {}
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    serving = publish or pod_is_ready(pod)
    terminating = bool(meta.get("deletionTimestamp"))
    endpoint: Obj = {
        "addresses": [(pod.get("status") or {})["podIP"]],
        "conditions": {"ready": serving and not terminating, "serving": serving, "terminating": terminating},
        "targetRef": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta.get("uid")},
    }
    if spec.get("nodeName"):
        endpoint["nodeName"] = spec["nodeName"]
    if spec.get("hostname") and spec.get("subdomain") == service["metadata"]["name"]:
        endpoint["hostname"] = spec["hostname"]
    return endpoint


def desired_endpoints(service: Obj, pods: list[Obj]) -> dict[PortsKey, dict[str, Obj]]:
    """Port list -> {pod uid or name: endpoint} for every pod that belongs in the slices."""
    spec = service.get("spec") or {}
    service_ports = spec.get("ports") or []
    groups: dict[PortsKey, dict[str, Obj]] = {}
    for pod in pods:
        status = pod.get("status") or {}
        if not status.get("podIP") or status.get("phase") in ("Succeeded", "Failed"):
            continue
        ports = []
        for sp in service_ports:
            number = find_port(pod, sp)
            if number is not None:
                ports.append((sp.get("name") or "", number, sp.get("protocol") or "TCP", sp.get("appProtocol") or ""))
        if not ports and service_ports:
            continue
        endpoint = pod_endpoint(pod, service)
        groups.setdefault(tuple(ports), {})[endpoint_id(endpoint)] = endpoint
    return groups


def endpoint_id(endpoint: Obj) -> str:
    """Which pod an endpoint stands for: plan_slices' default identity of an endpoint."""
    ref = endpoint.get("targetRef") or {}
    return str(ref.get("uid") or ref.get("name") or endpoint["addresses"][0])


def slice_ports(ports_key: PortsKey) -> list[Obj]:
    out = []
    for name, port, protocol, app_protocol in ports_key:
        entry: Obj = {"name": name, "port": port, "protocol": protocol}
        if app_protocol:
            entry["appProtocol"] = app_protocol
        out.append(entry)
    return out


def ports_key_of(slice_: Obj) -> PortsKey:
    return tuple(
        (p.get("name") or "", int(p.get("port") or 0), p.get("protocol") or "TCP", p.get("appProtocol") or "")
        for p in slice_.get("ports") or []
    )


def plan_slices(
    desired: dict[PortsKey, dict[str, Obj]],
    existing: list[Obj],
    max_per_slice: int,
    *,
    placeholder: bool = True,
    identity: Callable[[Obj], str] = endpoint_id,
) -> tuple[list[tuple[Obj, list[Obj]]], list[tuple[PortsKey, list[Obj]]], list[Obj]]:
    """(slices to rewrite with their new endpoints, new slices to create, slices to delete).

    Each pod stays in the slice it is in; new pods go where there is room, then to new slices.
    `desired` is keyed by `identity(endpoint)`. With `placeholder=False` no endpoints means no slices."""
    keep: list[tuple[Obj, list[Obj]]] = []
    delete: list[Obj] = []
    create: list[tuple[PortsKey, list[Obj]]] = []
    by_ports: dict[PortsKey, list[Obj]] = {}
    for slice_ in sorted(existing, key=lambda s: s["metadata"]["name"]):
        by_ports.setdefault(ports_key_of(slice_), []).append(slice_)
    for ports_key in set(by_ports) | set(desired):
        wanted = dict(desired.get(ports_key, {}))
        placed: list[tuple[Obj, list[Obj]]] = []
        for slice_ in by_ports.get(ports_key, []):
            current = [wanted.pop(identity(e)) for e in slice_.get("endpoints") or [] if identity(e) in wanted]
            placed.append((slice_, current[:max_per_slice]))
        remaining = sorted(wanted.values(), key=identity)
        for _slice, endpoints in placed:
            room = max_per_slice - len(endpoints)
            if room > 0 and remaining:
                endpoints.extend(remaining[:room])
                remaining = remaining[room:]
        while remaining:
            create.append((ports_key, remaining[:max_per_slice]))
            remaining = remaining[max_per_slice:]
        for slice_, endpoints in placed:
            if endpoints:
                keep.append((slice_, endpoints))
            else:
                delete.append(slice_)
    if placeholder and not desired and not create:
        # A placeholder: a Service without endpoints still has one (empty) slice.
        empty = next((s for s in delete if not s.get("ports") and not s.get("endpoints")), None)
        if empty is not None:
            delete.remove(empty)
        else:
            create.append(((), []))
    return keep, create, delete


class EndpointSliceController(Controller):
    name = "endpointslice"
    component = "endpoint-slice-controller"

    def setup(self) -> None:
        f = self.ctx.informers
        self.max_per_slice = self.ctx.options.max_endpoints_per_slice
        self.tracker = SliceTracker()  # service key -> the slices we just created or deleted
        self.services = f.informer_for("services")
        self.pods = f.informer_for("pods")
        self.slices = f.informer_for(RESOURCE, label_selector=f"{MANAGED_BY_LABEL}={CONTROLLER_NAME}")
        self.services.add_event_handler(self.enqueue, lambda _o, n: self.enqueue(n), self.enqueue)
        self.pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_added)
        self.slices.add_event_handler(self._slice_changed, lambda _o, n: self._slice_changed(n), self._slice_deleted)

    def _service_key(self, slice_: Obj) -> str | None:
        name = (slice_["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL)
        return f"{slice_['metadata'].get('namespace')}/{name}" if name else None

    def _slice_changed(self, slice_: Obj) -> None:
        key = self._service_key(slice_)
        if key:
            self.enqueue(key)

    def _slice_deleted(self, slice_: Obj) -> None:
        key = self._service_key(slice_)
        if key:
            self.tracker.observed_deletion(key, slice_["metadata"]["name"])
            self.enqueue(key)

    def _services_for(self, pod: Obj) -> list[str]:
        labels = pod["metadata"].get("labels") or {}
        return [
            meta_namespace_key(svc)
            for svc in self.services.by_index("namespace", pod["metadata"].get("namespace") or "")
            if (svc.get("spec") or {}).get("selector") and from_set(svc["spec"]["selector"]).matches(labels)
        ]

    def _pod_added(self, pod: Obj) -> None:
        for key in self._services_for(pod):
            self.enqueue(key)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        for key in set(self._services_for(old)) | set(self._services_for(new)):
            self.enqueue(key)

    async def run(self) -> None:
        for slice_ in self.slices.list():  # slices of services deleted while we were away
            key = self._service_key(slice_)
            if key and self.services.get(key) is None:
                self.enqueue(key)
        await super().run()

    def _existing(self, ns: str, name: str) -> list[Obj]:
        return [
            s for s in self.slices.by_index("namespace", ns)
            if (s["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == name
        ]

    async def reconcile(self, key: str) -> None:
        ns, name = split_key(key)
        existing = self._existing(ns, name)
        if not self.tracker.caught_up(key, existing):
            self.enqueue_after(key, 0.1)  # our own last writes are not in the informer yet
            return
        service = self.services.get(key)
        if service is None or not (service.get("spec") or {}).get("selector"):
            for slice_ in existing:  # a selector-less service's slices are the user's, never ours
                await self._delete(slice_)
            return
        match = from_set(service["spec"]["selector"])
        pods = [p for p in self.pods.by_index("namespace", ns) if match.matches(p["metadata"].get("labels") or {})]
        keep, create, delete = plan_slices(desired_endpoints(service, pods), existing, self.max_per_slice)
        labels = self._labels(service)
        for slice_, endpoints in keep:
            if (slice_.get("endpoints") or []) != endpoints or slice_["metadata"].get("labels") != labels:
                body = {**slice_, "endpoints": endpoints, "metadata": {**slice_["metadata"], "labels": labels}}
                await self.client.update(RESOURCE, body)
        for ports_key, endpoints in create:
            made = await self.client.create(RESOURCE, self._new_slice(service, labels, ports_key, endpoints), ns)
            self.tracker.expect(key, made["metadata"]["name"], True)
        for slice_ in delete:
            await self._delete(slice_)
            self.tracker.expect(key, slice_["metadata"]["name"], False)

    def _labels(self, service: Obj) -> dict[str, str]:
        labels = dict(service["metadata"].get("labels") or {})
        labels[SERVICE_NAME_LABEL] = service["metadata"]["name"]
        labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
        if (service.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS_LABEL] = ""
        return labels

    def _new_slice(self, service: Obj, labels: dict[str, str], ports_key: PortsKey, endpoints: list[Obj]) -> Obj:
        meta = service["metadata"]
        body: Obj = {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "generateName": f"{meta['name']}-",
                "namespace": meta["namespace"],
                "labels": labels,
                "ownerReferences": [{
                    "apiVersion": "v1", "kind": "Service", "name": meta["name"], "uid": meta.get("uid"),
                    "controller": True, "blockOwnerDeletion": True,
                }],
            },
            "addressType": "IPv4",
            "endpoints": endpoints,
        }
        if ports_key:
            body["ports"] = slice_ports(ports_key)
        return body

    async def _delete(self, slice_: Obj) -> None:
        try:
            await self.client.delete(RESOURCE, slice_["metadata"]["name"], slice_["metadata"]["namespace"])
            log.info("endpointslice: deleted %s", meta_namespace_key(slice_))
        except errors.NotFoundError:
            pass
