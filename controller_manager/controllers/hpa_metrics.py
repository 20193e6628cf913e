"""The resource metrics API, as the HPA controller reads it: pods' CPU and memory use.

    GET /apis/metrics.k8s.io/v1beta1/namespaces/web/pods?labelSelector=app%3Dweb
    → PodMetricsList: items[] = {metadata: {name}, timestamp, window: "15.003s",
                                 containers: [{name, usage: {cpu: "250000000n", memory: "1234Ki"}}]}

The API server does not answer this itself: it proxies the group to metrics-server through API
aggregation (APIService v1beta1.metrics.k8s.io). When that is not installed the answer is 404, when
metrics-server is down 503; either way the controller keeps going, and says why in the HPA's
conditions and events, worded as client-go words them ("the server could not find the requested
resource (get pods.metrics.k8s.io)").

One list per sync serves every Resource and ContainerResource metric of the HPA: Kubernetes asks
once per metric, but the answers are the same list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from api.duration import parse_duration
from api.errors import StatusError
from api.quantity import Quantity, QuantityError
from api.timestamps import parse_time
from client import ConnectionFailed, RESTClient
from controller_manager.controllers.hpa_replica_calculator import PodMetric, PodMetricsInfo, ReplicaCalculationError

Obj = Mapping[str, Any]

RESOURCE_METRICS_GROUP_VERSION = "metrics.k8s.io/v1beta1"
_RESOURCE = "pods.metrics.k8s.io"

# client-go's wording for an error answer it has no better message for (NewGenericServerResponse)
_GENERIC_MESSAGES = {
    404: "the server could not find the requested resource",
    503: "the server is currently unable to handle the request",
    500: "an error on the server has prevented the request from succeeding",
    403: "the server does not allow access to the requested resource",
    401: "the server has asked for the client to provide credentials",
    429: "the server has received too many requests and has asked us to try again later",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}


class MetricsUnavailable(Exception):
    """The resource metrics API could not be read; the message is Kubernetes'."""


def describe_failure(exc: Exception, resource: str = _RESOURCE) -> str:
    """An error as client-go's REST client states it: `<message> (get <resource>)`."""
    if isinstance(exc, StatusError):
        return f"{_GENERIC_MESSAGES.get(exc.code) or exc.message} (get {resource})"
    return str(exc)


async def fetch_pod_metrics(client: RESTClient, namespace: str, selector: str) -> list[Obj]:
    """The PodMetrics of the pods `selector` picks in `namespace`."""
    path = f"/apis/{RESOURCE_METRICS_GROUP_VERSION}/namespaces/{namespace}/pods"
    try:
        body = await client.raw("GET", path, params={"labelSelector": selector or None})
    except (StatusError, ConnectionFailed) as exc:
        raise MetricsUnavailable(f"unable to fetch metrics from resource metrics API: {describe_failure(exc)}") from exc
    if not isinstance(body, Mapping):
        raise MetricsUnavailable("unable to fetch metrics from resource metrics API: the server sent no PodMetricsList")
    return list(body.get("items") or [])


def _milli(value: Any) -> int | None:
    try:
        return Quantity(value).milli_value()
    except (QuantityError, TypeError):
        return None


def _sample(item: Obj, value: int) -> PodMetric:
    try:
        window = parse_duration(item.get("window") or 0)
    except ValueError:
        window = 0.0
    return PodMetric(value, parse_time(item.get("timestamp")) or 0.0, window)


def pod_metrics_info(items: Iterable[Obj], resource: str, container: str = "") -> PodMetricsInfo:
    """pod name → its use of `resource` in milli-units (Kubernetes' getPodMetrics and
    getContainerMetrics). A pod whose containers do not all report the resource has no metric;
    with `container`, a pod without that container is an error."""
    out: PodMetricsInfo = {}
    for item in items:
        md = item.get("metadata") or {}
        containers = list(item.get("containers") or [])
        if container:
            found = next((c for c in containers if c.get("name") == container), None)
            if found is None:
                raise ReplicaCalculationError(
                    f"failed to get container metrics: container {container} not present in metrics "
                    f"for pod {md.get('namespace')}/{md.get('name')}"
                )
            value = _milli((found.get("usage") or {}).get(resource))
            if value is not None:
                out[md.get("name", "")] = _sample(item, value)
            continue
        values = [_milli((c.get("usage") or {}).get(resource)) for c in containers]
        if values and all(v is not None for v in values):
            out[md.get("name", "")] = _sample(item, sum(v for v in values if v is not None))
    return out


def resource_metric(items: Sequence[Obj] | None, error: str, resource: str, container: str = "") -> PodMetricsInfo:
    """The metrics for one Resource/ContainerResource metric, or the error Kubernetes' replica
    calculator reports for them ("unable to get metrics for resource cpu: ...")."""
    try:
        if error or items is None:
            raise ReplicaCalculationError(error or "unable to fetch metrics from resource metrics API")
        if not items:
            raise ReplicaCalculationError("no metrics returned from resource metrics API")
        return pod_metrics_info(items, resource, container)
    except ReplicaCalculationError as exc:
        raise ReplicaCalculationError(f"unable to get metrics for resource {resource}: {exc}") from exc
