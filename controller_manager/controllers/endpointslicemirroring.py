"""EndpointSliceMirroringController: the Endpoints of a Service without a selector, as EndpointSlices.

Desired state: for an Endpoints `ns/db` whose Service `ns/db` exists and has no selector (a Service
pointed by hand at something, such as a database outside the cluster), EndpointSlices labelled
`kubernetes.io/service-name: db` and `endpointslice.kubernetes.io/managed-by:
endpointslicemirroring-controller.k8s.io` on top of the Endpoints' own labels, with its annotations
(but for `endpoints.kubernetes.io/last-change-trigger-time` and kubectl's last-applied-configuration),
controlled by the Endpoints object, that together hold its addresses: `addresses` as endpoints with
ready true, `notReadyAddresses` with ready false, each with its hostname, nodeName and targetRef.
Addresses of one address type (IPv4, IPv6) and port list share slices, so two subsets with other
ports make two slices. At most `--mirroring-max-endpoints-per-subset` (1000) addresses of a subset
are mirrored, and a slice holds at most that many.
Current state: Endpoints, Services and the slices this controller manages, from informers.
What we do about the difference: what the endpointslice controller does (its plan_slices and slice
tracker): update the slices whose endpoints, labels, annotations or owner changed, fill free room
before creating new slices (generateName `db-`), delete the rest; with no addresses there are no
slices (no placeholder). Nothing is mirrored, and what was mirrored is deleted, when the Endpoints is
gone, is labelled `endpointslice.kubernetes.io/skip-mirror: "true"` or carries the leader-election
annotation, or when its Service is missing or has a selector (then the slices are the endpointslice
controller's). Addresses that are no IP are skipped (a Warning event InvalidIPAddress on the
Endpoints), and so are those past the cap (TooManyAddressesToMirror). A change to a mirrored slice
(edited or deleted by someone) syncs its Endpoints again after
`--mirroring-endpointslice-updates-batch-period`.

`default/kubernetes` is not mirrored because of that label: the API server keeps that slice itself
and labels its Endpoints skip-mirror, as kube-apiserver does.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from api import errors
from client import WARNING
from client.informer import split_key
from controller_manager.controller import Controller
from controller_manager.controllers.endpoints import LEADER_ANNOTATION
from controller_manager.controllers.endpointslice import (
    MANAGED_BY_LABEL,
    RESOURCE,
    SERVICE_NAME_LABEL,
    PortsKey,
    plan_slices,
    ports_key_of,
    slice_ports,
)
from controller_manager.controllers.endpointslice_tracker import SliceTracker

log = logging.getLogger("controller_manager")
Obj = dict[str, Any]
Desired = dict[str, dict[PortsKey, dict[str, Obj]]]  # address type -> port list -> {identity: endpoint}

CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
NOT_COPIED_ANNOTATIONS = (
    "endpoints.kubernetes.io/last-change-trigger-time",
    "kubectl.kubernetes.io/last-applied-configuration",
)


def should_mirror(endpoints: Obj) -> bool:
    """Kubernetes' shouldMirror: not labelled skip-mirror, not a leader-election lock."""
    meta = endpoints["metadata"]
    return (
        (meta.get("labels") or {}).get(SKIP_MIRROR_LABEL) != "true"
        and LEADER_ANNOTATION not in (meta.get("annotations") or {})
    )


def has_selector(service: Obj) -> bool:
    """As the endpointslice controller reads it, so that exactly one of the two makes the slices."""
    return bool((service.get("spec") or {}).get("selector"))


def address_type(ip: object) -> str | None:
    """IPv4 or IPv6, or None for something that is no IP address."""
    try:
        return "IPv4" if ipaddress.ip_address(str(ip)).version == 4 else "IPv6"
    except ValueError:
        return None


