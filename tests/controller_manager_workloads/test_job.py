"""The Job controller end to end: a real API server, controller-manager (`--controllers=job`),
scheduler and kubelet, all as processes; everything is observed through the API and mini-kubectl.

The kubelet runs job pods with `--job-run-time 0.5` (an unmodelled command such as the `pi`
example's perl one-liner "computes" for half a second, then exits 0; `sh -c "exit 1"` fails at
once), so a three-completion job takes a second or two instead of minutes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.controller_manager_workloads.conftest import scheduler_and_kubelet
from tests.controller_manager_workloads.podwatch import PodWatch
from tests.support.apiserver import APIServerProcess
from tests.support.component import REPO, ComponentProcess, wait_for
from tests.support.fixtures import new_namespace

PI_JOB = REPO / "examples" / "pi-job.yaml"
MERGE = {"Content-Type": "application/merge-patch+json"}
Obj = dict[str, Any]
BACKOFF = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
# The pod failure back-off (10 s doubling to 10 min in Kubernetes) shortened, so failing jobs are quick.
JOB_MANAGER_FLAGS = ("--job-pod-failure-backoff-base", "0.2s", "--job-pod-failure-backoff-max", "1s")


@pytest.fixture(scope="module")
def job_cluster(
    apiserver: APIServerProcess, start_manager: Callable[..., ComponentProcess]
) -> Iterator[ComponentProcess]:
    """controller-manager with only the job controller, the scheduler, and a fast 3-node kubelet."""
    manager = start_manager(*JOB_MANAGER_FLAGS, controllers="job")
    with scheduler_and_kubelet(apiserver, "jobnode", kubelet_args=("--job-run-time", "0.5")):
        wait_for(lambda: len(ready_nodes(apiserver)) == 3, what="3 Ready jobnode-* nodes")
        yield manager


# ---------------------------------------------------------------------------------- helpers
def ready_nodes(apiserver: APIServerProcess) -> list[str]:
    resp = httpx.get(f"{apiserver.url}/api/v1/nodes", timeout=5)
    resp.raise_for_status()
    return [
        n["metadata"]["name"]
        for n in resp.json()["items"]
        if n["metadata"]["name"].startswith("jobnode-")
        and any(c["type"] == "Ready" and c["status"] == "True" for c in n.get("status", {}).get("conditions") or [])
    ]


def jobs_path(ns: str) -> str:
    return f"/apis/batch/v1/namespaces/{ns}/jobs"


def create_job(api: httpx.Client, ns: str, job: Obj) -> Obj:
    resp = api.post(jobs_path(ns), json=job)
    assert resp.status_code == 201, resp.text
    return resp.json()  # type: ignore[no-any-return]


def get_job(api: httpx.Client, ns: str, name: str) -> Obj:
    resp = api.get(f"{jobs_path(ns)}/{name}")
    resp.raise_for_status()
    return resp.json()  # type: ignore[no-any-return]


def job_pods(api: httpx.Client, ns: str, job_name: str) -> list[Obj]:
    resp = api.get(
        f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": f"batch.kubernetes.io/job-name={job_name}"}
    )
    resp.raise_for_status()
    return resp.json()["items"]  # type: ignore[no-any-return]


def phases(pods: list[Obj]) -> list[str]:
    return sorted(p["status"].get("phase", "") for p in pods)


def condition(job: Obj, type_: str) -> Obj | None:
    return next((c for c in job.get("status", {}).get("conditions") or [] if c["type"] == type_), None)


def has_condition(job: Obj, type_: str, status: str = "True") -> bool:
    cond = condition(job, type_)
    return cond is not None and cond["status"] == status


def events(api: httpx.Client, ns: str, uid: str) -> list[tuple[str, str, str]]:
    resp = api.get(f"/api/v1/namespaces/{ns}/events", params={"fieldSelector": f"involvedObject.uid={uid}"})
    resp.raise_for_status()
    items = resp.json()["items"]
    assert all(e["source"]["component"] == "job-controller" for e in items), items
    return [(e["type"], e["reason"], e["message"]) for e in items]


def wait_condition(api: httpx.Client, ns: str, name: str, type_: str, timeout: float = 20.0) -> Obj:
    """The job once its `type_` condition is True."""

    def check() -> Obj | None:
        job = get_job(api, ns, name)
        return job if has_condition(job, type_) else None

    job = wait_for(check, timeout=timeout, what=f"job {ns}/{name} {type_}")
    assert job is not None  # wait_for returns only something truthy
    return job


def wait_events(
    api: httpx.Client, ns: str, uid: str, until: Callable[[list[tuple[str, str, str]]], bool]
) -> list[tuple[str, str, str]]:
    """The job's events as (type, reason, message), once `until` holds for them."""

    def check() -> list[tuple[str, str, str]] | None:
        got = events(api, ns, uid)
        return got if until(got) else None

    got = wait_for(check, what=f"events of {uid}")
    assert got is not None  # wait_for returns only something truthy
    return got


