"""backoffLimitPerIndex, maxFailedIndexes and the FailIndex action of Indexed Jobs: the rules at explicit
pod states, the API server's validation and defaulting, then end to end (a real API server,
controller-manager with a 2 s pod failure back-off, scheduler and kubelet). Where each index must
behave differently, the pods are put on a node nobody serves and the test plays the kubelet."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from controller_manager.controllers.job_backoff_per_index import (
    calculate_failed_indexes,
    indexes_to_create_now,
    is_index_failed,
    new_failure_counts,
    pods_with_delayed_deletion,
)
from controller_manager.controllers.job_indexed import format_intervals
from tests.controller_manager_workloads.conftest import scheduler_and_kubelet
from tests.controller_manager_workloads.test_job import (
    condition,
    create_job,
    get_job,
    job_pods,
    jobs_path,
    ready_nodes,
    simple_job,
    wait_condition,
    wait_events,
)
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace

Obj = dict[str, Any]
INDEX = "batch.kubernetes.io/job-completion-index"
COUNT = "batch.kubernetes.io/job-index-failure-count"
IGNORED = "batch.kubernetes.io/job-index-ignored-failure-count"
FINALIZER = "batch.kubernetes.io/job-tracking"
FAIL_INDEX_ON_42 = {"rules": [
    {"action": "FailIndex", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
]}  # fmt: skip
BASE = 2.0  # the manager's --job-pod-failure-backoff-base


# ------------------------------------------------------------------------- the rules, no processes
def pod(index: int, phase: str, exit_code: int = 1, count: int = 0, finished: str = "2024-01-01T00:00:10Z",
        uid: str = "u", conditions: list[Obj] | None = None) -> Obj:  # fmt: skip
    return {
        "metadata": {"uid": uid, "namespace": "ns", "name": f"p{index}", "finalizers": [FINALIZER],
                     "annotations": {INDEX: str(index), COUNT: str(count)}},
        "status": {"phase": phase, "conditions": conditions or [], "containerStatuses": [
            {"name": "main", "state": {"terminated": {"exitCode": exit_code, "finishedAt": finished}}}]},
    }  # fmt: skip


def indexed(**spec: Any) -> Obj:
    return {"spec": {"completionMode": "Indexed", "completions": 4, "backoffLimitPerIndex": 1, **spec}, "status": {}}


def test_an_index_fails_when_its_budget_is_used_up_or_by_a_fail_index_rule() -> None:
    job = indexed(podFailurePolicy=FAIL_INDEX_ON_42)
    assert not is_index_failed(job, pod(0, "Failed", count=0))  # first failure: one retry left
    assert is_index_failed(job, pod(0, "Failed", count=1))  # backoffLimitPerIndex 1 used up
    assert is_index_failed(job, pod(0, "Failed", exit_code=42, count=0))  # FailIndex: at once
    disrupted = pod(0, "Failed", count=5, conditions=[{"type": "DisruptionTarget", "status": "True"}])
    assert not is_index_failed(job, disrupted)  # ignored failures never fail an index
    assert not is_index_failed(job, pod(0, "Running", count=9))
    job["status"]["failedIndexes"] = "3"
    pods = [pod(0, "Failed", exit_code=42), pod(1, "Failed"), pod(2, "Succeeded")]
    assert calculate_failed_indexes(job, pods) == {0, 3}
    # The replacement's annotations: counted failures, and ignored ones apart.
    assert new_failure_counts(job, None) == (0, 0)
    assert new_failure_counts(job, pod(1, "Failed", count=1)) == (2, 0)
    assert new_failure_counts(job, disrupted) == (5, 1)
    assert format_intervals({0, 1}) == "0,1" and format_intervals({0, 1, 2, 5, 6}) == "0-2,5,6"  # Kubernetes' form


def test_the_failed_pod_is_kept_until_its_index_is_replaced_and_backs_off_per_index() -> None:
    job = indexed()
    old, new = pod(1, "Failed", count=0, uid="a"), pod(1, "Failed", count=1, uid="b", finished="2024-01-01T00:01:00Z")
    other = pod(2, "Failed", uid="c")
    delayed = pods_with_delayed_deletion(job, [old, new, other], [], set(), set())
    assert {i: p["metadata"]["uid"] for i, p in delayed.items()} == {1: "b", 2: "c"}  # the latest per index
    running = pod(2, "Running", uid="d")
    assert set(pods_with_delayed_deletion(job, [new, other, running], [running], set(), set())) == {1}
    assert pods_with_delayed_deletion(job, [new], [], {1}, set()) == {}  # a done index is not retried
    assert pods_with_delayed_deletion(job, [new], [], set(), {"b"}) == {}  # its finalizer is going already
    # Index 1 failed twice (back-off 20 s from 00:01:00), index 2 once (10 s from 00:00:10).
    t0 = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
    assert indexes_to_create_now([1, 2, 3], delayed, t0 + 65, 10, 600) == ([2, 3], 0.0)
    assert indexes_to_create_now([1, 2], delayed, t0 + 15, 10, 600) == ([], 5.0)
    assert indexes_to_create_now([1], delayed, t0 + 81, 10, 600) == ([1], 0.0)


# ------------------------------------------------------------------------- the API server
def test_api_server_validates_and_defaults_as_kubernetes(api: httpx.Client) -> None:
    ns = new_namespace(api, "job-bpi")

    def job(name: str, **spec: Any) -> Obj:
        return simple_job(name, ["true"], completionMode="Indexed", completions=3, **spec)

    fail_index = simple_job("f", ["true"], completionMode="Indexed", completions=2, podFailurePolicy={"rules": [
        {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}}]})  # fmt: skip
    cases = [
        (simple_job("a", ["true"], backoffLimitPerIndex=1, maxFailedIndexes=1),
         ["spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
          "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode"]),
        (job("b", maxFailedIndexes=1),
         ["spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"]),
        (job("c", backoffLimitPerIndex=1, maxFailedIndexes=4),
         ["spec.maxFailedIndexes: Invalid value: 4: must be less than or equal to completions"]),
        (job("d", backoffLimitPerIndex=-1, maxFailedIndexes=-1),
         ["spec.backoffLimitPerIndex: Invalid value: -1: must be greater than or equal to 0",
          "spec.maxFailedIndexes: Invalid value: -1: must be greater than or equal to 0"]),
        (simple_job("e", ["true"], completionMode="Indexed", completions=200_000, backoffLimitPerIndex=1,
                    maxFailedIndexes=150_000),
         ["spec.maxFailedIndexes: Invalid value: 150000: must be less than or equal to 100000",
          "spec.maxFailedIndexes: Invalid value: 150000: must be less than or equal to 10000 when completions "
          "are above 100000 and used with backoff limit per index"]),
        (fail_index, ['spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the '
                      "backoffLimitPerIndex to be set"]),
    ]  # fmt: skip
    for manifest, messages in cases:
        resp = api.post(jobs_path(ns), json=manifest)
        assert resp.status_code == 422, resp.text
        for message in messages:
            assert message in resp.json()["message"], (message, resp.json()["message"])
    high = simple_job("g", ["true"], completionMode="Indexed", completions=100_001, backoffLimitPerIndex=1)
    assert "spec.maxFailedIndexes: Required value: must be specified when completions is above 100000" in (
        api.post(jobs_path(ns), json=high).json()["message"]
    )
    # FailIndex is fine with backoffLimitPerIndex; backoffLimit then defaults to MaxInt32 (unless given).
    fail_index["spec"]["backoffLimitPerIndex"] = 0
    assert create_job(api, ns, fail_index)["spec"]["backoffLimit"] == 2147483647
    assert create_job(api, ns, job("h", backoffLimitPerIndex=1, backoffLimit=3))["spec"]["backoffLimit"] == 3
    assert create_job(api, ns, job("i"))["spec"]["backoffLimit"] == 6
    # backoffLimitPerIndex is immutable.
    resp = api.patch(f"{jobs_path(ns)}/h", json={"spec": {"backoffLimitPerIndex": 2}},
                     headers={"Content-Type": "application/merge-patch+json"})  # fmt: skip
    assert resp.status_code == 422 and "spec.backoffLimitPerIndex: Invalid value: 2: field is immutable" in resp.text


# ------------------------------------------------------------------------- end to end
@pytest.fixture(scope="module")
def per_index_cluster(
    apiserver: APIServerProcess, start_manager: Callable[..., ComponentProcess]
) -> Iterator[ComponentProcess]:
    manager = start_manager(
        "--job-pod-failure-backoff-base", f"{BASE}s", "--job-pod-failure-backoff-max", "1m", controllers="job"
    )
    with scheduler_and_kubelet(apiserver, "jobnode", kubelet_args=("--job-run-time", "0.5")):
        wait_for(lambda: len(ready_nodes(apiserver)) == 3, what="3 Ready jobnode-* nodes")
        yield manager


def index_pods(api: httpx.Client, ns: str, name: str, index: int) -> list[Obj]:
    """The pods of one index, oldest first (each replacement counts one failure more)."""
    pods = [p for p in job_pods(api, ns, name) if p["metadata"]["annotations"].get(INDEX) == str(index)]
    return sorted(pods, key=lambda p: (int(p["metadata"]["annotations"].get(COUNT, "0")),
                                       int(p["metadata"]["annotations"].get(IGNORED, "0"))))  # fmt: skip


def failure_counts(api: httpx.Client, ns: str, name: str, index: int) -> list[str]:
    return [p["metadata"]["annotations"].get(COUNT, "") for p in index_pods(api, ns, name, index)]


def assert_failed(job: Obj, reason: str, message: str) -> None:
    for type_ in ("FailureTarget", "Failed"):
        cond = condition(job, type_)
        assert cond is not None and (cond["reason"], cond["message"]) == (reason, message), job["status"]


def test_every_index_fails_on_its_own_budget(api: httpx.Client, per_index_cluster: ComponentProcess) -> None:
    ns = new_namespace(api, "job-bpi")
    job = create_job(api, ns, simple_job("flaky", ["sh", "-c", "exit 1"], completionMode="Indexed", completions=3,
                                         parallelism=3, backoffLimitPerIndex=1))  # fmt: skip
    done = wait_condition(api, ns, "flaky", "Failed", timeout=30)
    assert_failed(done, "FailedIndexes", "Job has failed indexes")
    status = done["status"]
    assert (status["failedIndexes"], status["failed"], status.get("completedIndexes", "")) == ("0-2", 6, "")
    for index in range(3):  # one retry each, the replacement carrying the count of its predecessor
        assert failure_counts(api, ns, "flaky", index) == ["0", "1"]
    wait_events(api, ns, job["metadata"]["uid"],
                lambda ev: ("Warning", "FailedIndexes", "Job has failed indexes") in ev)  # fmt: skip
    wait_for(lambda: not any(FINALIZER in (p["metadata"].get("finalizers") or []) for p in job_pods(api, ns, "flaky")),
             what="every finalizer removed")  # fmt: skip


def test_more_failed_indexes_than_max_failed_indexes_fail_the_job(
    api: httpx.Client, per_index_cluster: ComponentProcess
) -> None:
    ns = new_namespace(api, "job-bpi")
    create_job(api, ns, simple_job("fragile", ["sh", "-c", "exit 1"], completionMode="Indexed", completions=4,
                                   parallelism=1, backoffLimitPerIndex=0, maxFailedIndexes=1))  # fmt: skip
    done = wait_condition(api, ns, "fragile", "Failed", timeout=30)
    assert_failed(done, "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes")
    assert (done["status"]["failedIndexes"], done["status"]["failed"]) == ("0,1", 2)
    assert sorted(p["metadata"]["annotations"][INDEX] for p in job_pods(api, ns, "fragile")) == ["0", "1"]


def ghost_job(name: str, **spec: Any) -> Obj:
    """An Indexed job whose pods land on a node nobody serves: the test decides how each one ends."""
    manifest = simple_job(name, ["sleep", "300"], completionMode="Indexed", **spec)
    pod_spec = manifest["spec"]["template"]["spec"]
    pod_spec["nodeName"] = "ghost-node"
    pod_spec["containers"][0]["name"] = "main"
    return manifest


def finish(api: httpx.Client, ns: str, pod: Obj, exit_code: int, finished_at: float | None = None) -> None:
    """Play the kubelet: the pod's container exited with `exit_code` (at `finished_at`, default long ago)."""
    when = datetime.fromtimestamp(finished_at, UTC).isoformat() if finished_at else "2024-01-01T00:00:00Z"
    fresh = api.get(f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}").json()
    fresh["status"] = {
        "phase": "Succeeded" if exit_code == 0 else "Failed",
        "containerStatuses": [{"name": "main", "ready": False, "restartCount": 0, "image": "busybox", "imageID": "",
                               "state": {"terminated": {"exitCode": exit_code, "finishedAt": when}}}],
    }  # fmt: skip
    resp = api.put(f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}/status", json=fresh)
    assert resp.status_code == 200, resp.text