def mirrored_endpoint(address: Obj, ready: bool) -> Obj:
    endpoint: Obj = {"addresses": [address["ip"]], "conditions": {"ready": ready}}
    for field in ("hostname", "nodeName", "targetRef"):
        if address.get(field):
            endpoint[field] = address[field]
    return endpoint


def mirrored_id(endpoint: Obj) -> str:
    """An endpoint's identity here: its address and what it points at (hand-written targetRefs may
    name one thing for several addresses)."""
    ref = endpoint.get("targetRef") or {}
    return f"{endpoint['addresses'][0]}|{ref.get('uid') or ref.get('name') or ''}"


def desired_endpoints(endpoints: Obj, max_per_subset: int) -> tuple[Desired, int, int]:
    """(the endpoints to mirror, addresses that are no IP, addresses past the cap of their subset)."""
    desired: Desired = {}
    invalid = over_cap = 0
    for subset in endpoints.get("subsets") or []:
        ports_key = tuple(sorted(ports_key_of(subset)))  # a subset's ports read like a slice's
        addresses = [(a, True) for a in subset.get("addresses") or []]
        addresses += [(a, False) for a in subset.get("notReadyAddresses") or []]
        mirrored = 0
        for address, ready in addresses:
            if mirrored >= max_per_subset:
                over_cap += 1
                continue
            kind = address_type(address.get("ip"))
            if kind is None:
                invalid += 1
                continue
            endpoint = mirrored_endpoint(address, ready)
            desired.setdefault(kind, {}).setdefault(ports_key, {})[mirrored_id(endpoint)] = endpoint
            mirrored += 1
    return desired, invalid, over_cap


def slice_meta(endpoints: Obj) -> Obj:
    """The labels, annotations and owner every slice mirrored from `endpoints` carries."""
    meta = endpoints["metadata"]
    labels = {**(meta.get("labels") or {}), SERVICE_NAME_LABEL: meta["name"], MANAGED_BY_LABEL: CONTROLLER_NAME}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in NOT_COPIED_ANNOTATIONS}
    owner = {"apiVersion": "v1", "kind": "Endpoints", "name": meta["name"], "uid": meta.get("uid"),
             "controller": True, "blockOwnerDeletion": True}  # fmt: skip
    return {"labels": labels, "annotations": annotations, "ownerReferences": [owner]}


def _differs(slice_: Obj, endpoints: list[Obj], meta: Obj) -> bool:
    have = slice_["metadata"]
    if (slice_.get("endpoints") or []) != endpoints:
        return True
    return any((have.get(field) or type(want)()) != want for field, want in meta.items())


