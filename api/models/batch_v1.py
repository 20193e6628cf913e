"""batch/v1: Job (run pods to completion) and CronJob (create Jobs on a schedule).

A Job counts *successes*, not running pods: it keeps up to `parallelism` pods running until
`completions` of them have exited 0, retrying failures up to `backoffLimit`. A CronJob is one
level up: it creates a Job from `jobTemplate` each time `schedule` fires.
"""

from __future__ import annotations

from api.models.base import FreeDict, Int64, K8sModel, Time
from api.models.core_v1 import ObjectReference, PodTemplateSpec
from api.models.meta import BaseCondition, K8sList, LabelSelector, ObjectMeta


class JobSpec(K8sModel):
    """The desired state of a Job: the pod to run, how many must succeed, how many may run at once, and how many
    failures are tolerated."""

    parallelism: int | None = None  # pods running at once (default 1)
    completions: int | None = None  # successes needed (unset: one success finishes the Job)
    # Seconds the Job may run in total before it is failed and its pods are stopped.
    active_deadline_seconds: Int64 | None = None
    backoff_limit: int | None = None  # retries before the Job fails (default 6)
    # For Indexed Jobs: retries allowed per index.
    backoff_limit_per_index: int | None = None
    # For Indexed Jobs: failed indexes allowed before the Job fails.
    max_failed_indexes: int | None = None
    selector: LabelSelector | None = None  # generated from controller-uid unless manualSelector
    # Use the given selector instead of generating one (rarely needed).
    manual_selector: bool | None = None
    # The pod to run. Its restartPolicy must be Never or OnFailure.
    template: PodTemplateSpec | None = None
    # Delete the finished Job this many seconds after it completes or fails.
    ttl_seconds_after_finished: int | None = None
    completion_mode: str | None = None  # NonIndexed (default) or Indexed
    # While true, the Job creates no pods and its running pods are stopped.
    suspend: bool | None = None
    # Rules that fail the Job, or ignore a failure, by exit code or pod condition; kept as given.
    pod_failure_policy: FreeDict | None = None
    # When an Indexed Job counts as succeeded before all indexes succeed; kept as given.
    success_policy: FreeDict | None = None
    # When a replacement pod is created: TerminatingOrFailed or Failed.
    pod_replacement_policy: str | None = None
    # The controller that manages the Job (default: the built-in job controller).
    managed_by: str | None = None


class JobCondition(BaseCondition):
    last_probe_time: Time | None = None  # Complete, Failed, Suspended, FailureTarget, ...


class JobStatus(K8sModel):
    """The observed state of a Job."""

    # The latest observations: Complete, Failed, Suspended, FailureTarget, SuccessCriteriaMet.
    conditions: list[JobCondition] | None = None
    # When the Job controller started the Job.
    start_time: Time | None = None
    # When the Job finished successfully.
    completion_time: Time | None = None
    # Pods running now.
    active: int | None = None
    # Pods that finished successfully.
    succeeded: int | None = None
    # Pods that failed.
    failed: int | None = None
    # Pods that are shutting down.
    terminating: int | None = None
    # For Indexed Jobs: the indexes that succeeded, e.g. "1,3-5".
    completed_indexes: str | None = None
    # For Indexed Jobs: the indexes that failed.
    failed_indexes: str | None = None
    # Finished pods the controller has not counted yet.
    uncounted_terminated_pods: FreeDict | None = None
    # Active pods that are ready.
    ready: int | None = None


class Job(K8sModel):
    """A Job runs pods until a number of them finish successfully, retrying failed ones up to a limit."""

    api_version: str | None = "batch/v1"
    kind: str | None = "Job"
    metadata: ObjectMeta | None = None
    spec: JobSpec | None = None
    status: JobStatus | None = None


class JobTemplateSpec(K8sModel):
    """The Job a CronJob creates each time its schedule fires."""

    # Metadata of the Jobs created from this template.
    metadata: ObjectMeta | None = None
    # The spec of the Jobs created from this template.
    spec: JobSpec | None = None


class CronJobSpec(K8sModel):
    """The desired state of a CronJob: when to create a Job, from which template, and how many to keep."""

    schedule: str | None = None  # cron syntax: "*/1 * * * *"
    # The time zone of the schedule, e.g. Europe/Paris (default: the controller's).
    time_zone: str | None = None
    # A run that cannot start within this many seconds of its time is skipped.
    starting_deadline_seconds: Int64 | None = None
    concurrency_policy: str | None = None  # Allow (default), Forbid, Replace
    # While true, no new Jobs are created.
    suspend: bool | None = None
    # The Job to create each time the schedule fires.
    job_template: JobTemplateSpec | None = None
    successful_jobs_history_limit: int | None = None  # default 3
    failed_jobs_history_limit: int | None = None  # default 1


class CronJobStatus(K8sModel):
    """The observed state of a CronJob."""

    active: list[ObjectReference] | None = None  # Jobs currently running
    # When a Job was last created.
    last_schedule_time: Time | None = None
    # When a Job last finished successfully.
    last_successful_time: Time | None = None


class CronJob(K8sModel):
    """A CronJob creates a Job from its template each time its cron schedule fires."""

    api_version: str | None = "batch/v1"
    kind: str | None = "CronJob"
    metadata: ObjectMeta | None = None
    spec: CronJobSpec | None = None
    status: CronJobStatus | None = None


class JobList(K8sList[Job]):
    api_version: str | None = "batch/v1"
    kind: str | None = "JobList"


class CronJobList(K8sList[CronJob]):
    api_version: str | None = "batch/v1"
    kind: str | None = "CronJobList"
