"""The pod row: READY, the computed STATUS, RESTARTS with "(x ago)", and the wide columns."""

from typing import Any

from apiserver.printers import build_table
from tests.printers.objects import NOW, ago, meta, row


def running(name: str, *, ready: bool = True, restarts: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "ready": ready,
        "restartCount": restarts,
        "started": True,
        "state": {"running": {"startedAt": ago(hours=1)}},
        **extra,
    }


def waiting(name: str, reason: str, *, restarts: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "ready": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": reason}},
        **extra,
    }


def terminated(name: str, exit_code: int, reason: str | None = None, **extra: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"exitCode": exit_code, "finishedAt": ago(minutes=1)}
    if reason:
        state["reason"] = reason
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": state}, **extra}


def pod(
    *statuses: dict[str, Any],
    phase: str = "Running",
    init: list[dict[str, Any]] | None = None,
    spec: dict[str, Any] | None = None,
    **status: Any,
) -> dict[str, Any]:
    containers = [{"name": s["name"], "image": "nginx:1.27"} for s in statuses] or [{"name": "app"}]
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta("web", age=ago(minutes=10)),
        "spec": {"containers": containers, "nodeName": "node-1", **(spec or {})},
        "status": {"phase": phase, "containerStatuses": list(statuses), **status},
    }
    if init is not None:
        body["status"]["initContainerStatuses"] = init
        body["spec"].setdefault("initContainers", [{"name": s["name"]} for s in init])
    return body


def test_pod_with_one_of_two_containers_ready_is_running_and_one_of_two_ready() -> None:
    cells = row("pods", pod(running("app"), running("sidecar", ready=False)))
    assert (cells["Name"], cells["Ready"], cells["Status"], cells["Restarts"], cells["Age"]) == (
        "web",
        "1/2",
        "Running",
        "0",
        "10m",
    )


def test_pod_being_deleted_shows_terminating() -> None:
    obj = pod(running("app"))
    obj["metadata"]["deletionTimestamp"] = ago(seconds=5)
    assert row("pods", obj)["Status"] == "Terminating"


def test_finished_pod_being_deleted_keeps_its_final_status() -> None:
    obj = pod(terminated("app", 0, "Completed"), phase="Succeeded")
    obj["metadata"]["deletionTimestamp"] = ago(seconds=5)
    assert row("pods", obj)["Status"] == "Completed"


def test_pod_on_lost_node_being_deleted_shows_unknown() -> None:
    obj = pod(running("app"), reason="NodeLost")
    obj["metadata"]["deletionTimestamp"] = ago(seconds=5)
    assert row("pods", obj)["Status"] == "Unknown"


def test_crash_looping_container_shows_reason_and_restarts_with_last_restart_age() -> None:
    crashing = waiting(
        "app",
        "CrashLoopBackOff",
        restarts=3,
        lastState={"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ago(minutes=5)}},
    )
    cells = row("pods", pod(crashing))
    assert (cells["Ready"], cells["Status"], cells["Restarts"]) == ("0/1", "CrashLoopBackOff", "3 (5m ago)")


def test_restart_age_uses_the_most_recent_termination_of_any_container() -> None:
    first = running("a", restarts=1, lastState={"terminated": {"exitCode": 1, "finishedAt": ago(hours=2)}})
    second = running(
        "b", restarts=2, lastState={"terminated": {"exitCode": 1, "finishedAt": ago(minutes=30)}}
    )
    assert row("pods", pod(first, second))["Restarts"] == "3 (30m ago)"


def test_restarts_without_a_termination_time_print_only_the_count() -> None:
    assert row("pods", pod(running("app", restarts=2)))["Restarts"] == "2"


def test_pending_pod_creating_its_container_shows_container_creating() -> None:
    cells = row("pods", pod(waiting("app", "ContainerCreating"), phase="Pending"))
    assert (cells["Ready"], cells["Status"]) == ("0/1", "ContainerCreating")


def test_unscheduled_pod_without_statuses_is_pending_with_no_node() -> None:
    obj = pod(phase="Pending")
    del obj["spec"]["nodeName"]
    cells = row("pods", obj)
    assert (cells["Ready"], cells["Status"], cells["Restarts"], cells["Node"], cells["IP"]) == (
        "0/1",
        "Pending",
        "0",
        "<none>",
        "<none>",
    )


def test_succeeded_pod_shows_completed_and_carries_a_completed_row_condition() -> None:
    obj = pod(terminated("app", 0, "Completed"), phase="Succeeded")
    table = build_table("pods", [obj], now=NOW)
    assert table["rows"][0]["cells"][2] == "Completed"
    assert table["rows"][0]["conditions"] == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]


