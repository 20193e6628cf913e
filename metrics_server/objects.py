"""NodeMetrics and PodMetrics (metrics.k8s.io/v1beta1) as metrics-server writes them on the wire.

    {"kind": "NodeMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
     "metadata": {"name": "node-1", "creationTimestamp": "2024-05-01T10:00:00Z", "labels": {...}},
     "timestamp": "2024-05-01T09:59:58Z", "window": "15.003s",
     "usage": {"cpu": "123456789n", "memory": "1234Ki"}}

    PodMetrics: the same metadata plus `namespace`, and instead of `usage`
     "containers": [{"name": "web", "usage": {"cpu": ..., "memory": ...}}]

- Quantities are Kubernetes' canonical strings, exactly as Go's resource.Quantity prints them:
  CPU is a DecimalSI quantity of nanocores (`123456789n`; a round value shortens: `500m`),
  memory a BinarySI quantity of bytes (`1234Ki`, `8Mi`; not a whole number of KiB: plain bytes).
- `timestamp` and `creationTimestamp` are RFC 3339 to the second (metav1.Time); creationTimestamp
  is "now" (the object is made for the answer), `labels` are the Node's or Pod's own.
- `window` is a Go duration string (metav1.Duration): `15.003s`, `1m0s`, `500ms`.
- In a list (`NodeMetricsList`, `PodMetricsList`, with `metadata: {}`) the items carry no kind and
  apiVersion, as the Kubernetes API machinery writes typed lists.
"""

from __future__ import annotations

import time
from typing import Any

from api.quantity import NANO, Format, Quantity
from api.timestamps import rfc3339
from metrics_server.storage import Usage

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
GROUP_VERSION = f"{GROUP}/{VERSION}"


def go_duration(nanos: int) -> str:
    """Go's time.Duration.String(): `15.003s`, `1m0s`, `2h3m4.5s`, `500ms`, `1.5µs`, `0s`."""
    if nanos == 0:
        return "0s"
    sign, n = ("-" if nanos < 0 else ""), abs(nanos)
    if n < NANO:  # below a second: the largest unit that keeps the integer part non-zero
        for unit, size in (("ms", 10**6), ("µs", 10**3), ("ns", 1)):
            if n >= size:
                return sign + _fraction(n, size) + unit
    hours, rest = divmod(n, 3600 * NANO)
    minutes, rest = divmod(rest, 60 * NANO)
    text = _fraction(rest, NANO) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _fraction(n: int, size: int) -> str:
    whole, frac = divmod(n, size)
    if not frac:
        return str(whole)
    digits = len(str(size)) - 1
    return f"{whole}." + f"{frac:0{digits}d}".rstrip("0")


def usage_list(u: Usage) -> dict[str, str]:
    return {
        "cpu": str(Quantity.from_nanos(u.cpu_nanocores, Format.DECIMAL_SI)),
        "memory": str(Quantity.from_nanos(u.memory_bytes * NANO, Format.BINARY_SI)),
    }


def _metadata(obj: dict[str, Any], namespaced: bool) -> dict[str, Any]:
    md = obj.get("metadata") or {}
    out: dict[str, Any] = {"name": md.get("name", "")}
    if namespaced:
        out["namespace"] = md.get("namespace", "")
    out["creationTimestamp"] = rfc3339(time.time())
    if md.get("labels"):
        out["labels"] = dict(md["labels"])
    return out


def node_metrics(node: dict[str, Any], u: Usage, *, typed: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "NodeMetrics", "apiVersion": GROUP_VERSION} if typed else {}
    out["metadata"] = _metadata(node, namespaced=False)
    out["timestamp"] = rfc3339(u.timestamp_ms / 1000)
    out["window"] = go_duration(u.window_ms * 10**6)
    out["usage"] = usage_list(u)
    return out


def pod_metrics(pod: dict[str, Any], u: Usage, containers: dict[str, Usage], *, typed: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "PodMetrics", "apiVersion": GROUP_VERSION} if typed else {}
    out["metadata"] = _metadata(pod, namespaced=True)
    out["timestamp"] = rfc3339(u.timestamp_ms / 1000)
    out["window"] = go_duration(u.window_ms * 10**6)
    spec = pod.get("spec") or {}
    order = [c.get("name") for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]]
    names = sorted(containers, key=lambda n: (order.index(n) if n in order else len(order), n))  # the pod's order
    out["containers"] = [{"name": name, "usage": usage_list(containers[name])} for name in names]
    return out


def metrics_list(kind: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": kind, "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}
