"""The simulated runtime's Service-level load: `simulation.mini-k8s.io/cpu-load` on a Service is
spread over the Service's ready endpoints (kubelet/simusage.py), as a load generator's requests
are spread over a Service's pods.

The Services here have no selector and their Endpoints are written by the test (the way external
services are wired), so no controller-manager is needed: what counts is what the Endpoints say.
Rates are measured as metrics-server does: counter growth over the samples' own timestamps.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.kubelet.conftest import create_pod, unique, wait_pod
from tests.kubelet.test_kubelet_resource_metrics import Sample, container_key, rate, running, scrape
from tests.support.component import wait_for

CPU = "simulation.mini-k8s.io/cpu-usage"
CPU_LOAD = "simulation.mini-k8s.io/cpu-load"
MEMORY_LOAD = "simulation.mini-k8s.io/memory-load"
MI = 1024 * 1024
MERGE = {"Content-Type": "application/merge-patch+json"}


def create_service(api: httpx.Client, name: str, annotations: dict[str, str]) -> None:
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "annotations": annotations},
            "spec": {"ports": [{"port": 80, "targetPort": 80}]}}  # fmt: skip
    r = api.post("/api/v1/namespaces/default/services", json=body)
    assert r.status_code == 201, r.text


def address(pod: dict[str, Any]) -> dict[str, Any]:
    md = pod["metadata"]
    ref = {"kind": "Pod", "namespace": "default", "name": md["name"], "uid": md["uid"]}
    return {"ip": pod["status"]["podIP"], "nodeName": pod["spec"]["nodeName"], "targetRef": ref}


def endpoints(name: str, ready: list[dict[str, Any]], not_ready: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    subset: dict[str, Any] = {"ports": [{"port": 80, "protocol": "TCP"}]}
    if ready:
        subset["addresses"] = [address(p) for p in ready]
    if not_ready:
        subset["notReadyAddresses"] = [address(p) for p in not_ready]
    return {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name}, "subsets": [subset]}


def patch(api: httpx.Client, path: str, body: dict[str, Any]) -> None:
    r = api.patch(path, json=body, headers=MERGE)
    assert r.status_code == 200, r.text


def start_pods(api: httpx.Client, node: str, count: int, **kwargs: Any) -> list[dict[str, Any]]:
    names = [unique("web") for _ in range(count)]
    for name in names:
        create_pod(api, name, node, **kwargs)
    return [wait_pod(api, n, lambda p: running(p) and p["status"].get("podIP")) for n in names]


def rates_settle_at(port: int, expected: dict[tuple[str, str], float], timeout: float = 30.0) -> None:
    """Measure every (pod, container)'s CPU rate over at least a second of samples, again and
    again, until all of them are the expected ones (the first measurement may span the change)."""
    keys = {pc: container_key("container_cpu_usage_seconds_total", *pc) for pc in expected}
    last: dict[tuple[str, str], float] = {}

    def all_sampled(after: dict[Any, Sample] | None = None) -> dict[Any, Sample] | None:
        s = scrape(port)
        if not all(k in s for k in keys.values()):
            return None
        if after is not None and any(s[k].timestamp - after[k].timestamp < 1.0 for k in keys.values()):  # type: ignore[operator]
            return None
        return s

    def measured() -> bool:
        first = wait_for(all_sampled, what="every container's CPU sample")
        later = wait_for(lambda: all_sampled(first), interval=0.1, what="a second of samples")
        assert first is not None and later is not None
        last.update({pc: rate(first[k], later[k]) for pc, k in keys.items()})
        return all(last[pc] == pytest.approx(want, abs=0.005) for pc, want in expected.items())

    try:
        wait_for(measured, timeout=timeout, interval=0.0, what=f"rates {expected}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last measured {last}") from None


def test_a_services_cpu_load_is_spread_over_its_ready_endpoints(api, start_kubelet):
    node = unique("load")
    port = start_kubelet(node).health_port
    a, b, c = start_pods(api, node, 3)
    names = [p["metadata"]["name"] for p in (a, b, c)]
    svc = unique("php")
    create_service(api, svc, {CPU_LOAD: "1"})
    r = api.post("/api/v1/namespaces/default/endpoints", json=endpoints(svc, [a, b], not_ready=[c]))
    assert r.status_code == 201, r.text

    # Two ready endpoints: half a core each; the not-ready one serves nothing.
    rates_settle_at(port, {(names[0], "c"): 0.5, (names[1], "c"): 0.5, (names[2], "c"): 0.0})

    # The third becomes ready: a third of a core each, from the moment the kubelet learns of it.
    key = container_key("container_cpu_usage_seconds_total", names[0])
    before = scrape(port)[key]
    endpoints_path = f"/api/v1/namespaces/default/endpoints/{svc}"
    patch(api, endpoints_path, {"subsets": endpoints(svc, [a, b, c])["subsets"]})
    rates_settle_at(port, {(n, "c"): 1 / 3 for n in names})
    # Across the change the slope was 1/2, then 1/3: the counter kept what it had counted.
    assert 1 / 3 - 0.005 <= rate(before, scrape(port)[key]) <= 0.5 + 0.005

    # The load goes away with its annotation.
    patch(api, f"/api/v1/namespaces/default/services/{svc}", {"metadata": {"annotations": {CPU_LOAD: None}}})
    rates_settle_at(port, {(n, "c"): 0.0 for n in names})


def test_the_load_adds_to_the_pods_own_usage_and_is_split_over_its_containers(api, start_kubelet):
    node = unique("adds")
    port = start_kubelet(node).health_port
    name = unique("two")
    body = {"metadata": {"name": name, "annotations": {CPU: "200m"}}, "spec": {"nodeName": node, "containers": [
        {"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx"}]}}  # fmt: skip
    assert api.post("/api/v1/namespaces/default/pods", json=body).status_code == 201
    pod = wait_pod(api, name, lambda p: running(p) and p["status"].get("podIP"))
    rates_settle_at(port, {(name, "a"): 0.1, (name, "b"): 0.1})  # its own 200m over two containers

    svc = unique("svc")
    create_service(api, svc, {CPU_LOAD: "600m", MEMORY_LOAD: "64Mi"})
    assert api.post("/api/v1/namespaces/default/endpoints", json=endpoints(svc, [pod])).status_code == 201
    rates_settle_at(port, {(name, "a"): 0.4, (name, "b"): 0.4})  # (200m + 600m) / 2
    memory = scrape(port)
    for container in ("a", "b"):  # no memory annotation or request: 8Mi, + half the Service's 64Mi
        assert memory[container_key("container_memory_working_set_bytes", name, container)].value == 40 * MI

    # The Service goes: so does its load (its Endpoints may linger; without a Service they carry none).
    assert api.delete(f"/api/v1/namespaces/default/services/{svc}").status_code == 200
    rates_settle_at(port, {(name, "a"): 0.1, (name, "b"): 0.1})
    assert scrape(port)[container_key("container_memory_working_set_bytes", name, "a")].value == 8 * MI
