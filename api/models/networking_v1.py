"""networking.k8s.io/v1: Ingress, IngressClass and NetworkPolicy.

An Ingress routes HTTP(S) by host and path to Services; an IngressClass names the controller
(nginx, traefik, ...) that implements the Ingresses of that class. A NetworkPolicy selects pods
and lists which traffic may reach them (ingress) or leave them (egress). mini-k8s stores and
serves all three; nothing implements them yet (no ingress controller, no policy enforcement).
Deeper sub-objects (backends, peers) are kept verbatim.
"""

from __future__ import annotations

from api.models.base import FreeDict, K8sModel
from api.models.meta import K8sList, LabelSelector, ObjectMeta


class IngressTLS(K8sModel):
    hosts: list[str] | None = None
    secret_name: str | None = None


class HTTPIngressPath(K8sModel):
    path: str | None = None
    path_type: str | None = None  # Exact, Prefix, ImplementationSpecific
    backend: FreeDict | None = None


class HTTPIngressRuleValue(K8sModel):
    paths: list[HTTPIngressPath] | None = None


class IngressRule(K8sModel):
    host: str | None = None
    http: HTTPIngressRuleValue | None = None


class IngressSpec(K8sModel):
    ingress_class_name: str | None = None
    default_backend: FreeDict | None = None
    tls: list[IngressTLS] | None = None
    rules: list[IngressRule] | None = None


class IngressStatus(K8sModel):
    load_balancer: FreeDict | None = None


class Ingress(K8sModel):
    api_version: str | None = "networking.k8s.io/v1"
    kind: str | None = "Ingress"
    metadata: ObjectMeta | None = None
    spec: IngressSpec | None = None
    status: IngressStatus | None = None


class IngressList(K8sList[Ingress]):
    api_version: str | None = "networking.k8s.io/v1"
    kind: str | None = "IngressList"


class IngressClassSpec(K8sModel):
    controller: str | None = None
    parameters: FreeDict | None = None


class IngressClass(K8sModel):
    api_version: str | None = "networking.k8s.io/v1"
    kind: str | None = "IngressClass"
    metadata: ObjectMeta | None = None
    spec: IngressClassSpec | None = None


class IngressClassList(K8sList[IngressClass]):
    api_version: str | None = "networking.k8s.io/v1"
    kind: str | None = "IngressClassList"


class NetworkPolicyPort(K8sModel):
    protocol: str | None = None
    port: int | str | None = None
    end_port: int | None = None


class NetworkPolicyIngressRule(K8sModel):
    ports: list[NetworkPolicyPort] | None = None
    from_: list[FreeDict] | None = None


class NetworkPolicyEgressRule(K8sModel):
    ports: list[NetworkPolicyPort] | None = None
    to: list[FreeDict] | None = None


class NetworkPolicySpec(K8sModel):
    pod_selector: LabelSelector | None = None
    ingress: list[NetworkPolicyIngressRule] | None = None
    egress: list[NetworkPolicyEgressRule] | None = None
    policy_types: list[str] | None = None  # Ingress, Egress


class NetworkPolicy(K8sModel):
    api_version: str | None = "networking.k8s.io/v1"
    kind: str | None = "NetworkPolicy"
    metadata: ObjectMeta | None = None
    spec: NetworkPolicySpec | None = None


class NetworkPolicyList(K8sList[NetworkPolicy]):
    api_version: str | None = "networking.k8s.io/v1"
    kind: str | None = "NetworkPolicyList"


