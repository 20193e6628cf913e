"""The pure parts of metrics-server: decoding a kubelet page, the two-point storage, the wire format."""

from __future__ import annotations

import pytest

from metrics_server.decode import MetricsPoint, decode_batch
from metrics_server.objects import go_duration, usage_list
from metrics_server.storage import Storage, Usage

PAGE = """\
# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{{container="a",namespace="ns",pod="web"}} {cpu} {ts}
container_cpu_usage_seconds_total{{container="b",namespace="ns",pod="web"}} {cpu} {ts}
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{{container="a",namespace="ns",pod="web"}} 1.048576e+06 {ts}
container_memory_working_set_bytes{{container="b",namespace="ns",pod="web"}} 2048 {ts}
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{{container="a",namespace="ns",pod="web"}} {start}
container_start_time_seconds{{container="b",namespace="ns",pod="web"}} 1000
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total {cpu} {ts}
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 4096 {ts}
"""


def page(cpu: float, ts_ms: int, start: float = 1000) -> str:
    return PAGE.format(cpu=cpu, ts=ts_ms, start=start)


def test_a_page_decodes_into_node_and_container_points_with_their_own_timestamps() -> None:
    batch = decode_batch(page(1.5, 2_000_000), "n1", default_ms=9)
    assert batch.nodes == {"n1": MetricsPoint(2_000_000, 1_500_000_000, 4096)}
    assert batch.pods[("ns", "web")]["a"] == MetricsPoint(2_000_000, 1_500_000_000, 1048576, 1000.0)
    assert set(batch.pods[("ns", "web")]) == {"a", "b"}


def test_an_incomplete_container_drops_its_whole_pod_and_samples_without_time_take_the_scrape_time() -> None:
    text = page(1.0, 2_000_000).replace('container_memory_working_set_bytes{container="b",namespace="ns",pod="web"} '
                                        "2048 2000000\n", "").replace(" 4096 2000000", " 4096")  # fmt: skip
    batch = decode_batch(text, "n1", default_ms=7)
    assert batch.pods == {}
    assert batch.nodes["n1"].timestamp_ms == 7  # the memory sample came last, without a timestamp


def test_usage_needs_two_points_and_is_the_counter_rate_between_their_timestamps() -> None:
    storage = Storage(metric_resolution=60)
    storage.store(decode_batch(page(10.0, 2_000_000), "n1", 0))
    assert storage.node_usage("n1") is None and storage.pod_usage("ns", "web") is None
    storage.store(decode_batch(page(10.5, 2_001_000), "n1", 0))
    assert storage.node_usage("n1") == Usage(2_001_000, 1000, 500_000_000, 4096)
    window, containers = storage.pod_usage("ns", "web") or (None, {})
    assert window == Usage(2_001_000, 1000, 500_000_000, 1048576)
    assert containers["b"].memory_bytes == 2048


def test_a_restarted_container_starts_over_and_a_falling_counter_is_skipped() -> None:
    storage = Storage(metric_resolution=60)
    storage.store(decode_batch(page(10.0, 2_000_000), "n1", 0))
    storage.store(decode_batch(page(10.5, 2_001_000), "n1", 0))
    storage.store(decode_batch(page(0.1, 2_002_000, start=2_001.5), "n1", 0))  # "a" restarted at 2001.5 s
    assert storage.pod_usage("ns", "web") is None  # "a" has no previous point: all or nothing
    assert storage.node_usage("n1") is None  # the node's counter went down: skipped, as upstream
    storage.store(decode_batch(page(0.3, 2_003_000, start=2_001.5), "n1", 0))
    assert storage.pod_usage("ns", "web") is not None


def test_a_node_missing_from_a_cycle_is_forgotten() -> None:
    storage = Storage(metric_resolution=60)
    storage.store(decode_batch(page(1.0, 2_000_000), "n1", 0))
    storage.store(decode_batch(page(2.0, 2_001_000), "n1", 0))
    storage.store(decode_batch("", "n2", 0))  # n1's kubelet did not answer
    storage.store(decode_batch(page(3.0, 2_003_000), "n1", 0))
    assert storage.node_usage("n1") is None


@pytest.mark.parametrize(
    ("nanos", "text"),
    [(0, "0s"), (15_003_000_000, "15.003s"), (60 * 10**9, "1m0s"), (75_500_000_000, "1m15.5s"),
     (3_723 * 10**9, "1h2m3s"), (500_000_000, "500ms"), (1_500, "1.5µs"), (7, "7ns"), (1_000_000_001, "1.000000001s")],
)  # fmt: skip
def test_windows_print_as_go_durations(nanos: int, text: str) -> None:
    assert go_duration(nanos) == text


def test_usage_prints_cpu_in_nanocores_and_memory_in_binary_units_as_go_does() -> None:
    assert usage_list(Usage(0, 1000, 123_456_789, 1_263_616)) == {"cpu": "123456789n", "memory": "1234Ki"}
    assert usage_list(Usage(0, 1000, 500_000_000, 8 << 20)) == {"cpu": "500m", "memory": "8Mi"}
    assert usage_list(Usage(0, 1000, 0, 1000)) == {"cpu": "0", "memory": "1k"}