def simple_job(name: str, command: list[str], **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            **spec,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox", "command": command}],
                }
            },
        },
    }


# ---------------------------------------------------------------------------------- tests
def test_pi_job_runs_three_completions_two_at_a_time(
    api: httpx.Client, apiserver: APIServerProcess, job_cluster: ComponentProcess
) -> None:
    ns = new_namespace(api, "job-pi")
    manifest = yaml.safe_load(PI_JOB.read_text())
    max_status_active = 0

    def complete() -> Obj | None:
        nonlocal max_status_active
        job = get_job(api, ns, "pi")
        max_status_active = max(max_status_active, job.get("status", {}).get("active", 0))
        return job if has_condition(job, "Complete") else None

    with PodWatch(apiserver.url, namespace=ns) as watch:
        job = create_job(api, ns, manifest)
        done = wait_for(complete, timeout=30, interval=0.02, what="job pi Complete")
    assert done is not None
    assert watch.max_active <= 2, f"{watch.max_active} pods were active at once"
    assert watch.max_active == 2  # it did run two at a time
    assert max_status_active <= 2

    pods = job_pods(api, ns, "pi")
    assert phases(pods) == ["Succeeded"] * 3
    uid = job["metadata"]["uid"]
    for pod in pods:
        assert TRACKING_FINALIZER not in (pod["metadata"].get("finalizers") or [])  # removed once counted
        assert pod["metadata"]["name"].startswith("pi-")
        assert pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == uid
        assert pod["metadata"]["ownerReferences"] == [
            {"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": uid,
             "controller": True, "blockOwnerDeletion": True}
        ]  # fmt: skip

    status = done["status"]
    assert status["succeeded"] == 3
    assert not status.get("active") and not status.get("failed")
    assert (status["uncountedTerminatedPods"], status["terminating"], status["ready"]) == ({}, 0, 0)
    assert status["startTime"] and status["completionTime"] >= status["startTime"]
    types = [c["type"] for c in status["conditions"]]
    assert types == ["SuccessCriteriaMet", "Complete"]
    complete_cond = condition(done, "Complete")
    assert complete_cond is not None and complete_cond["reason"] == "CompletionsReached"

    got = wait_events(api, ns, uid, lambda ev: any(r == "Completed" for _, r, _ in ev))
    assert ("Normal", "Completed", "Job completed") in got
    assert {("Normal", "SuccessfulCreate", f"Created pod: {p['metadata']['name']}") for p in pods} <= set(got)


def test_failing_job_stops_after_backoff_limit(
    api: httpx.Client, apiserver: APIServerProcess, job_cluster: ComponentProcess
) -> None:
    ns = new_namespace(api, "job-fail")
    job = create_job(api, ns, simple_job("doomed", ["sh", "-c", "exit 1"], backoffLimit=1, completions=2))
    done = wait_condition(api, ns, "doomed", "Failed")
    status = done["status"]
    assert status["failed"] == 2
    assert not status.get("active") and not status.get("succeeded")
    assert "completionTime" not in status
    assert [c["type"] for c in status["conditions"]] == ["FailureTarget", "Failed"]
    for type_ in ("FailureTarget", "Failed"):
        cond = condition(done, type_)
        assert cond is not None and cond["status"] == "True"
        assert (cond["reason"], cond["message"]) == BACKOFF
    assert phases(job_pods(api, ns, "doomed")) == ["Failed", "Failed"]
    uid = job["metadata"]["uid"]
    wait_events(api, ns, uid, lambda ev: ("Warning", *BACKOFF) in ev)
    # A failed job is finished: however long we look, no new pod appears.
    with pytest.raises(AssertionError, match="timed out"):
        wait_for(lambda: len(job_pods(api, ns, "doomed")) > 2, timeout=1.5, what="an extra pod")


