"""Rows of the apps/v1 and batch/v1 controllers."""

from typing import Any

from tests.printers.objects import ago, meta, row

TEMPLATE = {
    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}, {"name": "log", "image": "busybox"}]}
}


def workload(replicas: int | None = 3, selector: Any = None, **status: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": TEMPLATE,
        "selector": selector if selector is not None else {"matchLabels": {"app": "nginx"}},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"metadata": meta("nginx"), "spec": spec, "status": status}


def test_deployment_row() -> None:
    dep = workload(readyReplicas=2, updatedReplicas=3, availableReplicas=2)
    assert list(row("deployments.apps", dep).values()) == [
        "nginx",
        "2/3",
        3,
        2,
        "3d",
        "nginx,log",
        "nginx:1.27,busybox",
        "app=nginx",
    ]


def test_new_deployment_without_status_reads_zero_ready() -> None:
    cells = row("deployments.apps", workload())
    assert (cells["Ready"], cells["Up-to-date"], cells["Available"]) == ("0/3", 0, 0)


def test_deployment_with_set_based_selector_and_invalid_selector() -> None:
    selector = {
        "matchLabels": {"app": "nginx"},
        "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["qa", "dev"]},
            {"key": "legacy", "operator": "DoesNotExist"},
        ],
    }
    assert (
        row("deployments.apps", workload(selector=selector))["Selector"]
        == "app=nginx,env in (dev,qa),!legacy"
    )
    broken = {"matchExpressions": [{"key": "env", "operator": "Like", "values": ["x"]}]}
    assert row("deployments.apps", workload(selector=broken))["Selector"] == "<invalid>"


def test_replica_set_row() -> None:
    rs = workload(replicas=2)
    rs["status"] = {"replicas": 2, "readyReplicas": 1}  # "replicas" is also workload()'s parameter
    assert list(row("replicasets.apps", rs).values()) == [
        "nginx",
        2,
        2,
        1,
        "3d",
        "nginx,log",
        "nginx:1.27,busybox",
        "app=nginx",
    ]


def test_replica_set_with_invalid_selector_prints_error() -> None:
    rs = workload(selector={"matchExpressions": [{"key": "env", "operator": "In"}]})
    assert row("replicasets.apps", rs)["Selector"] == "<error>"


def test_daemon_set_row() -> None:
    ds = workload(
        replicas=None,
        desiredNumberScheduled=3,
        currentNumberScheduled=3,
        numberReady=2,
        updatedNumberScheduled=3,
        numberAvailable=2,
    )
    ds["spec"]["template"] = {"spec": {**TEMPLATE["spec"], "nodeSelector": {"kubernetes.io/os": "linux"}}}
    assert list(row("daemonsets.apps", ds).values()) == [
        "nginx",
        3,
        3,
        2,
        3,
        2,
        "kubernetes.io/os=linux",
        "3d",
        "nginx,log",
        "nginx:1.27,busybox",
        "app=nginx",
    ]
    ds["spec"]["template"] = TEMPLATE
    assert row("daemonsets.apps", ds)["Node Selector"] == "<none>"


def test_stateful_set_row() -> None:
    sts = workload(replicas=3, readyReplicas=1)
    assert list(row("statefulsets.apps", sts).values()) == [
        "nginx",
        "1/3",
        "3d",
        "nginx,log",
        "nginx:1.27,busybox",
    ]


def job(**overrides: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": meta("pi", age=ago(minutes=5)),
        "spec": {
            "completions": 1,
            "parallelism": 1,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}},
            "template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.34"}]}},
        },
        "status": {},
    }
    for key, value in overrides.items():
        obj[key].update(value)
    return obj


def test_running_job_row() -> None:
    running = job(status={"startTime": ago(minutes=2, seconds=3), "active": 1})
    assert list(row("jobs.batch", running).values()) == [
        "pi",
        "Running",
        "0/1",
        "2m3s",
        "5m",
        "pi",
        "perl:5.34",
        "batch.kubernetes.io/controller-uid=u-1",
    ]


def test_completed_job_shows_complete_and_its_run_time() -> None:
    done = job(
        status={
            "startTime": ago(minutes=4),
            "completionTime": ago(minutes=3, seconds=20),
            "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True"}],
        }
    )
    cells = row("jobs.batch", done)
    assert (cells["Status"], cells["Completions"], cells["Duration"]) == ("Complete", "1/1", "40s")


def test_job_status_precedence() -> None:
    def status_of(conditions: list[dict[str, str]], deleting: bool = False) -> str:
        obj = job(status={"conditions": conditions})
        if deleting:
            obj["metadata"]["deletionTimestamp"] = ago(seconds=1)
        return row("jobs.batch", obj)["Status"]

    assert status_of([{"type": "Failed", "status": "True"}]) == "Failed"
    assert status_of([{"type": "Suspended", "status": "True"}]) == "Suspended"
    assert status_of([{"type": "Suspended", "status": "True"}], deleting=True) == "Terminating"
    assert status_of([{"type": "FailureTarget", "status": "True"}]) == "FailureTarget"
    assert status_of([{"type": "Complete", "status": "False"}]) == "Running"


def test_job_not_started_has_empty_duration() -> None:
    assert row("jobs.batch", job())["Duration"] == ""


def test_job_completions_without_completions_field() -> None:
    parallel = job(spec={"parallelism": 3}, status={"succeeded": 1})
    del parallel["spec"]["completions"]
    assert row("jobs.batch", parallel)["Completions"] == "1/1 of 3"
    single = job(spec={"parallelism": 1})
    del single["spec"]["completions"]
    assert row("jobs.batch", single)["Completions"] == "0/1"


def test_cron_job_row() -> None:
    cron = {
        "metadata": meta("hello"),
        "spec": {
            "schedule": "*/1 * * * *",
            "suspend": False,
            "jobTemplate": {
                "spec": {"template": {"spec": {"containers": [{"name": "hello", "image": "busybox"}]}}}
            },
        },
        "status": {"active": [{"name": "hello-1"}], "lastScheduleTime": ago(seconds=42)},
    }
    assert list(row("cronjobs.batch", cron).values()) == [
        "hello",
        "*/1 * * * *",
        "<none>",
        "False",
        1,
        "42s",
        "3d",
        "hello",
        "busybox",
        "<none>",
    ]


def test_cron_job_never_scheduled_with_time_zone_and_unset_suspend() -> None:
    cron = {
        "metadata": meta("nightly"),
        "spec": {"schedule": "0 3 * * *", "timeZone": "Europe/Berlin", "jobTemplate": {"spec": {}}},
    }
    cells = row("cronjobs.batch", cron)
    assert (cells["Timezone"], cells["Suspend"], cells["Active"], cells["Last Schedule"]) == (
        "Europe/Berlin",
        "<unset>",
        0,
        "<none>",
    )
