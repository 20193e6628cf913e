"""Counting a Job's finished pods exactly once with the `batch.kubernetes.io/job-tracking` finalizer,
end to end (the processes of test_job.py): across a controller-manager SIGKILL, with finished pods
deleted while it is down, and for pods deleted before they finished.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from tests.controller_manager_workloads.test_job import (  # noqa: F401  (job_cluster is a fixture)
    JOB_MANAGER_FLAGS,
    TRACKING_FINALIZER,
    create_job,
    events,
    get_job,
    job_cluster,
    job_pods,
    simple_job,
    wait_condition,
)
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace

Obj = dict[str, Any]
GHOST_NODE = "ghost-node"  # no kubelet serves it: the test itself plays the kubelet of these pods


def finalizers(pod: Obj) -> list[str]:
    return pod["metadata"].get("finalizers") or []


def delete_pod(api: httpx.Client, ns: str, name: str, grace: int | None = None) -> Obj:
    params = {} if grace is None else {"gracePeriodSeconds": str(grace)}
    resp = api.delete(f"/api/v1/namespaces/{ns}/pods/{name}", params=params)
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


def test_succeeded_pods_deleted_while_the_manager_is_down_are_counted_once(
    api: httpx.Client,
    apiserver: APIServerProcess,
    job_cluster: ComponentProcess,  # noqa: F811
    start_manager: Callable[..., ComponentProcess],
) -> None:
    ns = new_namespace(api, "job-track")
    create_job(api, ns, simple_job("count", ["sleep", "2"], completions=4, parallelism=4))

    def running() -> list[Obj] | None:
        pods = [p for p in job_pods(api, ns, "count") if p["status"].get("phase") == "Running"]
        return pods if len(pods) == 4 else None

    pods = wait_for(running, timeout=20, what="4 running pods")
    assert pods is not None
    assert all(TRACKING_FINALIZER in finalizers(p) for p in pods), [finalizers(p) for p in pods]
    job_cluster.kill()  # SIGKILL while the pods run: nobody counts them as they finish

    def all_succeeded() -> list[Obj] | None:
        got = job_pods(api, ns, "count")
        return got if len(got) == 4 and all(p["status"].get("phase") == "Succeeded" for p in got) else None

    finished = wait_for(all_succeeded, timeout=20, what="4 succeeded pods")
    assert finished is not None
    gone = sorted(p["metadata"]["name"] for p in finished)[:2]
    for name in gone:
        delete_pod(api, ns, name)

    # The kubelet finishes the deletion, but the finalizer holds both pods until they are counted.
    def held() -> bool:
        kept = [p for p in job_pods(api, ns, "count") if p["metadata"]["name"] in gone]
        return len(kept) == 2 and all(
            p["metadata"].get("deletionTimestamp") and p["metadata"].get("deletionGracePeriodSeconds") == 0
            for p in kept
        )

    wait_for(held, timeout=20, what="the deleted pods held by their finalizer")
    assert not get_job(api, ns, "count")["status"].get("succeeded")  # nothing counted while it was down

    start_manager(*JOB_MANAGER_FLAGS, controllers="job")
    job = wait_condition(api, ns, "count", "Complete", timeout=30)
    status = job["status"]
    assert status["succeeded"] == 4 and not status.get("failed"), status
    assert status["uncountedTerminatedPods"] == {}
    wait_for(lambda: len(job_pods(api, ns, "count")) == 2, what="the deleted pods gone once counted")
    left = job_pods(api, ns, "count")
    kept = {p["metadata"]["name"] for p in finished} - set(gone)
    assert sorted(p["metadata"]["name"] for p in left) == sorted(kept)
    assert all(TRACKING_FINALIZER not in finalizers(p) for p in left)
    created = [e for e in events(api, ns, job["metadata"]["uid"]) if e[1] == "SuccessfulCreate"]
    assert len(created) == 4, created  # no pod was made again for work already done


def test_a_pod_deleted_before_it_finished_counts_as_failed(
    api: httpx.Client, job_cluster: ComponentProcess  # noqa: F811
) -> None:
    ns = new_namespace(api, "job-track")
    manifest = simple_job("lost", ["sleep", "300"], completions=1, backoffLimit=3)
    manifest["spec"]["template"]["spec"]["nodeName"] = GHOST_NODE  # runs nowhere: stays Pending
    create_job(api, ns, manifest)
    first = wait_for(lambda: job_pods(api, ns, "lost"), what="the first pod")
    assert first is not None and TRACKING_FINALIZER in finalizers(first[0])
    name = first[0]["metadata"]["name"]
    delete_pod(api, ns, name)  # graceful: no kubelet will ever finish it

    def replaced() -> Obj | None:
        job = get_job(api, ns, "lost")
        return job if job["status"].get("failed") == 1 and job["status"].get("active") == 1 else None

    job = wait_for(replaced, timeout=20, what="failed 1, a replacement active")
    assert job is not None
    assert job["status"]["terminating"] == 1  # the deleted pod is still terminating
    assert job["status"]["uncountedTerminatedPods"] == {}
    pods = {p["metadata"]["name"]: p for p in job_pods(api, ns, "lost")}
    assert len(pods) == 2 and TRACKING_FINALIZER not in finalizers(pods[name])  # counted: finalizer gone
    new = next(p for n, p in pods.items() if n != name)
    assert TRACKING_FINALIZER in finalizers(new) and not new["metadata"].get("deletionTimestamp")


def test_deleting_the_job_releases_its_pods_finalizers(
    api: httpx.Client, job_cluster: ComponentProcess  # noqa: F811
) -> None:
    ns = new_namespace(api, "job-track")
    manifest = simple_job("gone", ["sleep", "300"], completions=2, parallelism=2)
    manifest["spec"]["template"]["spec"]["nodeName"] = GHOST_NODE
    create_job(api, ns, manifest)
    wait_for(lambda: len(job_pods(api, ns, "gone")) == 2, what="2 pods")
    # Orphan: the job goes at once, its pods stay (no garbage collector runs here) and must not
    # keep a finalizer that nobody will ever remove.
    resp = api.delete(f"/apis/batch/v1/namespaces/{ns}/jobs/gone", params={"propagationPolicy": "Orphan"})
    assert resp.status_code in (200, 202), resp.text
    if resp.json().get("kind") == "Job":  # the orphan finalizer needs the GC: take the job away ourselves
        api.patch(f"/apis/batch/v1/namespaces/{ns}/jobs/gone", json={"metadata": {"finalizers": None}},
                  headers={"Content-Type": "application/merge-patch+json"}).raise_for_status()  # fmt: skip
    wait_for(
        lambda: all(TRACKING_FINALIZER not in finalizers(p) for p in job_pods(api, ns, "gone")),
        what="the finalizers removed from the pods of a deleted job",
    )
