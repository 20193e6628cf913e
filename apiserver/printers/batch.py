"""Rows for batch/v1: jobs and cron jobs.

A job's STATUS (a column of recent releases; 1.32 has it) is read from its conditions in a fixed order:
Complete, Failed, then Terminating while it is being deleted, then Suspended, FailureTarget, and
Running otherwise. COMPLETIONS is `succeeded/completions`; a job without `completions` finishes
after one success, printed `0/1`, or `0/1 of 3` when it runs with parallelism 3. DURATION is
completionTime - startTime, or the time since startTime while it runs, and empty before it starts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers.columns import (
    AGE,
    CONTAINERS,
    IMAGES,
    NAME,
    NONE,
    Cells,
    Column,
    TablePrinter,
    dig,
    items,
    number,
    wide,
)
from apiserver.printers.duration import human_duration, parse_time, since, translate_timestamp_since
from apiserver.printers.formatting import format_label_selector, layout_container_cells


def _condition_true(job: dict[str, Any], kind: str) -> bool:
    # Like Kubernetes, only the first condition of a type counts.
    for condition in items(job, "status", "conditions"):
        if condition.get("type") == kind:
            return condition.get("status") == "True"
    return False


def job_status(job: dict[str, Any]) -> str:
    if _condition_true(job, "Complete"):
        return "Complete"
    if _condition_true(job, "Failed"):
        return "Failed"
    if dig(job, "metadata", "deletionTimestamp") is not None:
        return "Terminating"
    if _condition_true(job, "Suspended"):
        return "Suspended"
    if _condition_true(job, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def job_completions(job: dict[str, Any]) -> str:
    succeeded = number(job, "status", "succeeded")
    completions = dig(job, "spec", "completions")
    if completions is not None:
        return f"{succeeded}/{completions}"
    parallelism = number(job, "spec", "parallelism")
    if parallelism > 1:
        return f"{succeeded}/1 of {parallelism}"
    return f"{succeeded}/1"


def job_duration(job: dict[str, Any], now: datetime) -> str:
    started = parse_time(dig(job, "status", "startTime"))
    if started is None:
        return ""
    completed = parse_time(dig(job, "status", "completionTime"))
    if completed is None:
        return since(started, now)
    return human_duration((completed - started).total_seconds())


def job_cells(job: dict[str, Any], now: datetime) -> Cells:
    names, images = layout_container_cells(items(job, "spec", "template", "spec", "containers"))
    return [
        dig(job, "metadata", "name", default=""),
        job_status(job),
        job_completions(job),
        job_duration(job, now),
        translate_timestamp_since(dig(job, "metadata", "creationTimestamp"), now),
        names,
        images,
        format_label_selector(dig(job, "spec", "selector")),
    ]


def _bool_pointer(value: Any) -> str:
    """printBoolPtr: True / False, or <unset> when the field is absent."""
    if value is None:
        return "<unset>"
    return "True" if value else "False"


def cron_job_cells(cron_job: dict[str, Any], now: datetime) -> Cells:
    last_schedule = dig(cron_job, "status", "lastScheduleTime")
    job_spec = dig(cron_job, "spec", "jobTemplate", "spec", default={})
    names, images = layout_container_cells(items(job_spec, "template", "spec", "containers"))
    return [
        dig(cron_job, "metadata", "name", default=""),
        dig(cron_job, "spec", "schedule", default=""),
        dig(cron_job, "spec", "timeZone", default=NONE),
        _bool_pointer(dig(cron_job, "spec", "suspend")),
        len(items(cron_job, "status", "active")),
        NONE if last_schedule is None else translate_timestamp_since(last_schedule, now),
        translate_timestamp_since(dig(cron_job, "metadata", "creationTimestamp"), now),
        names,
        images,
        format_label_selector(job_spec.get("selector")),
    ]


JOB_SELECTOR = wide("Selector", "A label query over pods that should match the pod count.")

PRINTERS = {
    "jobs.batch": TablePrinter(
        (
            NAME,
            Column("Status", description="Status of the job."),
            Column("Completions", description="The number of pods which reached phase Succeeded."),
            Column("Duration", description="Time required to complete the job."),
            AGE,
            CONTAINERS,
            IMAGES,
            JOB_SELECTOR,
        ),
        job_cells,
    ),
    "cronjobs.batch": TablePrinter(
        (
            NAME,
            Column(
                "Schedule", description="The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."
            ),
            Column("Timezone", description="The time zone name for the given schedule."),
            Column("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions."),
            Column("Active", "integer", "A list of pointers to currently running jobs."),
            Column(
                "Last Schedule",
                description="Information when was the last time the job was successfully scheduled.",
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            JOB_SELECTOR,
        ),
        cron_job_cells,
    ),
}
