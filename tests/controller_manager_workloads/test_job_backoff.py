"""The pod failure back-off: the rule at explicit times, then end to end with short flags."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from controller_manager.controllers.job_backoff import (
    DEFAULT_JOB_POD_FAILURE_BACKOFF,
    MAX_JOB_POD_FAILURE_BACKOFF,
    BackoffStore,
    finished_time,
    remaining_time_for_failures,
)
from tests.controller_manager_workloads.conftest import scheduler_and_kubelet
from tests.controller_manager_workloads.test_job import (
    create_job,
    get_job,
    has_condition,
    job_pods,
    ready_nodes,
    simple_job,
)
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace

Obj = dict[str, Any]


def failed_pod(finished_at: str) -> Obj:
    return {
        "metadata": {"creationTimestamp": "2024-01-01T00:00:00Z"},
        "status": {"phase": "Failed", "containerStatuses": [{"state": {"terminated": {"finishedAt": finished_at}}}]},
    }


def test_kubernetes_constants_and_doubling() -> None:
    assert (DEFAULT_JOB_POD_FAILURE_BACKOFF, MAX_JOB_POD_FAILURE_BACKOFF) == (10.0, 600.0)
    waits = [remaining_time_for_failures(100.0, 10, 600, n, 100.0) for n in range(0, 9)]
    assert waits == [0, 10, 20, 40, 80, 160, 320, 600, 600]
    assert remaining_time_for_failures(107.0, 10, 600, 2, 100.0) == 13.0  # counted from the last failure
    assert remaining_time_for_failures(200.0, 10, 600, 2, 100.0) == 0.0


def test_record_counts_failures_since_the_last_success() -> None:
    store = BackoffStore()
    first = store.new_record("ns/j", [], [failed_pod("2024-01-01T00:00:10Z"), failed_pod("2024-01-01T00:00:05Z")])
    assert first.failures_after_last_success == 2 and first.last_failure_time == finished_time(
        failed_pod("2024-01-01T00:00:10Z")
    )
    store.update("ns/j", first)
    succeeded = {"metadata": {}, "status": {"containerStatuses": [{"state": {"terminated": {
        "finishedAt": "2024-01-01T00:00:20Z"}}}]}}  # fmt: skip
    later = failed_pod("2024-01-01T00:00:30Z")
    record = store.new_record("ns/j", [succeeded], [failed_pod("2024-01-01T00:00:15Z"), later])
    assert (record.failures_after_last_success, record.last_failure_time) == (1, finished_time(later))
    assert store.new_record("ns/j", [succeeded], []).failures_after_last_success == 0


@pytest.fixture(scope="module")
def slow_backoff_cluster(
    apiserver: APIServerProcess, start_manager: Callable[..., ComponentProcess]
) -> Iterator[ComponentProcess]:
    """A job controller whose back-off is 2 s doubling (instead of Kubernetes' 10 s)."""
    manager = start_manager(
        "--job-pod-failure-backoff-base", "2s", "--job-pod-failure-backoff-max", "1m", controllers="job"
    )
    with scheduler_and_kubelet(apiserver, "jobnode", kubelet_args=("--job-run-time", "0.5")):
        wait_for(lambda: len(ready_nodes(apiserver)) == 3, what="3 Ready jobnode-* nodes")
        yield manager


def test_replacement_pods_wait_for_the_doubling_back_off(
    api: httpx.Client, slow_backoff_cluster: ComponentProcess
) -> None:
    ns = new_namespace(api, "job-backoff")
    create_job(api, ns, simple_job("flaky", ["sh", "-c", "exit 1"], backoffLimit=2))
    created: dict[str, float] = {}  # pod name → when we first saw it
    failed: dict[str, float] = {}  # pod name → when we first saw it Failed

    def watch() -> bool:
        now = time.monotonic()
        for pod in job_pods(api, ns, "flaky"):
            name = pod["metadata"]["name"]
            created.setdefault(name, now)
            if pod["status"].get("phase") == "Failed":
                failed.setdefault(name, now)
        return has_condition(get_job(api, ns, "flaky"), "Failed")

    wait_for(watch, timeout=30, interval=0.05, what="job flaky Failed")
    order = sorted(created, key=created.__getitem__)
    assert len(order) == 3 and set(failed) == set(order), (created, failed)
    gaps = [created[order[i + 1]] - failed[order[i]] for i in range(2)]
    # finishedAt has whole seconds, so a wait may look up to 1 s shorter than 2 s and 4 s.
    assert gaps[0] >= 0.9 and gaps[1] >= 2.9 and gaps[1] > gaps[0] + 0.9, gaps
    assert get_job(api, ns, "flaky")["status"]["failed"] == 3
