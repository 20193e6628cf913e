"""`GET /metrics/resource`: the kubelet's resource usage in Prometheus text, as metrics-server reads it.

Rates are asserted the way metrics-server computes them: the growth of a counter divided by the
difference of the two samples' own timestamps (never by how long the test waited).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.kubelet.conftest import create_pod, get, pod_path, unique, wait_pod
from tests.support.component import wait_for

CPU = "simulation.mini-k8s.io/cpu-usage"
MEMORY = "simulation.mini-k8s.io/memory-usage"
MI = 1024 * 1024
FAMILIES = {  # name: (type, help text), as Kubernetes' kubelet writes them
    "container_cpu_usage_seconds_total": ("counter", "Cumulative cpu time consumed by the container in core-seconds"),
    "container_memory_working_set_bytes": ("gauge", "Current working set of the container in bytes"),
    "container_start_time_seconds": ("gauge", "Start time of the container since unix epoch in seconds"),
    "node_cpu_usage_seconds_total": ("counter", "Cumulative cpu time consumed by the node in core-seconds"),
    "node_memory_working_set_bytes": ("gauge", "Current working set of the node in bytes"),
    "pod_cpu_usage_seconds_total": ("counter", "Cumulative cpu time consumed by the pod in core-seconds"),
    "pod_memory_working_set_bytes": ("gauge", "Current working set of the pod in bytes"),
    "resource_scrape_error": ("gauge", "1 if there was an error while getting container metrics, 0 otherwise"),
}


@dataclass(frozen=True)
class Sample:
    value: float
    timestamp: float | None


def scrape(port: int, node: str | None = None) -> dict[tuple[str, tuple[tuple[str, str], ...]], Sample]:
    """{(sample name, sorted labels): Sample} from one GET of /metrics/resource."""
    resp = httpx.get(f"http://127.0.0.1:{port}/metrics/resource", params={"node": node} if node else None)
    resp.raise_for_status()
    out = {}
    for family in text_string_to_metric_families(resp.text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = Sample(s.value, s.timestamp)
    return out


def container_key(name: str, pod: str, container: str = "c", namespace: str = "default") -> tuple[str, tuple]:
    return name, (("container", container), ("namespace", namespace), ("pod", pod))


def rate(first: Sample, second: Sample) -> float:
    assert first.timestamp is not None and second.timestamp is not None
    return (second.value - first.value) / (second.timestamp - first.timestamp)


def later_sample(port: int, node: str, key: tuple, after: Sample, seconds: float = 1.0) -> Sample:
    """Poll until the sample under `key` is at least `seconds` newer (by its timestamp) than `after`."""

    def newer() -> Sample | None:
        s = scrape(port, node).get(key)
        return s if s is not None and s.timestamp - after.timestamp >= seconds else None

    return wait_for(newer, timeout=20, interval=0.1, what=f"a sample {seconds}s newer")


def running(pod: dict) -> bool:
    return pod.get("status", {}).get("phase") == "Running"


# ---------------------------------------------------------------- the simulated runtime


def test_an_annotated_pods_cpu_counter_grows_at_its_rate_and_keeps_it_across_a_change(api, start_kubelet):
    node = unique("rm")
    port = start_kubelet(node).health_port
    name = unique("busy")
    create_pod(api, name, node, metadata={"annotations": {CPU: "500m", MEMORY: "64Mi"}})
    wait_pod(api, name, running)
    key = container_key("container_cpu_usage_seconds_total", name)
    first = wait_for(lambda: scrape(port).get(key), what="the container's CPU sample")
    second = later_sample(port, node, key, first)
    assert rate(first, second) == pytest.approx(0.5, rel=0.01)
    samples = scrape(port)
    assert samples[container_key("container_memory_working_set_bytes", name)].value == 64 * MI
    start = samples[container_key("container_start_time_seconds", name)]
    assert start.timestamp is None and start.value <= second.timestamp
    pod_key = ("pod_cpu_usage_seconds_total", (("namespace", "default"), ("pod", name)))
    assert samples[pod_key].value >= second.value

    # Three times the load from now on: the counter keeps what it had and grows faster.
    patch = {"metadata": {"annotations": {CPU: "1500m"}}}
    r = api.patch(pod_path(name), json=patch, headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    seen = [second]

    def at_the_new_rate() -> bool:  # a full second after the kubelet saw the change
        s = later_sample(port, node, key, seen[-1])
        seen.append(s)
        return rate(seen[-2], s) == pytest.approx(1.5, rel=0.01)

    wait_for(at_the_new_rate, timeout=30, what="1.5 cores")
    # Across the change the slope was 0.5 before it and 1.5 after: the counter kept its past (a
    # counter recomputed as new rate x age would jump by a whole extra core-second per second of age).
    assert 0.5 - 0.01 <= rate(second, seen[1]) <= 1.5 + 0.01


def test_cpu_and_memory_are_split_over_running_containers_with_defaults_and_the_node_adds_up(api, start_kubelet):
    node = unique("split")
    port = start_kubelet(node).health_port
    name = unique("two")
    body = {"metadata": {"name": name, "annotations": {CPU: "1"}}, "spec": {"nodeName": node, "containers": [
        {"name": "a", "image": "nginx"},
        {"name": "b", "image": "nginx", "resources": {"requests": {"memory": "32Mi"}}},
    ]}}  # fmt: skip
    assert api.post("/api/v1/namespaces/default/pods", json=body).status_code == 201
    wait_pod(api, name, running)
    idle = unique("idle")
    create_pod(api, idle, node)
    wait_pod(api, idle, running)
    key_a = container_key("container_cpu_usage_seconds_total", name, "a")
    key_node = ("node_cpu_usage_seconds_total", ())
    first = wait_for(lambda: (s := scrape(port)) and key_a in s and container_key(
        "container_cpu_usage_seconds_total", idle) in s and s, what="both pods' samples")  # fmt: skip
    later = wait_for(lambda: (s := scrape(port)) and s[key_a].timestamp - first[key_a].timestamp >= 1.0 and s,
                     interval=0.1, what="a second of samples")  # fmt: skip
    assert rate(first[key_a], later[key_a]) == pytest.approx(0.5, rel=0.01)  # 1 core over two containers
    key_b = container_key("container_cpu_usage_seconds_total", name, "b")
    assert rate(first[key_b], later[key_b]) == pytest.approx(0.5, rel=0.01)
    assert later[container_key("container_cpu_usage_seconds_total", idle)].value == 0  # no annotation: idle
    memory = {c: later[container_key("container_memory_working_set_bytes", p, c)].value
              for p, c in ((name, "a"), (name, "b"), (idle, "c"))}  # fmt: skip
    assert memory == {"a": 8 * MI, "b": 32 * MI, "c": 8 * MI}  # the request, else 8Mi
    # the node: its pods plus a fixed overhead (50m, 256Mi) - so at least its pods' 1 core
    assert rate(first[key_node], later[key_node]) == pytest.approx(1.05, rel=0.01)
    assert later[("node_memory_working_set_bytes", ())].value == 256 * MI + 48 * MI
    assert later[("resource_scrape_error", ())].value == 0


def test_the_page_uses_kubernetes_names_help_texts_and_millisecond_timestamps(api, start_kubelet):
    node = unique("names")
    port = start_kubelet(node).health_port
    name = unique("p")
    create_pod(api, name, node)
    wait_pod(api, name, running)
    text = wait_for(lambda: (t := httpx.get(f"http://127.0.0.1:{port}/metrics/resource").text)
                    and f'pod="{name}"' in t and t)  # fmt: skip
    for family, (kind, help_text) in FAMILIES.items():
        assert f"# HELP {family} [STABLE] {help_text}\n# TYPE {family} {kind}\n" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("container_cpu_usage_seconds_total{"))
    assert line.startswith(f'container_cpu_usage_seconds_total{{container="c",namespace="default",pod="{name}"}} ')
    assert len(line.rsplit(" ", 1)[1]) == 13  # a timestamp in milliseconds
    assert httpx.get(f"http://127.0.0.1:{port}/metrics/resource").headers["content-type"].startswith("text/plain")


def test_a_kubelet_with_many_nodes_needs_the_node_parameter(api, start_kubelet):
    base = unique("many")
    port = start_kubelet(base, "--nodes", "2").health_port
    name = unique("p")
    create_pod(api, name, f"{base}-1", metadata={"annotations": {MEMORY: "10Mi"}})
    wait_pod(api, name, running)
    url = f"http://127.0.0.1:{port}/metrics/resource"
    missing = httpx.get(url)
    assert missing.status_code == 400 and "?node=" in missing.text
    unknown = httpx.get(url, params={"node": "elsewhere"})
    assert unknown.status_code == 404 and "elsewhere" in unknown.text
    key = container_key("container_memory_working_set_bytes", name)
    assert wait_for(lambda: scrape(port, f"{base}-1").get(key)).value == 10 * MI
    assert key not in scrape(port, f"{base}-0")  # each node reports its own pods only
    summary = httpx.get(f"http://127.0.0.1:{port}/stats/summary", params={"node": f"{base}-1"}).json()
    assert summary["node"]["nodeName"] == f"{base}-1"
    assert [p["podRef"]["name"] for p in summary["pods"]] == [name]
    assert summary["pods"][0]["containers"][0]["memory"]["workingSetBytes"] == 10 * MI


def test_a_single_node_kubelet_answers_without_and_with_its_node_name(api, start_kubelet):
    node = unique("one")
    port = start_kubelet(node).health_port
    url = f"http://127.0.0.1:{port}/metrics/resource"
    wait_for(lambda: get(api, f"/api/v1/nodes/{node}"))
    assert httpx.get(url).status_code == 200
    assert ("node_cpu_usage_seconds_total", ()) in scrape(port, node)
    assert httpx.get(url, params={"node": "other"}).status_code == 404


# ---------------------------------------------------------------- the process runtime


def _random_pod_cidr() -> str:
    return f"10.{random.randint(200, 207)}.{random.randint(0, 255)}.0/24"


@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0, reason="the process runtime needs Linux and root")
def test_process_runtime_reports_a_busy_loop_near_one_core_and_a_sleeper_near_zero(api, start_kubelet, tmp_path):
    node = unique("proc")
    root = tmp_path / "kubelet-root"
    port = start_kubelet(node, "--runtime", "process", "--root-dir", str(root),
                         "--pod-cidr", _random_pod_cidr()).health_port  # fmt: skip
    busy, idle = unique("busy"), unique("idle")
    try:
        create_pod(api, busy, node, image="busybox", command=["sh", "-c", "while :; do :; done"])
        create_pod(api, idle, node, image="busybox", command=["sleep", "3600"])
        wait_pod(api, busy, running, timeout=30)
        wait_pod(api, idle, running, timeout=30)
        busy_key = container_key("container_cpu_usage_seconds_total", busy)
        idle_key = container_key("container_cpu_usage_seconds_total", idle)
        first = wait_for(lambda: (s := scrape(port)) and busy_key in s and idle_key in s and s,
                         what="both containers measured")  # fmt: skip
        later = wait_for(lambda: (s := scrape(port)) and s[busy_key].timestamp - first[busy_key].timestamp >= 2.0
                         and s, interval=0.2, timeout=30, what="two seconds of samples")  # fmt: skip
        busy_rate = rate(first[busy_key], later[busy_key])
        # one core at most; how much less depends on what else the two cores run (a loaded CI run
        # measured 0.34), so the floor only says "clearly busy": far above the sleeper's ceiling
        assert 0.1 <= busy_rate <= 1.1
        assert rate(first[idle_key], later[idle_key]) <= 0.05
        for pod in (busy, idle):
            assert later[container_key("container_memory_working_set_bytes", pod)].value > 0
        node_rate = rate(first[("node_cpu_usage_seconds_total", ())], later[("node_cpu_usage_seconds_total", ())])
        assert node_rate >= busy_rate - 0.01  # its pods, plus the kubelet itself (one /proc snapshot for all)
    finally:
        for pod in (busy, idle):
            api.delete(pod_path(pod), params={"gracePeriodSeconds": 0})
        subprocess.run([sys.executable, "-m", "kubelet.cleanup", "--root-dir", str(root)], check=False,
                       capture_output=True, cwd=Path(__file__).resolve().parents[2])  # fmt: skip
