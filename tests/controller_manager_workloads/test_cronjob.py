"""The CronJob controller end to end: real API server, controller-manager (`job,cronjob`), scheduler
and kubelet processes, observed through the API and the real kubectl.

No test waits for a minute boundary. A CronJob is created suspended, its `status.lastScheduleTime`
is set a few minutes back through the status subresource (as if the controller had last run then),
and then it is resumed: scheduled times have been missed, so the controller must act at once —
exactly what it does after a controller-manager outage.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.controller_manager_workloads.conftest import scheduler_and_kubelet
from tests.support.apiserver import APIServerProcess
from tests.support.component import ComponentProcess, wait_for
from tests.support.fixtures import new_namespace
from tests.support.kubectl import kubectl_binary

Obj = dict[str, Any]
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def cron_cluster(
    apiserver: APIServerProcess, start_manager: Callable[..., ComponentProcess]
) -> Iterator[ComponentProcess]:
    manager = start_manager(controllers="job,cronjob,ttl-after-finished,garbagecollector")
    with scheduler_and_kubelet(apiserver, "cronnode", nodes=1, kubelet_args=("--job-run-time", "0.5")):
        yield manager


def cron_job(name: str, command: list[str], **spec: Any) -> Obj:
    """Kubernetes' documentation example `hello`, with the command and policy a test needs."""
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "* * * * *",
            "suspend": True,
            "jobTemplate": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [{"name": "hello", "image": "busybox:1.28", "command": command}],
                            "restartPolicy": "OnFailure",
                        }
                    }
                },
            },
            **spec,
        },
    }


def minutes_ago(n: int) -> str:
    return (datetime.now(UTC) - timedelta(minutes=n)).strftime("%Y-%m-%dT%H:%M:%SZ")


def path(ns: str, name: str = "") -> str:
    return f"/apis/batch/v1/namespaces/{ns}/cronjobs" + (f"/{name}" if name else "")


def create_missed(api: httpx.Client, ns: str, cj: Obj, status: Obj) -> Obj:
    """Create `cj` suspended, give it `status` (a last run minutes ago), then resume it."""
    created = api.post(path(ns), json=cj)
    assert created.status_code == 201, created.text
    name = cj["metadata"]["name"]
    r = api.patch(f"{path(ns, name)}/status", content=json.dumps({"status": status}), headers=MERGE)
    assert r.status_code == 200, r.text
    r = api.patch(path(ns, name), content=json.dumps({"spec": {"suspend": False}}), headers=MERGE)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def owned_jobs(api: httpx.Client, ns: str, uid: str) -> list[Obj]:
    items = api.get(f"/apis/batch/v1/namespaces/{ns}/jobs").json()["items"]
    return [j for j in items if any(r.get("uid") == uid for r in j["metadata"].get("ownerReferences") or [])]


def events(api: httpx.Client, ns: str, uid: str) -> list[tuple[str, str]]:
    r = api.get(f"/api/v1/namespaces/{ns}/events", params={"fieldSelector": f"involvedObject.uid={uid}"})
    items = r.json()["items"]
    assert all(e["source"]["component"] == "cronjob-controller" for e in items), items
    return [(e["reason"], e["message"]) for e in items]


def events_when(
    api: httpx.Client, ns: str, uid: str, until: Callable[[list[tuple[str, str]]], bool]
) -> list[tuple[str, str]]:
    def check() -> list[tuple[str, str]] | None:
        got = events(api, ns, uid)
        return got if until(got) else None

    return wait_for(check, what=f"events of {uid}")


def test_a_missed_schedule_starts_one_job_which_completes(
    cron_cluster: ComponentProcess, api: httpx.Client
) -> None:
    ns = new_namespace(api, "cron")
    hello = cron_job("hello", ["/bin/sh", "-c", "date; echo Hello"])
    cj = create_missed(api, ns, hello, {"lastScheduleTime": minutes_ago(3)})
    uid = cj["metadata"]["uid"]
    (job,) = wait_for(lambda: owned_jobs(api, ns, uid), what="the job of the most recent missed minute")
    name = job["metadata"]["name"]
    minute = int(name.rsplit("-", 1)[1])
    assert abs(minute * 60 - datetime.now(UTC).timestamp()) < 120  # the latest minute, not one of the missed ones
    assert job["metadata"]["labels"]["app"] == "hello"
    (ref,) = job["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["controller"], ref["blockOwnerDeletion"]) == ("CronJob", "hello", True, True)
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"].endswith(":00Z")

    def finished() -> Obj | None:
        got = api.get(path(ns, "hello")).json()
        st = got.get("status") or {}
        return got if not st.get("active") and st.get("lastSuccessfulTime") else None

    done = wait_for(finished, timeout=30, what="the job seen complete in the CronJob's status")
    assert done["status"]["lastScheduleTime"].endswith(":00Z")
    got = events_when(api, ns, uid, lambda e: len(e) >= 2)
    assert ("SuccessfulCreate", f"Created job {name}") in got
    assert ("SawCompletedJob", f"Saw completed job: {name}, condition: Complete") in got
    assert not [e for e in events(api, ns, uid) if e[0] == "UnexpectedJob"]  # its own job, seen before its status
    assert len(owned_jobs(api, ns, uid)) == 1  # the same scheduled time never runs twice


def _owned_job(owner: Obj, name: str, *, suspend: bool) -> Obj:
    md = owner["metadata"]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "ownerReferences": [
            {"apiVersion": "batch/v1", "kind": "CronJob", "name": md["name"], "uid": md["uid"], "controller": True}
        ]},
        "spec": {"suspend": suspend, "template": owner["spec"]["jobTemplate"]["spec"]["template"]},
    }  # fmt: skip