def nth_pod(api: httpx.Client, ns: str, name: str, index: int, n: int, timeout: float = 10.0) -> Obj:
    """The n-th pod (1-based) of an index, once it exists."""
    pods = wait_for(lambda: (p := index_pods(api, ns, name, index)) and len(p) >= n and p, timeout=timeout,
                    interval=0.05, what=f"pod #{n} of index {index}")  # fmt: skip
    assert pods
    return pods[n - 1]  # type: ignore[no-any-return]


def test_fail_index_rule_fails_only_that_index(api: httpx.Client, per_index_cluster: ComponentProcess) -> None:
    ns = new_namespace(api, "job-bpi")
    create_job(api, ns, ghost_job("mixed", completions=3, parallelism=3, backoffLimitPerIndex=1,
                                  podFailurePolicy=FAIL_INDEX_ON_42))  # fmt: skip
    first = [nth_pod(api, ns, "mixed", i, 1) for i in range(3)]
    assert [p["metadata"]["annotations"][COUNT] for p in first] == ["0", "0", "0"]
    finish(api, ns, first[0], 42)  # FailIndex: index 0 fails at once, its one retry unused
    wait_for(lambda: get_job(api, ns, "mixed")["status"].get("failedIndexes") == "0", what="failedIndexes 0")
    finish(api, ns, first[1], 1)  # counted: index 1 is retried, its replacement says so
    second = nth_pod(api, ns, "mixed", 1, 2)
    assert second["metadata"]["annotations"][COUNT] == "1"
    wait_for(lambda: FINALIZER not in (index_pods(api, ns, "mixed", 1)[0]["metadata"].get("finalizers") or []),
             what="the replaced pod's finalizer removed once its replacement exists")  # fmt: skip
    finish(api, ns, second, 0)
    finish(api, ns, first[2], 0)
    done = wait_condition(api, ns, "mixed", "Failed")
    assert_failed(done, "FailedIndexes", "Job has failed indexes")
    status = done["status"]
    assert (status["failedIndexes"], status["completedIndexes"], status["failed"], status["succeeded"]) == (
        "0", "1,2", 2, 2)  # fmt: skip
    assert len(index_pods(api, ns, "mixed", 0)) == 1  # a failed index gets no new pod


