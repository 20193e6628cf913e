"""discovery.k8s.io/v1 EndpointSlice: a Service's endpoints, in slices of at most ~100.

One Endpoints object per Service rewrites every address whenever one pod changes; with
thousands of pods that is a lot of bytes to every kube-proxy. EndpointSlices split the set so
a change touches one small slice. Each slice carries the label `kubernetes.io/service-name`
and, when the endpointslice controller owns it, `endpointslice.kubernetes.io/managed-by`.
Every endpoint has conditions: ready, serving (ready ignoring termination) and terminating.
"""

from __future__ import annotations

from api.models.base import FreeDict, K8sModel
from api.models.core_v1 import ObjectReference
from api.models.meta import K8sList, ObjectMeta


class EndpointConditions(K8sModel):
    ready: bool | None = None
    serving: bool | None = None
    terminating: bool | None = None


class Endpoint(K8sModel):
    addresses: list[str] | None = None
    conditions: EndpointConditions | None = None
    hostname: str | None = None
    target_ref: ObjectReference | None = None
    deprecated_topology: dict[str, str] | None = None
    node_name: str | None = None
    zone: str | None = None
    hints: FreeDict | None = None


class EndpointPort(K8sModel):
    name: str | None = None
    protocol: str | None = None
    port: int | None = None
    app_protocol: str | None = None


class EndpointSlice(K8sModel):
    api_version: str | None = "discovery.k8s.io/v1"
    kind: str | None = "EndpointSlice"
    metadata: ObjectMeta | None = None
    address_type: str | None = None  # IPv4, IPv6, FQDN
    endpoints: list[Endpoint] | None = None
    ports: list[EndpointPort] | None = None


class EndpointSliceList(K8sList[EndpointSlice]):
    api_version: str | None = "discovery.k8s.io/v1"
    kind: str | None = "EndpointSliceList"
