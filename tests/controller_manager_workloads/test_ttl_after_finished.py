"""ttlSecondsAfterFinished end to end: finished Jobs go away after their TTL, pods first; others stay.

Same processes as the CronJob tests (job, cronjob and ttl-after-finished controllers, a scheduler
and a kubelet whose job pods finish after half a second). `kubectl wait --for=condition=complete`
is how a student waits for a Job, so it is the waiting here too.
"""

from __future__ import annotations

import subprocess

import httpx

from tests.controller_manager_workloads.test_cronjob import cron_cluster  # noqa: F401  (fixture)
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace
from tests.support.kubectl import kubectl_binary


def job(name: str, **spec: object) -> dict:
    pod = {"containers": [{"name": "c", "image": "busybox", "command": ["/bin/sh", "-c", "echo done"]}],
           "restartPolicy": "Never"}  # fmt: skip
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": pod}, **spec}}  # fmt: skip


def kubectl_wait(apiserver: APIServerProcess, ns: str, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [kubectl_binary(), "--server", apiserver.url, "-n", ns, "wait", "--for=condition=complete",
         f"job/{name}", "--timeout=30s"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_a_finished_job_is_deleted_after_its_ttl_and_others_stay(
    cron_cluster: ComponentProcess,  # noqa: F811
    api: httpx.Client,
    apiserver: APIServerProcess,
) -> None:
    ns = new_namespace(api, "ttl")
    jobs = f"/apis/batch/v1/namespaces/{ns}/jobs"
    for body in (job("keep"), job("short", ttlSecondsAfterFinished=2), job("zero", ttlSecondsAfterFinished=0)):
        assert api.post(jobs, json=body).status_code == 201
    done = kubectl_wait(apiserver, ns, "keep")
    assert done.returncode == 0 and done.stdout.strip() == "job.batch/keep condition met", done.stderr

    def names() -> set[str]:
        return {j["metadata"]["name"] for j in api.get(jobs).json()["items"]}

    wait_for(lambda: names() == {"keep"}, timeout=30, what="the jobs with a TTL deleted")
    pods = api.get(f"/api/v1/namespaces/{ns}/pods").json()["items"]
    owners = {p["metadata"]["labels"].get("batch.kubernetes.io/job-name") for p in pods}
    assert "short" not in owners and "zero" not in owners  # Foreground: the pods went with their Job
    assert names() == {"keep"}  # no TTL: kept
