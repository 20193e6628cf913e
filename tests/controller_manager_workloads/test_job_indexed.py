"""Indexed Jobs end to end (the processes of test_job.py), and the interval format they record."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import httpx

from controller_manager.controllers.job_indexed import format_intervals, parse_intervals
from tests.controller_manager_workloads.test_job import (  # noqa: F401  (job_cluster is a fixture)
    JOB_MANAGER_FLAGS,
    create_job,
    get_job,
    job_cluster,
    job_pods,
    simple_job,
    wait_condition,
)
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace

INDEX = "batch.kubernetes.io/job-completion-index"


def test_intervals_round_trip_in_kubernetes_form() -> None:
    assert format_intervals({0, 1, 2, 4, 7, 8, 9}) == "0-2,4,7-9"
    assert parse_intervals("0-2,4,7-9") == {0, 1, 2, 4, 7, 8, 9}
    assert format_intervals(set()) == "" and parse_intervals(None) == set()


def succeeded_per_index(api: httpx.Client, ns: str, name: str) -> Counter[int]:
    return Counter(
        int(p["metadata"]["annotations"][INDEX])
        for p in job_pods(api, ns, name)
        if p["status"].get("phase") == "Succeeded"
    )


def test_each_index_runs_once_with_its_identity(
    api: httpx.Client, job_cluster: ComponentProcess  # noqa: F811
) -> None:
    ns = new_namespace(api, "job-idx")
    create_job(api, ns, simple_job("idx", ["sh", "-c", "echo $JOB_COMPLETION_INDEX"], completions=5, parallelism=2,
                                   completionMode="Indexed"))  # fmt: skip
    job = wait_condition(api, ns, "idx", "Complete", timeout=60)
    assert (job["status"]["succeeded"], job["status"]["completedIndexes"]) == (5, "0-4")
    assert succeeded_per_index(api, ns, "idx") == Counter({0: 1, 1: 1, 2: 1, 3: 1, 4: 1})
    pod = next(p for p in job_pods(api, ns, "idx") if p["metadata"]["annotations"][INDEX] == "3")
    assert pod["metadata"]["labels"][INDEX] == "3"
    assert pod["metadata"]["name"].startswith("idx-3-") and pod["spec"]["hostname"] == "idx-3"
    (env,) = [e for e in pod["spec"]["containers"][0]["env"] if e["name"] == "JOB_COMPLETION_INDEX"]
    assert env["valueFrom"]["fieldRef"]["fieldPath"] == f"metadata.annotations['{INDEX}']"


def test_no_index_runs_twice_to_success_across_a_controller_manager_kill(
    api: httpx.Client,
    apiserver: APIServerProcess,
    job_cluster: ComponentProcess,  # noqa: F811
    start_manager: Callable[..., ComponentProcess],
) -> None:
    ns = new_namespace(api, "job-idx")
    create_job(api, ns, simple_job("many", ["sh", "-c", "true"], completions=100, parallelism=10,
                                   completionMode="Indexed"))  # fmt: skip  # issue 13: a 100-completion job
    wait_for(lambda: sum(succeeded_per_index(api, ns, "many").values()) >= 25, timeout=60, what="some indexes done")
    job_cluster.kill()  # SIGKILL, mid-way
    start_manager(*JOB_MANAGER_FLAGS, controllers="job")
    job = wait_condition(api, ns, "many", "Complete", timeout=90)
    per_index = succeeded_per_index(api, ns, "many")
    assert sorted(per_index) == list(range(100)) and set(per_index.values()) == {1}, per_index
    assert (job["status"]["succeeded"], job["status"]["completedIndexes"]) == (100, "0-99")