class EndpointSliceMirroringController(Controller):
    name = "endpointslicemirroring"
    component = "endpoint-slice-mirroring-controller"

    def setup(self) -> None:
        f = self.ctx.informers
        self.max_per_subset = self.ctx.options.mirroring_max_endpoints_per_subset
        self.batch_period = self.ctx.options.mirroring_endpointslice_updates_batch_period
        self.tracker = SliceTracker()  # endpoints key -> the slices we just created or deleted
        self.endpoints = f.informer_for("endpoints")
        self.services = f.informer_for("services")
        self.slices = f.informer_for(RESOURCE, label_selector=f"{MANAGED_BY_LABEL}={CONTROLLER_NAME}")
        self.endpoints.add_event_handler(self._endpoints_seen, self._endpoints_updated, self._endpoints_seen)
        self.services.add_event_handler(self._service_seen, self._service_updated, self._service_seen)
        self.slices.add_event_handler(self._slice_seen, lambda _o, n: self._slice_seen(n), self._slice_deleted)

    # -- handlers: which Endpoints key a change concerns ------------------------------------------
    def _endpoints_seen(self, endpoints: Obj) -> None:
        if should_mirror(endpoints):
            self.enqueue(endpoints)

    def _endpoints_updated(self, old: Obj, new: Obj) -> None:
        if should_mirror(old) or should_mirror(new):  # e.g. a skip-mirror label added: clean up
            self.enqueue(new)

    def _service_seen(self, service: Obj) -> None:
        if not has_selector(service):
            self.enqueue(service)

    def _service_updated(self, old: Obj, new: Obj) -> None:
        if has_selector(old) != has_selector(new):
            self.enqueue(new)

    def _endpoints_key(self, slice_: Obj) -> str | None:
        name = (slice_["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL)
        return f"{slice_['metadata'].get('namespace')}/{name}" if name else None

    def _slice_seen(self, slice_: Obj) -> None:
        if key := self._endpoints_key(slice_):
            self.enqueue_after(key, self.batch_period)

    def _slice_deleted(self, slice_: Obj) -> None:
        if key := self._endpoints_key(slice_):
            self.tracker.observed_deletion(key, slice_["metadata"]["name"])
            self.enqueue_after(key, self.batch_period)

    # -- reconcile ------------------------------------------------------------------------------
    async def reconcile(self, key: str) -> None:
        ns, name = split_key(key)
        existing = [
            s for s in self.slices.by_index("namespace", ns)
            if (s["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == name
        ]  # fmt: skip
        if not self.tracker.caught_up(key, existing):
            self.enqueue_after(key, 0.1)  # our own last writes are not in the informer yet
            return
        endpoints, service = self.endpoints.get(key), self.services.get(key)
        if endpoints is None or not should_mirror(endpoints) or service is None or has_selector(service):
            await self._delete_all(key, existing)
            return
        desired, invalid, over_cap = desired_endpoints(endpoints, self.max_per_subset)
        self._warn(endpoints, invalid, over_cap)
        meta = slice_meta(endpoints)
        by_type: dict[str, list[Obj]] = {}
        for slice_ in existing:
            by_type.setdefault(slice_.get("addressType") or "", []).append(slice_)
        for kind in sorted(set(desired) | set(by_type)):
            keep, create, delete = plan_slices(
                desired.get(kind, {}), by_type.get(kind, []), self.max_per_subset, placeholder=False,
                identity=mirrored_id,
            )  # fmt: skip
            for slice_, wanted in keep:
                if _differs(slice_, wanted, meta):
                    body = {**slice_, "endpoints": wanted, "metadata": {**slice_["metadata"], **meta}}
                    await self.client.update(RESOURCE, body)
            if endpoints["metadata"].get("deletionTimestamp"):
                create = []  # as Kubernetes: no new slices for an Endpoints on its way out
            for ports_key, wanted in create:
                made = await self.client.create(RESOURCE, {
                    "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"generateName": f"{name}-", "namespace": ns, **meta},
                    "addressType": kind, "endpoints": wanted, "ports": slice_ports(ports_key),
                }, ns)  # fmt: skip
                self.tracker.expect(key, made["metadata"]["name"], True)
            await self._delete_all(key, delete)

    def _warn(self, endpoints: Obj, invalid: int, over_cap: int) -> None:
        ref = {**endpoints, "apiVersion": "v1", "kind": "Endpoints"}  # informer items may lack their kind
        if invalid:
            message = f"Skipped {invalid} invalid IP addresses when mirroring to EndpointSlices"
            self.recorder.event(ref, WARNING, "InvalidIPAddress", message)
        if over_cap:
            message = (f"A max of {self.max_per_subset} addresses can be mirrored to EndpointSlices per Endpoints "
                       f"subset. {over_cap} addresses were skipped")  # fmt: skip
            self.recorder.event(ref, WARNING, "TooManyAddressesToMirror", message)

    async def _delete_all(self, key: str, slices: list[Obj]) -> None:
        for slice_ in slices:
            meta = slice_["metadata"]
            try:
                await self.client.delete(RESOURCE, meta["name"], meta["namespace"])
                log.info("endpointslicemirroring: deleted %s/%s (for %s)", meta["namespace"], meta["name"], key)
            except errors.NotFoundError:
                pass
            self.tracker.expect(key, meta["name"], False)
