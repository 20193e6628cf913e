"""LimitRanger: defaults filled into pods (visible in what is stored, with Kubernetes' annotation),
bounds refused with 403 in Kubernetes' words, and the LimitRange object defaulted as Kubernetes
defaults it."""

from __future__ import annotations

from typing import Any

import httpx


def pod(name: str, resources: dict[str, Any] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "nginx"}
    if resources is not None:
        container["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container]}}


def limits(api: httpx.Client, ns: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"metadata": {"name": "limits"}, "spec": {"limits": items}}
    r = api.post(f"/api/v1/namespaces/{ns}/limitranges", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def test_defaults_are_filled_in_and_annotated(api: httpx.Client, ns: str) -> None:
    stored = limits(api, ns, [{"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                               "min": {"cpu": "100m"}}])
    # Kubernetes' defaulting of the LimitRange itself: defaultRequest from default (then from min).
    assert stored["spec"]["limits"][0]["defaultRequest"] == {"cpu": "500m", "memory": "256Mi"}
    r = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("bare"))
    assert r.status_code == 201, r.text
    got = r.json()
    assert got["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "500m", "memory": "256Mi"}}
    assert got["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app")
    assert got["status"]["qosClass"] == "Guaranteed"
    own = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("own", {"limits": {"cpu": "200m"}})).json()
    assert own["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "200m", "memory": "256Mi"}


def test_bounds_are_refused_in_kubernetes_words_and_nothing_is_stored(api: httpx.Client, ns: str) -> None:
    limits(api, ns, [
        {"type": "Container", "min": {"cpu": "100m"}, "max": {"cpu": "1", "memory": "1Gi"},
         "maxLimitRequestRatio": {"cpu": "2"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "5Gi"}},
    ])
    small = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("small", {
        "requests": {"cpu": "50m"}, "limits": {"cpu": "50m", "memory": "64Mi"}}))
    assert small.status_code == 403, small.text
    assert small.json()["message"] == (
        'pods "small" is forbidden: minimum cpu usage per Container is 100m, but request is 50m')
    big = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("big", {
        "requests": {"cpu": "500m"}, "limits": {"cpu": "2", "memory": "2Gi"}}))
    assert big.json()["message"] == (
        'pods "big" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, '
        "maximum memory usage per Container is 1Gi, but limit is 2Gi, "
        "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000]")
    ratio = api.post(f"/api/v1/namespaces/{ns}/pods", json=pod("ratio", {
        "requests": {"cpu": "200m"}, "limits": {"cpu": "800m", "memory": "64Mi"}}))
    assert ratio.json()["message"] == (
        'pods "ratio" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000')
    assert api.get(f"/api/v1/namespaces/{ns}/pods").json()["items"] == []
    claim = {"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                 "resources": {"requests": {"storage": "10Gi"}}}}
    refused = api.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=claim)
    assert refused.status_code == 403 and refused.json()["message"] == (
        'persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, '
        "but request is 10Gi")


def test_kubectl_describe_limits(apiserver: Any, api: httpx.Client, ns: str) -> None:
    import subprocess

    from tests.support.kubectl import kubectl_binary

    limits(api, ns, [{"type": "Container", "max": {"cpu": "1"}, "min": {"cpu": "100m"}}])
    out = subprocess.run([kubectl_binary(), "-s", apiserver.url, "-n", ns, "describe", "limits", "limits"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()]
    # Type, Resource, Min, Max, Default Request, Default Limit, Max Limit/Request Ratio
    # (the default limit came from max, and the default request from that default, not from min)
    assert ["Container", "cpu", "100m", "1", "1", "1", "-"] in rows, out.stdout