def test_suspended_job_creates_nothing_until_resumed(
    api: httpx.Client, apiserver: APIServerProcess, job_cluster: ComponentProcess
) -> None:
    ns = new_namespace(api, "job-susp")
    job = create_job(api, ns, simple_job("later", ["run-something"], completions=2, parallelism=2, suspend=True))
    suspended = wait_condition(api, ns, "later", "Suspended")
    cond = condition(suspended, "Suspended")
    assert cond is not None and (cond["reason"], cond["message"]) == ("JobSuspended", "Job suspended")
    assert job_pods(api, ns, "later") == []  # the sync that wrote the condition would have created them
    assert "startTime" not in suspended["status"]

    resp = api.patch(f"{jobs_path(ns)}/later", json={"spec": {"suspend": False}}, headers=MERGE)
    resp.raise_for_status()
    done = wait_condition(api, ns, "later", "Complete")
    assert done["status"]["succeeded"] == 2 and done["status"]["startTime"]
    resumed = condition(done, "Suspended")
    assert resumed is not None and (resumed["status"], resumed["reason"], resumed["message"]) == (
        "False",
        "JobResumed",
        "Job resumed",
    )
    assert phases(job_pods(api, ns, "later")) == ["Succeeded", "Succeeded"]
    got = wait_events(api, ns, job["metadata"]["uid"], lambda ev: any(r == "Completed" for _, r, _ in ev))
    assert {("Normal", "Suspended", "Job suspended"), ("Normal", "Resumed", "Job resumed")} <= set(got)


def test_suspending_a_running_job_deletes_its_active_pods(
    api: httpx.Client, apiserver: APIServerProcess, job_cluster: ComponentProcess
) -> None:
    ns = new_namespace(api, "job-pause")
    job = create_job(api, ns, simple_job("long", ["sleep", "300"], completions=2, parallelism=2))

    def two_running() -> list[Obj] | None:
        running = [p for p in job_pods(api, ns, "long") if p["status"].get("phase") == "Running"]
        return running if len(running) == 2 else None

    running = wait_for(two_running, what="2 running pods")
    assert running is not None
    wait_for(lambda: get_job(api, ns, "long")["status"].get("ready") == 2, what="status.ready == 2")
    api.patch(f"{jobs_path(ns)}/long", json={"spec": {"suspend": True}}, headers=MERGE).raise_for_status()
    paused = wait_condition(api, ns, "long", "Suspended")
    assert not paused["status"].get("active")
    wait_for(lambda: job_pods(api, ns, "long") == [], what="the pods to be gone")
    names = {p["metadata"]["name"] for p in running}
    got = wait_events(api, ns, job["metadata"]["uid"], lambda ev: sum(r == "SuccessfulDelete" for _, r, _ in ev) == 2)
    assert {("Normal", "SuccessfulDelete", f"Deleted pod: {n}") for n in names} <= set(got)
    final = get_job(api, ns, "long")["status"]
    assert not final.get("succeeded") and not final.get("failed")  # pods we stopped are not counted


def test_kubectl_get_jobs_shows_completions(
    api: httpx.Client, apiserver: APIServerProcess, job_cluster: ComponentProcess
) -> None:
    ns = new_namespace(api, "job-get")
    create_job(api, ns, yaml.safe_load(PI_JOB.read_text()))
    wait_condition(api, ns, "pi", "Complete", timeout=30)
    kubectl = Path(REPO) / ".venv" / "bin" / "mini-kubectl"
    res = subprocess.run(
        [str(kubectl), "--server", apiserver.url, "get", "jobs", "-n", ns],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert res.returncode == 0, res.stderr
    header, *rows = res.stdout.splitlines()
    columns = header.split()
    assert columns[:3] == ["NAME", "STATUS", "COMPLETIONS"], header
    assert len(rows) == 1
    cells = rows[0].split()
    assert cells[:3] == ["pi", "Complete", "3/3"], res.stdout