def test_running_pod_row_has_no_conditions() -> None:
    table = build_table("pods", [pod(running("app"))], now=NOW)
    assert "conditions" not in table["rows"][0]


def test_failed_container_shows_error() -> None:
    obj = pod(terminated("app", 1, "Error"), phase="Failed")
    assert row("pods", obj)["Status"] == "Error"
    assert build_table("pods", [obj], now=NOW)["rows"][0]["conditions"][0]["message"] == "The pod failed."


def test_terminated_container_without_reason_shows_exit_code_or_signal() -> None:
    assert row("pods", pod(terminated("app", 137)))["Status"] == "ExitCode:137"
    killed = terminated("app", 0)
    killed["state"]["terminated"]["signal"] = 9
    assert row("pods", pod(killed))["Status"] == "Signal:9"


def test_completed_container_next_to_a_running_one_reads_running_when_pod_is_ready() -> None:
    statuses = (running("app"), terminated("setup", 0, "Completed"))
    ready = pod(*statuses, conditions=[{"type": "Ready", "status": "True"}])
    not_ready = pod(*statuses, conditions=[{"type": "Ready", "status": "False"}])
    assert row("pods", ready)["Status"] == "Running"
    assert row("pods", not_ready)["Status"] == "NotReady"


def test_evicted_pod_shows_the_status_reason() -> None:
    obj = pod(phase="Failed", reason="Evicted", message="The node was low on resource: memory.")
    assert row("pods", obj)["Status"] == "Evicted"


def test_scheduling_gated_pod_says_so() -> None:
    obj = pod(
        phase="Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
    )
    assert row("pods", obj)["Status"] == "SchedulingGated"


def test_running_init_container_shows_init_progress() -> None:
    obj = pod(waiting("app", "PodInitializing"), phase="Pending", init=[running("migrate", ready=False)])
    assert row("pods", obj)["Status"] == "Init:0/1"


def test_second_of_two_init_containers_shows_one_done() -> None:
    obj = pod(
        waiting("app", "PodInitializing"),
        phase="Pending",
        init=[terminated("fetch", 0, "Completed"), running("migrate", ready=False)],
    )
    assert row("pods", obj)["Status"] == "Init:1/2"


def test_failing_init_container_shows_init_reason_and_its_restarts() -> None:
    crashing = waiting(
        "migrate",
        "CrashLoopBackOff",
        restarts=2,
        lastState={"terminated": {"exitCode": 1, "finishedAt": ago(minutes=3)}},
    )
    obj = pod(waiting("app", "PodInitializing"), phase="Pending", init=[crashing])
    cells = row("pods", obj)
    assert (cells["Status"], cells["Restarts"]) == ("Init:CrashLoopBackOff", "2 (3m ago)")


def test_init_container_that_failed_shows_init_error_or_exit_code() -> None:
    obj = pod(waiting("app", "PodInitializing"), phase="Pending", init=[terminated("migrate", 1, "Error")])
    assert row("pods", obj)["Status"] == "Init:Error"
    obj = pod(waiting("app", "PodInitializing"), phase="Pending", init=[terminated("migrate", 2)])
    assert row("pods", obj)["Status"] == "Init:ExitCode:2"


def test_started_sidecar_counts_as_a_ready_container() -> None:
    obj = pod(running("app"), init=[running("proxy")])
    obj["spec"]["initContainers"] = [{"name": "proxy", "restartPolicy": "Always"}]
    cells = row("pods", obj)
    assert (cells["Ready"], cells["Status"]) == ("2/2", "Running")


def test_wide_columns_show_ip_node_nominated_node_and_readiness_gates() -> None:
    obj = pod(
        running("app"),
        podIP="10.244.1.5",
        podIPs=[{"ip": "10.244.1.5"}],
        nominatedNodeName="node-2",
        conditions=[
            {"type": "example.com/lb", "status": "True"},
            {"type": "example.com/dns", "status": "False"},
        ],
        spec={"readinessGates": [{"conditionType": "example.com/lb"}, {"conditionType": "example.com/dns"}]},
    )
    cells = row("pods", obj)
    assert (cells["IP"], cells["Node"], cells["Nominated Node"], cells["Readiness Gates"]) == (
        "10.244.1.5",
        "node-1",
        "node-2",
        "1/2",
    )


def test_pod_ip_falls_back_to_the_singular_field() -> None:
    assert row("pods", pod(running("app"), podIP="10.244.2.3"))["IP"] == "10.244.2.3"
