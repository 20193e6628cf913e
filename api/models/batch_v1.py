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
    parallelism: int | None = None  # pods running at once (default 1)
    completions: int | None = None  # successes needed (unset: one success finishes the Job)
    active_deadline_seconds: Int64 | None = None
    backoff_limit: int | None = None  # retries before the Job fails (default 6)
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    selector: LabelSelector | None = None  # generated from controller-uid unless manualSelector
    manual_selector: bool | None = None
    template: PodTemplateSpec | None = None
    ttl_seconds_after_finished: int | None = None
    completion_mode: str | None = None  # NonIndexed (default) or Indexed
    suspend: bool | None = None
    pod_failure_policy: FreeDict | None = None
    success_policy: FreeDict | None = None
    pod_replacement_policy: str | None = None
    managed_by: str | None = None


class JobCondition(BaseCondition):
    last_probe_time: Time | None = None  # Complete, Failed, Suspended, FailureTarget, ...


class JobStatus(K8sModel):
    conditions: list[JobCondition] | None = None
    start_time: Time | None = None
    completion_time: Time | None = None
    active: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    terminating: int | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    uncounted_terminated_pods: FreeDict | None = None
    ready: int | None = None


class Job(K8sModel):
    api_version: str | None = "batch/v1"
    kind: str | None = "Job"
    metadata: ObjectMeta | None = None
    spec: JobSpec | None = None
    status: JobStatus | None = None


class JobTemplateSpec(K8sModel):
    metadata: ObjectMeta | None = None
    spec: JobSpec | None = None


class CronJobSpec(K8sModel):
    schedule: str | None = None  # cron syntax: "*/1 * * * *"
    time_zone: str | None = None
    starting_deadline_seconds: Int64 | None = None
    concurrency_policy: str | None = None  # Allow (default), Forbid, Replace
    suspend: bool | None = None
    job_template: JobTemplateSpec | None = None
    successful_jobs_history_limit: int | None = None  # default 3
    failed_jobs_history_limit: int | None = None  # default 1


class CronJobStatus(K8sModel):
    active: list[ObjectReference] | None = None  # Jobs currently running
    last_schedule_time: Time | None = None
    last_successful_time: Time | None = None


class CronJob(K8sModel):
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