def _running_job(api: httpx.Client, ns: str, owner: Obj, name: str) -> Obj:
    """A Job the CronJob owns that never finishes: it is suspended, so no pod runs for it."""
    r = api.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=_owned_job(owner, name, suspend=True))
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def _with_active_job(api: httpx.Client, ns: str, policy: str) -> tuple[Obj, Obj]:
    cj = cron_job(f"cj-{policy.lower()}", ["sleep", "3600"], concurrencyPolicy=policy)
    created = api.post(path(ns), json=cj).json()
    job = _running_job(api, ns, created, "previous-run")
    md = job["metadata"]
    ref = {"kind": "Job", "namespace": ns, "name": md["name"], "uid": md["uid"], "apiVersion": "batch/v1"}
    status = {"status": {"active": [ref], "lastScheduleTime": minutes_ago(3)}}
    r = api.patch(f"{path(ns, cj['metadata']['name'])}/status", content=json.dumps(status), headers=MERGE)
    assert r.status_code == 200, r.text
    r = api.patch(path(ns, cj["metadata"]["name"]), content=json.dumps({"spec": {"suspend": False}}), headers=MERGE)
    return r.json(), job


def test_forbid_does_not_start_a_job_while_one_runs(cron_cluster: ComponentProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "cron")
    cj, job = _with_active_job(api, ns, "Forbid")
    uid = cj["metadata"]["uid"]
    message = "Not starting job because prior execution is running and concurrency policy is Forbid"
    wait_for(lambda: ("JobAlreadyActive", message) in events(api, ns, uid), what="JobAlreadyActive")
    assert [j["metadata"]["name"] for j in owned_jobs(api, ns, uid)] == ["previous-run"]


def test_replace_deletes_the_running_job_and_starts_a_new_one(
    cron_cluster: ComponentProcess, api: httpx.Client
) -> None:
    ns = new_namespace(api, "cron")
    cj, job = _with_active_job(api, ns, "Replace")
    uid = cj["metadata"]["uid"]
    got = events_when(api, ns, uid, lambda e: any(r == "SuccessfulCreate" for r, _ in e))
    assert ("SuccessfulDelete", "Deleted job previous-run") in got
    names = wait_for(
        lambda: [n for j in owned_jobs(api, ns, uid) if (n := j["metadata"]["name"]) != "previous-run"] or None,
        what="the new job",
    )
    (active,) = api.get(path(ns, cj["metadata"]["name"])).json()["status"]["active"]
    assert active["name"] == names[0] != "previous-run"


def test_history_limits_delete_the_oldest_finished_jobs(cron_cluster: ComponentProcess, api: httpx.Client) -> None:
    """Four runs finish one after another, the limit is two: the two oldest are deleted."""
    ns = new_namespace(api, "cron")
    cj = cron_job("hist", ["/bin/sh", "-c", "true"], successfulJobsHistoryLimit=2, failedJobsHistoryLimit=0)
    created = api.post(path(ns), json=cj).json()
    uid = created["metadata"]["uid"]
    jobs = f"/apis/batch/v1/namespaces/{ns}/jobs"
    for i in range(4):  # runs the job controller really completes, each after the one before
        job = _owned_job(created, f"hist-old-{i}", suspend=False)
        assert api.post(jobs, json=job).status_code == 201
        wait_for(lambda n=f"hist-old-{i}": (api.get(f"{jobs}/{n}").json().get("status") or {}).get("completionTime"),
                 what="the run to complete")  # fmt: skip

    def remaining() -> list[str] | None:
        live = [j for j in owned_jobs(api, ns, uid) if not j["metadata"].get("deletionTimestamp")]
        names = sorted(j["metadata"]["name"] for j in live)
        return names if len(names) == 2 else None

    assert wait_for(remaining, what="two jobs kept") == ["hist-old-2", "hist-old-3"]
    got = events_when(api, ns, uid, lambda e: sum(r == "SuccessfulDelete" for r, _ in e) == 2)
    assert {m for r, m in got if r == "SuccessfulDelete"} == {"Deleted job hist-old-0", "Deleted job hist-old-1"}
    newest = api.get(f"{jobs}/hist-old-3").json()["status"]["completionTime"]
    assert wait_for(lambda: api.get(path(ns, "hist")).json()["status"].get("lastSuccessfulTime")) == newest


def test_kubectl_create_job_from_cronjob(
    cron_cluster: ComponentProcess, api: httpx.Client, apiserver: APIServerProcess
) -> None:
    ns = new_namespace(api, "cron")
    api.post(path(ns), json=cron_job("hello", ["/bin/sh", "-c", "date"]))
    out = subprocess.run(
        [kubectl_binary(), "--server", apiserver.url, "-n", ns, "create", "job", "manual-run", "--from=cronjob/hello"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert out.returncode == 0 and out.stdout.strip() == "job.batch/manual-run created", out.stderr
    job = api.get(f"/apis/batch/v1/namespaces/{ns}/jobs/manual-run").json()
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
