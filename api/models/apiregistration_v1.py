"""apiregistration.k8s.io/v1 APIService: "this group/version is served by that Service".

The aggregation layer of kube-apiserver reads these objects. An APIService named
`<version>.<group>` (e.g. `v1beta1.metrics.k8s.io`) with a `service` makes the API server proxy
every request under `/apis/<group>/<version>` to that Service's endpoints: the metrics-server
serves the resource metrics API this way, and `kubectl top` cannot tell it from a built-in
group. An APIService without `service` is *Local*: the API server serves that group itself
(one exists for each built-in group/version). `status.conditions[Available]` says whether the
backend answers.
"""

from __future__ import annotations

from api.models.base import K8sModel
from api.models.meta import BaseCondition, K8sList, ObjectMeta


class ServiceReference(K8sModel):
    namespace: str | None = None
    name: str | None = None
    port: int | None = None  # 443 when unset


class APIServiceSpec(K8sModel):
    service: ServiceReference | None = None  # None: served by this API server (Local)
    group: str | None = None
    version: str | None = None
    insecure_skip_tls_verify: bool | None = None
    ca_bundle: str | None = None  # base64 PEM: verify the backend's serving certificate with it
    group_priority_minimum: int | None = None  # 1..20000; orders groups in discovery
    version_priority: int | None = None  # 1..1000; orders versions inside a group


class APIServiceStatus(K8sModel):
    conditions: list[BaseCondition] | None = None


class APIService(K8sModel):
    api_version: str | None = "apiregistration.k8s.io/v1"
    kind: str | None = "APIService"
    metadata: ObjectMeta | None = None
    spec: APIServiceSpec | None = None
    status: APIServiceStatus | None = None


class APIServiceList(K8sList[APIService]):
    api_version: str | None = "apiregistration.k8s.io/v1"
    kind: str | None = "APIServiceList"