def test_the_back_off_is_counted_per_index(api: httpx.Client, per_index_cluster: ComponentProcess) -> None:
    ns = new_namespace(api, "job-bpi")
    create_job(api, ns, ghost_job("steady", completions=2, parallelism=2, backoffLimitPerIndex=2))
    a1, b1 = nth_pod(api, ns, "steady", 0, 1), nth_pod(api, ns, "steady", 1, 1)
    failed_at = time.time()
    finish(api, ns, a1, 1, failed_at)
    a2 = nth_pod(api, ns, "steady", 0, 2)
    first_wait = time.time() - failed_at
    assert first_wait >= BASE - 0.1, first_wait  # index 0's first failure: 2 s
    # Index 0 fails a second time (4 s), index 1 for the first time (2 s), at the same moment.
    failed_at = time.time()
    finish(api, ns, a2, 1, failed_at)
    finish(api, ns, b1, 1, failed_at)
    b2 = nth_pod(api, ns, "steady", 1, 2)
    b_wait = time.time() - failed_at
    a3 = nth_pod(api, ns, "steady", 0, 3)
    a_wait = time.time() - failed_at
    assert BASE - 0.1 <= b_wait < 2 * BASE - 0.5 <= a_wait, (b_wait, a_wait)
    assert failure_counts(api, ns, "steady", 0) == ["0", "1", "2"] and b2["metadata"]["annotations"][COUNT] == "1"
    finish(api, ns, a3, 0)
    finish(api, ns, b2, 0)
    status = wait_condition(api, ns, "steady", "Complete")["status"]
    assert (status["completedIndexes"], status["failed"], status["failedIndexes"]) == ("0,1", 3, "")
